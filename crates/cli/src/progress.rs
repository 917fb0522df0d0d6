//! Progress bars on stderr (hidden when stderr is not a terminal).

use indicatif::{ProgressBar, ProgressStyle};

/// A bar for loading `what` (tensors, rows, steps).
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {msg} [{bar:30}] {pos}/{len} {elapsed_precise} (eta {eta})",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// Loads a model directory with a bar, its weights held as `precision` resolves to
/// ([`crate::backend::Precision::resolve`]).
pub fn load_engine<B: burn::tensor::backend::Backend>(
    dir: &std::path::Path,
    device: &B::Device,
    precision: crate::backend::Precision,
) -> anyhow::Result<agentworld_engine::Engine<B>> {
    use anyhow::Context;
    let options = precision.resolve::<B>(dir, device)?;
    let pb = bar(0, &format!("loading weights ({})", describe(options)));
    let engine =
        agentworld_engine::Engine::<B>::load_dir_with(dir, device, options, &mut |done, total| {
            pb.set_length(total as u64);
            pb.set_position(done as u64);
        })
        .with_context(|| format!("loading the model in {}", dir.display()))?;
    pb.finish_and_clear();
    Ok(engine)
}

/// `bf16`, or `int8 over bf16`: how the weights are held, for messages.
pub fn describe(options: agentworld_model::LoadOptions) -> String {
    match options.quantize {
        agentworld_model::Quantize::None => options.dtype.to_string(),
        agentworld_model::Quantize::Int8 => format!("int8 blocks, the rest {}", options.dtype),
    }
}
