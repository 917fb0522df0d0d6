//! What the page knows about a model: its card (`agentworld.json`: domains, state formats,
//! prompts), its layers (`config.json`), read from a model folder served with the app
//! (`public/models/<name>/`). Without one, the built-in prompts are used.

use std::collections::HashMap;

use agentworld_world::Domain;
use agentworld_world::diff::ObservationForm;
use serde_json::Value;

/// A model's profile.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profile {
    /// The model's name (`agentworld-demo`); a served model of this name uses this profile.
    pub name: String,
    /// The domains it was trained on (empty: all).
    pub domains: Vec<String>,
    /// The state format it reads, per domain (`android-compact`, `axtree`, `osworld-tsv`).
    pub state_formats: HashMap<String, String>,
    /// Its own system prompts, per domain.
    pub prompts: HashMap<String, String>,
    /// Per layer: `linear_attention` (Gated DeltaNet) or `full_attention`.
    pub layer_types: Vec<String>,
    /// Number of routed experts.
    pub experts: usize,
    /// Experts chosen per token.
    pub experts_per_token: usize,
    /// The card's generation limit.
    pub max_new_tokens: Option<usize>,
    /// The card's copy prior (nats), for domains without their own.
    pub copy_bias: f32,
    /// The card's copy prior per domain.
    pub copy_bias_by_domain: HashMap<String, f32>,
    /// What the model writes per domain (`observation_form_by_domain`); not listed: whole
    /// states.
    pub observation_forms: HashMap<String, ObservationForm>,
}

/// Where the demo model is served from, relative to the app.
pub const DEMO_DIR: &str = "public/models/agentworld-demo";

impl Profile {
    /// The profile in `card` (agentworld.json) and `config` (config.json). Prompts are added
    /// separately (they are files).
    pub fn parse(card: &str, config: &str) -> Result<Profile, String> {
        let card: Value =
            serde_json::from_str(card).map_err(|e| format!("agentworld.json: {e}"))?;
        let config: Value =
            serde_json::from_str(config).map_err(|e| format!("config.json: {e}"))?;
        let config = config.get("text_config").unwrap_or(&config);
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default()
        };
        let usize_of = |v: &Value| v.as_u64().map(|n| n as usize);
        Ok(Profile {
            name: card["name"].as_str().unwrap_or("").to_string(),
            domains: strings(&card["domains"]),
            state_formats: card["state_formats"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect()
                })
                .unwrap_or_default(),
            prompts: HashMap::new(),
            layer_types: strings(&config["layer_types"]),
            experts: usize_of(&config["num_experts"]).unwrap_or(0),
            experts_per_token: usize_of(&config["num_experts_per_tok"]).unwrap_or(0),
            max_new_tokens: usize_of(&card["max_new_tokens"]),
            copy_bias: card["copy_bias"].as_f64().unwrap_or(0.0) as f32,
            copy_bias_by_domain: card["copy_bias_by_domain"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_f64()? as f32)))
                        .collect()
                })
                .unwrap_or_default(),
            observation_forms: card
                .get("observation_form_by_domain")
                .cloned()
                .map(serde_json::from_value)
                .transpose()
                .map_err(|e| format!("agentworld.json: observation_form_by_domain: {e}"))?
                .unwrap_or_default(),
        })
    }

    /// What the model writes as its observation in `domain`, as `agentworld simulate` reads
    /// the card (`ModelCard::observation_form_for`).
    pub fn observation_form(&self, domain: Domain) -> ObservationForm {
        self.observation_forms
            .get(domain.as_str())
            .copied()
            .unwrap_or_default()
    }

    /// The system prompt for `domain`: the model's own, else the built-in one.
    pub fn system_prompt(&self, domain: Domain) -> String {
        self.prompts
            .get(domain.as_str())
            .cloned()
            .unwrap_or_else(|| agentworld_world::prompts::builtin(domain).to_string())
    }

    /// The state format the model reads for `domain` (`None`: states as written).
    pub fn state_format(&self, domain: Domain) -> Option<&str> {
        self.state_formats.get(domain.as_str()).map(String::as_str)
    }

    /// The copy prior the model is decoded with in `domain` (nats; 0: plain decoding), as
    /// `agentworld simulate` reads the card (`ModelCard::copy_bias_for`).
    pub fn copy_bias(&self, domain: Domain) -> f32 {
        self.copy_bias_by_domain
            .get(domain.as_str())
            .copied()
            .unwrap_or(self.copy_bias)
    }

    /// Whether the model was trained on `domain`.
    pub fn knows(&self, domain: Domain) -> bool {
        self.domains.is_empty() || self.domains.iter().any(|d| d == domain.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_profile() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../public/models/agentworld-demo"
        );
        let card = std::fs::read_to_string(format!("{dir}/agentworld.json")).unwrap();
        let config = std::fs::read_to_string(format!("{dir}/config.json")).unwrap();
        let p = Profile::parse(&card, &config).unwrap();
        assert_eq!(p.name, "agentworld-demo");
        assert_eq!(p.state_format(Domain::Android), Some("android-compact"));
        assert_eq!(p.state_format(Domain::Web), Some("axtree"));
        assert_eq!(p.state_format(Domain::Os), Some("osworld-tsv"));
        assert_eq!(p.state_format(Domain::Terminal), None);
        assert!(p.knows(Domain::Android) && p.knows(Domain::Web) && p.knows(Domain::Os));
        assert!(!p.knows(Domain::Search));
        assert_eq!(p.layer_types.len(), 4);
        assert_eq!((p.experts, p.experts_per_token), (8, 2));
        assert!(p.system_prompt(Domain::Web).contains("Web World Model"));
        // The card's copy prior: 15 nats for Web and OS trees and for terminal screens (held
        // to the screen, `copy_sources_by_domain`), 4 for Android (whose edits the model
        // writes with more confidence).
        assert_eq!(p.copy_bias(Domain::Web), 15.0);
        assert_eq!(p.copy_bias(Domain::Os), 15.0);
        assert_eq!(p.copy_bias(Domain::Android), 4.0);
        assert_eq!(p.copy_bias(Domain::Terminal), 15.0);
    }

    #[test]
    fn a_card_that_writes_patches_says_so_per_domain() {
        let config = r#"{"layer_types": []}"#;
        let p = Profile::parse(
            r#"{"observation_form_by_domain": {"web": "patch"}}"#,
            config,
        )
        .unwrap();
        assert_eq!(p.observation_form(Domain::Web), ObservationForm::Patch);
        assert_eq!(p.observation_form(Domain::Os), ObservationForm::Full);
        let bad = Profile::parse(r#"{"observation_form_by_domain": {"web": "diff"}}"#, config);
        assert!(bad.unwrap_err().contains("observation_form_by_domain"));
    }
}
