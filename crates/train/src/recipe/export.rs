//! Writing the trained model as a Hugging Face directory with agentworld's model card.

use std::path::Path;

use agentworld_model::loader::export::{ExportDtype, to_safetensors};
use agentworld_model::{Qwen35Moe, Qwen35MoeConfig};
use agentworld_text::{AGENTWORLD_TEMPLATE, Tokenizer};
use agentworld_world::Row;
use agentworld_world::row::write_jsonl_file;
use burn::tensor::backend::Backend;

use super::{DESCRIPTION, DemoRecipe, PROMPTS, write};
use crate::error::{Result, TrainError};
use crate::eval::{DomainSummary, state_format};
use crate::plot::loss_curve_svg;
use crate::tokenizer::tokenizer_config;
use crate::trainer::StepInfo;

/// The card's `thinking_budget` (tokens): the demo model reasons in one sentence (22 tokens
/// at the median of the held-out rows, 50 at most), so past 128 tokens its reasoning is a
/// loop, and `</think>` and the observation's opening tag are written for it. Set from those
/// lengths, not tuned on the evaluation.
pub const THINKING_BUDGET: usize = 128;

#[allow(clippy::too_many_arguments)]
pub(super) fn export_dir<B: Backend>(
    out: &Path,
    model: &Qwen35Moe<B>,
    config: &Qwen35MoeConfig,
    tokenizer_json: &str,
    test_rows: &[Row],
    recipe: &DemoRecipe,
    history: &[StepInfo],
    init_from: Option<&Path>,
) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| TrainError::io(out, e))?;
    let tokenizer = Tokenizer::from_bytes(tokenizer_json.as_bytes())?;
    let mut cfg = config.to_hf_json();
    cfg["torch_dtype"] = "bfloat16".into();
    cfg["eos_token_id"] = tokenizer.require_token_id("<|im_end|>")?.into();
    write(
        &out.join("config.json"),
        serde_json::to_string_pretty(&cfg).expect("json"),
    )?;
    let eos = tokenizer.stop_token_ids(&[]);
    let generation = serde_json::json!({
        "eos_token_id": eos,
        "pad_token_id": tokenizer.require_token_id("<|endoftext|>")?,
        "do_sample": false,
        "max_new_tokens": recipe.eval_max_tokens,
    });
    write(
        &out.join("generation_config.json"),
        serde_json::to_string_pretty(&generation).expect("json"),
    )?;
    write(
        &out.join("model.safetensors"),
        to_safetensors(model, ExportDtype::Bf16)?,
    )?;
    write(&out.join("tokenizer.json"), tokenizer_json)?;
    write(
        &out.join("tokenizer_config.json"),
        serde_json::to_string_pretty(&tokenizer_config()).expect("json"),
    )?;
    write(&out.join("chat_template.jinja"), AGENTWORLD_TEMPLATE)?;
    for (domain, prompt) in PROMPTS {
        let dir = out.join("prompts").join(domain);
        std::fs::create_dir_all(&dir).map_err(|e| TrainError::io(&dir, e))?;
        write(&dir.join("system_prompt.txt"), prompt)?;
    }
    write_jsonl_file(out.join("heldout.jsonl"), test_rows)?;
    let losses: Vec<(usize, f64)> = history.iter().map(|s| (s.step, s.loss)).collect();
    write(
        &out.join("training_loss.svg"),
        loss_curve_svg(&losses, "agentworld-demo training loss"),
    )?;
    let counts = config.param_counts();
    let card = serde_json::json!({
        "name": "agentworld-demo",
        "description": DESCRIPTION,
        "domains": PROMPTS.iter().map(|(d, _)| *d).collect::<Vec<_>>(),
        "state_formats": PROMPTS
            .iter()
            .filter_map(|(d, _)| state_format(d).map(|f| (d.to_string(), serde_json::Value::from(f))))
            .collect::<serde_json::Map<_, _>>(),
        "prompts_dir": "prompts",
        "max_new_tokens": recipe.eval_max_tokens,
        "copy_bias": recipe.copy_bias,
        "copy_bias_by_domain": recipe.copy_bias_by_domain,
        "copy_sources_by_domain": recipe.copy_sources_by_domain,
        "copy_confidence": recipe.copy_confidence,
        "loop_guard": recipe.loop_guard,
        "thinking_budget": THINKING_BUDGET,
        "target_in_thinking": recipe.target_in_thinking,
        "line_marker_by_domain": recipe
            .mark_named_lines
            .iter()
            .map(|d| (d.clone(), serde_json::Value::from(super::LINE_MARKER)))
            .collect::<serde_json::Map<_, _>>(),
        "observation_form_by_domain": recipe
            .patch_observations
            .iter()
            .map(|d| (d.clone(), serde_json::Value::from("patch")))
            .collect::<serde_json::Map<_, _>>(),
        "training": {
            "recipe": recipe,
            "parameters": counts.total,
            "active_parameters": counts.active,
            "steps": history.len(),
            "final_loss": history.last().map(|s| s.loss),
            "seconds": history.last().map(|s| s.elapsed_secs),
            "command": "agentworld train demo --out <dir>",
            // A warm start trained from an earlier run's weights: `steps` counts this run's.
            "init_from": init_from.map(|p| p.display().to_string()),
        },
    });
    write(
        &out.join("agentworld.json"),
        serde_json::to_string_pretty(&card).expect("json"),
    )
}

/// Records held-out figures in a model's card (`agentworld.json`, key `evaluation`), replacing
/// earlier ones. The card is rewritten through a temporary file, so a failure leaves the old
/// card whole. `copy_bias(domain)` is the copy prior each domain was decoded with; the
/// card's own `copy_confidence` and `loop_guard` are recorded beside it.
///
/// # Errors
/// The card is missing, is not JSON, or cannot be written.
pub fn record_evaluation(
    model_dir: &Path,
    rows_per_domain: usize,
    max_tokens: usize,
    copy_bias: &dyn Fn(&str) -> f32,
    named_copy_bias: &dyn Fn(&str) -> Option<f32>,
    evaluation: &[DomainSummary],
) -> Result<()> {
    let copy_bias: serde_json::Map<String, serde_json::Value> = evaluation
        .iter()
        .map(|d| (d.domain.clone(), copy_bias(&d.domain).into()))
        .collect();
    let named_copy_bias: serde_json::Map<String, serde_json::Value> = evaluation
        .iter()
        .filter_map(|d| Some((d.domain.clone(), named_copy_bias(&d.domain)?.into())))
        .collect();
    let card_path = model_dir.join("agentworld.json");
    let mut card: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&card_path).map_err(|e| TrainError::io(&card_path, e))?,
    )
    .map_err(|e| TrainError::Data(format!("{}: {e}", card_path.display())))?;
    // The engine decoded with the card's own gate, if it has one.
    let copy_confidence = card.get("copy_confidence").cloned();
    let loop_guard = card.get("loop_guard").cloned();
    let copy_sources = card.get("copy_sources_by_domain").cloned();
    card["evaluation"] = serde_json::json!({
        "rows_per_domain": rows_per_domain,
        "max_tokens": max_tokens,
        "copy_bias": copy_bias,
        "named_copy_bias": named_copy_bias,
        "copy_confidence": copy_confidence,
        "loop_guard": loop_guard,
        "copy_sources": copy_sources,
        "domains": evaluation,
        "command": "agentworld eval fidelity --model <dir>",
    });
    let tmp = model_dir.join("agentworld.json.tmp");
    write(&tmp, serde_json::to_string_pretty(&card).expect("json"))?;
    std::fs::rename(&tmp, &card_path).map_err(|e| TrainError::io(&card_path, e))
}
