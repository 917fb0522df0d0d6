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

/// Loads a model directory with a bar.
pub fn load_engine<B: burn::tensor::backend::Backend>(
    dir: &std::path::Path,
    device: &B::Device,
) -> anyhow::Result<agentworld_engine::Engine<B>> {
    use anyhow::Context;
    let pb = bar(0, "loading weights");
    let engine = agentworld_engine::Engine::<B>::load_dir(dir, device, &mut |done, total| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
    })
    .with_context(|| format!("loading the model in {}", dir.display()))?;
    pb.finish_and_clear();
    Ok(engine)
}
