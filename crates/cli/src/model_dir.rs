//! What a local model directory says about a request, for every command that runs one
//! (`simulate`, `rollout`, `eval infer`): its card (`agentworld.json`), its system prompts,
//! and the state converted to the representation it reads.

use agentworld_engine::ModelCard;
use agentworld_world::state::for_model;
use agentworld_world::{Domain, PromptSet};
use anyhow::{Context, Result, bail};

/// The card (`agentworld.json`) of a local model directory, which must hold a model.
///
/// # Errors
/// A path that does not exist, is not a directory or has no `config.json`, each said as such.
pub fn model_card(model_dir: &std::path::Path) -> Result<Option<ModelCard>> {
    let what = if !model_dir.exists() {
        Some("does not exist")
    } else if !model_dir.is_dir() {
        Some("is not a directory")
    } else if !model_dir.join("config.json").is_file() {
        Some("is not a model directory (no config.json)")
    } else {
        None
    };
    if let Some(what) = what {
        bail!(
            "no model at {}: it {what}; pass --model DIR (a Hugging Face folder: config.json, tokenizer.json, *.safetensors) or --endpoint URL, or build the demo model with `agentworld train demo`",
            model_dir.display()
        );
    }
    match std::fs::read_to_string(model_dir.join("agentworld.json")) {
        Ok(t) => Ok(Some(serde_json::from_str(&t).with_context(|| {
            format!("{}/agentworld.json", model_dir.display())
        })?)),
        Err(_) => Ok(None),
    }
}

/// The system prompts: `--prompts-dir`, else the model card's own prompts (the demo model's),
/// else the built-in ones.
pub fn prompt_set(
    prompts_dir: Option<&std::path::Path>,
    card: Option<&ModelCard>,
    model_dir: &std::path::Path,
) -> Result<PromptSet> {
    Ok(match (prompts_dir, card) {
        (Some(dir), _) => PromptSet::from_dir(dir)?,
        (
            None,
            Some(ModelCard {
                prompts_dir: Some(p),
                ..
            }),
        ) => PromptSet::from_dir(model_dir.join(p))?,
        _ => PromptSet::builtin(),
    })
}

/// The state in the representation the model expects, from its card's `state_formats`
/// ([`for_model`]: markup is converted, anything else is sent as written); each conversion is
/// noted on stderr.
pub fn prepare_state(domain: Domain, text: String, card: Option<&ModelCard>) -> Result<String> {
    let format = card.and_then(|c| c.state_formats.get(domain.as_str()));
    let prepared = for_model(domain, &text, format.map(String::as_str))?;
    for note in &prepared.notes {
        eprintln!("note: state: {note}");
    }
    Ok(prepared.text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths;
    use agentworld_world::state::Registry;

    fn card(domain: &str, format: &str) -> ModelCard {
        let mut card = ModelCard::default();
        card.state_formats.insert(domain.into(), format.into());
        card
    }

    #[test]
    fn states_are_converted_to_the_format_the_card_asks_for() {
        let root = paths::repo_root().join("examples");
        let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
        let web = prepare_state(
            Domain::Web,
            read("web/shop.html"),
            Some(&card("web", "axtree")),
        )
        .unwrap();
        assert!(web.starts_with("RootWebArea"), "{web}");
        let os = prepare_state(
            Domain::Os,
            read("os/osworld_a11y.xml"),
            Some(&card("os", "osworld-tsv")),
        )
        .unwrap();
        assert!(os.starts_with("tag\tname\ttext"), "{os}");
        let parsed = Registry::standard().parse("osworld-tsv", &os).unwrap();
        assert!(parsed.tree.len() > 3, "{os}");
        // Without the card's word, or for text states, the state goes as written.
        let html = read("web/shop.html");
        assert_eq!(
            prepare_state(Domain::Web, html.clone(), None).unwrap(),
            html
        );
        let tsv = read("os/desktop.tsv");
        assert_eq!(
            prepare_state(Domain::Os, tsv.clone(), Some(&card("os", "osworld-tsv"))).unwrap(),
            tsv
        );
        // Broken markup: an error that says what the state looked like.
        let err = prepare_state(
            Domain::Os,
            "<desktop><frame".into(),
            Some(&card("os", "osworld-tsv")),
        )
        .unwrap_err();
        assert!(
            format!("{err:#}").contains("desktop accessibility tree"),
            "{err:#}"
        );
    }
}
