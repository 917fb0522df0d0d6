//! Finding a checkpoint's chat template and special tokens in its config files.

use serde_json::Value as Json;

use crate::error::{Error, Result};

/// Special-token names transformers passes to every chat template (its
/// `SPECIAL_TOKENS_ATTRIBUTES`); a name whose token is unset is left undefined.
pub const SPECIAL_TOKEN_NAMES: [&str; 7] = [
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
];

/// Reads the special tokens (`eos_token`, `pad_token`, ...) of a `tokenizer_config.json`.
///
/// Each may be a string or an added-token object with a `content` field; `null` and missing
/// ones are left out. Returns `(name, token)` pairs in [`SPECIAL_TOKEN_NAMES`] order.
///
/// # Errors
/// [`Error::Json`] if the bytes are not JSON, [`Error::Config`] if it is not an object.
pub fn special_tokens_from_tokenizer_config(bytes: &[u8]) -> Result<Vec<(String, String)>> {
    let config = parse_object(bytes)?;
    Ok(special_tokens(&config))
}

pub(crate) fn special_tokens(config: &serde_json::Map<String, Json>) -> Vec<(String, String)> {
    SPECIAL_TOKEN_NAMES
        .iter()
        .filter_map(|name| {
            let token = match config.get(*name)? {
                Json::String(s) => s.clone(),
                Json::Object(o) => o.get("content")?.as_str()?.to_owned(),
                _ => return None,
            };
            Some(((*name).to_owned(), token))
        })
        .collect()
}

pub(crate) fn parse_object(bytes: &[u8]) -> Result<serde_json::Map<String, Json>> {
    match serde_json::from_slice(bytes)? {
        Json::Object(o) => Ok(o),
        other => Err(Error::Config(format!(
            "expected a JSON object, found {}",
            kind(&other)
        ))),
    }
}

/// Picks a template from a `chat_template` field: a string, or a list of
/// `{"name", "template"}` entries (then `name` selects, `"default"` when `None`).
pub(crate) fn select_template(field: Option<&Json>, name: Option<&str>) -> Result<String> {
    match field {
        None | Some(Json::Null) => Err(Error::MissingChatTemplate(
            "no `chat_template` field".into(),
        )),
        Some(Json::String(s)) => match name {
            None | Some("default") => Ok(s.clone()),
            Some(other) => Err(Error::MissingChatTemplate(format!(
                "template {other:?} asked for, but the config has a single unnamed template"
            ))),
        },
        Some(Json::Array(entries)) => {
            let wanted = name.unwrap_or("default");
            let mut names = Vec::new();
            for entry in entries {
                let entry_name = entry.get("name").and_then(Json::as_str);
                let template = entry.get("template").and_then(Json::as_str);
                match (entry_name, template) {
                    (Some(n), Some(t)) if n == wanted => return Ok(t.to_owned()),
                    (Some(n), Some(_)) => names.push(n.to_owned()),
                    _ => {
                        return Err(Error::Config(
                            "chat_template list entries need string `name` and `template`".into(),
                        ));
                    }
                }
            }
            Err(Error::MissingChatTemplate(format!(
                "no template named {wanted:?} (have {names:?})"
            )))
        }
        Some(other) => Err(Error::Config(format!(
            "`chat_template` must be a string or a list, found {}",
            kind(other)
        ))),
    }
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn special_tokens_as_strings_or_objects() {
        let cfg = br#"{"bos_token": null, "eos_token": "<|im_end|>",
                       "pad_token": {"content": "<|endoftext|>", "special": true}, "unk_token": 3}"#;
        assert_eq!(
            special_tokens_from_tokenizer_config(cfg).unwrap(),
            vec![
                ("eos_token".to_owned(), "<|im_end|>".to_owned()),
                ("pad_token".to_owned(), "<|endoftext|>".to_owned())
            ]
        );
        assert!(matches!(
            special_tokens_from_tokenizer_config(b"[1]"),
            Err(Error::Config(_))
        ));
    }

    #[test]
    fn template_as_string_or_named_list() {
        let single = json!("{{ x }}");
        assert_eq!(select_template(Some(&single), None).unwrap(), "{{ x }}");
        assert!(select_template(Some(&single), Some("tool_use")).is_err());
        let list =
            json!([{"name": "default", "template": "D"}, {"name": "tool_use", "template": "T"}]);
        assert_eq!(select_template(Some(&list), None).unwrap(), "D");
        assert_eq!(select_template(Some(&list), Some("tool_use")).unwrap(), "T");
        let err = select_template(Some(&list), Some("rag"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"rag\"") && err.contains("tool_use"), "{err}");
        assert!(matches!(
            select_template(None, None),
            Err(Error::MissingChatTemplate(_))
        ));
        assert!(matches!(
            select_template(Some(&json!(1)), None),
            Err(Error::Config(_))
        ));
        assert!(matches!(
            select_template(Some(&json!([{"name": 1}])), None),
            Err(Error::Config(_))
        ));
    }
}
