//! `generation_config.json`: the sampling defaults and end-of-sequence ids a checkpoint ships.

use serde::{Deserialize, Deserializer};

use crate::error::Result;

/// The fields of a Hugging Face `generation_config.json` that matter for decoding.
///
/// Unknown keys are ignored and every field is optional, so any checkpoint's file parses.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct GenerationConfig {
    /// Ids that end generation. The file may hold one integer or a list; both become a list.
    #[serde(deserialize_with = "one_or_many")]
    pub eos_token_id: Vec<u32>,
    /// Beginning-of-sequence id, if any (Qwen has none).
    #[serde(deserialize_with = "first_of_one_or_many")]
    pub bos_token_id: Option<u32>,
    /// Padding id, if any.
    #[serde(deserialize_with = "first_of_one_or_many")]
    pub pad_token_id: Option<u32>,
    /// Whether sampling is on (`false` means greedy decoding).
    pub do_sample: Option<bool>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Nucleus sampling mass.
    pub top_p: Option<f32>,
    /// Top-k cut-off.
    pub top_k: Option<u32>,
    /// Min-p cut-off.
    pub min_p: Option<f32>,
    /// Repetition penalty (1.0 = none).
    pub repetition_penalty: Option<f32>,
    /// Default limit on generated tokens.
    pub max_new_tokens: Option<u32>,
}

impl GenerationConfig {
    /// Parses the bytes of a `generation_config.json`.
    ///
    /// # Errors
    /// [`crate::Error::Json`] if the bytes are not JSON or a known field has the wrong type.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Ok(serde_json::from_slice(bytes)?)
    }

    /// Reads and parses a `generation_config.json` file.
    ///
    /// # Errors
    /// [`crate::Error::Io`] if the file cannot be read, [`crate::Error::Json`] if it does not parse.
    #[cfg(feature = "native")]
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self> {
        Self::from_bytes(&crate::error::read_file(path.as_ref())?)
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(u32),
    Many(Vec<u32>),
}

fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<u32>, D::Error> {
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(id)) => vec![id],
        Some(OneOrMany::Many(ids)) => ids,
    })
}

fn first_of_one_or_many<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<u32>, D::Error> {
    Ok(one_or_many(d)?.first().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eos_as_list() {
        let cfg = GenerationConfig::from_bytes(
            br#"{"bos_token_id": 151643, "do_sample": true, "eos_token_id": [151645, 151643],
                 "pad_token_id": 151643, "temperature": 0.6, "top_k": 20, "top_p": 0.95,
                 "transformers_version": "4.51.0"}"#,
        )
        .unwrap();
        assert_eq!(cfg.eos_token_id, vec![151645, 151643]);
        assert_eq!(cfg.bos_token_id, Some(151643));
        assert_eq!(cfg.pad_token_id, Some(151643));
        assert_eq!(cfg.do_sample, Some(true));
        assert_eq!(cfg.temperature, Some(0.6));
        assert_eq!(cfg.top_k, Some(20));
        assert_eq!(cfg.top_p, Some(0.95));
        assert_eq!(cfg.max_new_tokens, None);
    }

    #[test]
    fn eos_as_int_null_or_missing() {
        let one = GenerationConfig::from_bytes(br#"{"eos_token_id": 248046}"#).unwrap();
        assert_eq!(one.eos_token_id, vec![248046]);
        let null = GenerationConfig::from_bytes(br#"{"eos_token_id": null, "bos_token_id": null}"#);
        assert_eq!(null.unwrap(), GenerationConfig::default());
        assert_eq!(
            GenerationConfig::from_bytes(b"{}").unwrap(),
            GenerationConfig::default()
        );
    }

    #[test]
    fn wrong_types_are_errors() {
        assert!(GenerationConfig::from_bytes(br#"{"eos_token_id": "x"}"#).is_err());
        assert!(GenerationConfig::from_bytes(br#"{"temperature": "hot"}"#).is_err());
        assert!(GenerationConfig::from_bytes(b"not json").is_err());
    }
}
