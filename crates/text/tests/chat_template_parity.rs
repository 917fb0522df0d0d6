//! Byte-for-byte parity of chat-template rendering with transformers' `apply_chat_template`.
//!
//! The expected strings come from `tools/text/make_chat_template_fixtures.py` (transformers
//! 5.x, Jinja2); the templates are read from the shared cases folder and from
//! `crates/text/templates/`.

#[path = "support/cases.rs"]
mod cases;

use agentworld_text::{ChatTemplate, Error, RenderOptions, special_tokens_from_tokenizer_config};
use serde_json::Value;

const FIXTURE: &str = include_str!("fixtures/chat_templates.json");

fn template(name: &str, spec: &Value) -> ChatTemplate {
    let path = spec["path"].as_str().unwrap();
    let config = cases::read_case_bytes("qwen/qwen3-tokenizer/tokenizer_config.json");
    let specials = special_tokens_from_tokenizer_config(&config).unwrap();
    let template = match spec["root"].as_str().unwrap() {
        "repo" => {
            let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../..")
                .join(path);
            ChatTemplate::new(std::fs::read_to_string(file).unwrap()).unwrap()
        }
        _ if path.ends_with("tokenizer_config.json") => {
            return ChatTemplate::from_tokenizer_config(&cases::read_case_bytes(path)).unwrap();
        }
        _ => ChatTemplate::new(cases::read_case(path)).unwrap(),
    };
    let _ = name;
    template.with_special_tokens(specials)
}

fn options(case: &Value) -> RenderOptions {
    let mut opts = RenderOptions::new()
        .with_generation_prompt(case["add_generation_prompt"].as_bool().unwrap());
    if let Some(tools) = case.get("tools").and_then(Value::as_array) {
        opts = opts.with_tools(tools.clone());
    }
    if let Some(kwargs) = case.get("kwargs").and_then(Value::as_object) {
        for (k, v) in kwargs {
            match (k.as_str(), v) {
                ("enable_thinking", Value::Bool(b)) => opts = opts.with_thinking(*b),
                _ => opts = opts.with_var(k.clone(), v.clone()),
            }
        }
    }
    opts
}

#[test]
fn renders_match_transformers_byte_for_byte() {
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    let templates: Vec<(String, ChatTemplate)> = fixture["templates"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, spec)| (name.clone(), template(name, spec)))
        .collect();
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in fixture["cases"].as_array().unwrap() {
        let case_name = case["name"].as_str().unwrap();
        let messages = case["messages"].as_array().unwrap();
        let opts = options(case);
        for (name, template) in &templates {
            let expected = &case["expected"][name.as_str()];
            let got = template.render(messages, &opts);
            checked += 1;
            match (expected.get("text").and_then(Value::as_str), got) {
                (Some(want), Ok(got)) if got == want => {}
                (Some(want), Ok(got)) => failures.push(format!(
                    "{case_name} / {name}: render differs\n--- want\n{want:?}\n--- got\n{got:?}"
                )),
                (Some(_), Err(err)) => failures.push(format!("{case_name} / {name}: error {err}")),
                (None, Ok(got)) => failures.push(format!(
                    "{case_name} / {name}: expected error {:?}, got {got:?}",
                    expected["error"]
                )),
                (None, Err(err)) => {
                    // A raise_exception message must match exactly; other Jinja errors only
                    // need to be errors (the wording is engine-specific).
                    if expected["raised"] == Value::Bool(true) {
                        let want = expected["error"].as_str().unwrap();
                        if !matches!(&err, Error::TemplateRaised(m) if m == want) {
                            failures.push(format!(
                                "{case_name} / {name}: want raise {want:?}, got {err}"
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(checked >= 60, "fixture has only {checked} renders");
    assert!(
        failures.is_empty(),
        "{} of {checked} renders differ:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn bundled_agentworld_template_is_the_file_in_templates() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/agentworld.jinja");
    assert_eq!(
        agentworld_text::AGENTWORLD_TEMPLATE,
        std::fs::read_to_string(file).unwrap()
    );
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    let case = &fixture["cases"][0];
    let got = ChatTemplate::agentworld()
        .render(case["messages"].as_array().unwrap(), &options(case))
        .unwrap();
    assert_eq!(
        got,
        case["expected"]["agentworld"]["text"].as_str().unwrap()
    );
}

#[cfg(feature = "native")]
#[test]
fn from_dir_prefers_chat_template_jinja_and_reads_special_tokens() {
    let msgs = [agentworld_text::ChatMessage::user("hi")];
    let opts = RenderOptions::new().with_generation_prompt(true);
    // The shared Qwen3 tokenizer folder has only tokenizer_config.json.
    let from_config =
        ChatTemplate::from_dir(cases::cases_dir().join("qwen/qwen3-tokenizer")).unwrap();
    assert_eq!(
        from_config.render(&msgs, &opts).unwrap(),
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tokenizer_config.json"),
        r#"{"chat_template": "from config", "eos_token": "<|im_end|>"}"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("chat_template.json"),
        r#"{"chat_template": "from json {{ eos_token }}"}"#,
    )
    .unwrap();
    let t = ChatTemplate::from_dir(dir.path()).unwrap();
    assert_eq!(t.render(&msgs, &opts).unwrap(), "from json <|im_end|>");
    std::fs::write(
        dir.path().join("chat_template.jinja"),
        "from jinja {{ eos_token }}\n",
    )
    .unwrap();
    let t = ChatTemplate::from_dir(dir.path()).unwrap();
    assert_eq!(t.render(&msgs, &opts).unwrap(), "from jinja <|im_end|>");

    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        ChatTemplate::from_dir(empty.path()),
        Err(Error::MissingChatTemplate(_))
    ));
}
