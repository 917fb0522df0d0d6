//! The real Qwen3 tokenizer (shared cases) through the `tokenizers` crate's pure-Rust regex
//! backend must give transformers' ids and decodes
//! (`tools/text/make_tokenizer_fixtures.py`).

#[path = "support/cases.rs"]
mod cases;

use agentworld_text::{GenerationConfig, Tokenizer};
use serde_json::Value;

const FIXTURE: &str = include_str!("fixtures/qwen3_tokenizer.json");

fn tokenizer() -> Tokenizer {
    Tokenizer::from_bytes(&cases::read_case_bytes(
        "qwen/qwen3-tokenizer/tokenizer.json",
    ))
    .unwrap()
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

#[test]
fn encode_and_decode_match_transformers() {
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    let tok = tokenizer();
    let cases = fixture["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for case in cases {
        let text = case["text"].as_str().unwrap();
        let want = ids(&case["ids"]);
        assert_eq!(tok.encode(text).unwrap(), want, "encode {text:?}");
        assert_eq!(
            tok.decode(&want, false).unwrap(),
            case["decoded"].as_str().unwrap(),
            "decode {text:?}"
        );
        assert_eq!(
            tok.decode(&want, true).unwrap(),
            case["decoded_skip_special"].as_str().unwrap(),
            "decode skipping specials {text:?}"
        );
    }
}

#[test]
fn special_ids_vocab_and_stop_ids() {
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    let tok = tokenizer();
    for (token, id) in fixture["token_ids"].as_object().unwrap() {
        assert_eq!(
            tok.token_to_id(token),
            Some(id.as_u64().unwrap() as u32),
            "{token}"
        );
    }
    assert_eq!(
        tok.vocab_size() as u64,
        fixture["vocab_size_with_added"].as_u64().unwrap()
    );
    // Qwen3's generation_config.json lists both ends of turn/text.
    let generation =
        GenerationConfig::from_bytes(br#"{"eos_token_id": [151645, 151643]}"#).unwrap();
    assert_eq!(
        tok.stop_token_ids(&generation.eos_token_id),
        vec![151645, 151643]
    );
    assert_eq!(tok.stop_token_ids(&[151667]), vec![151645, 151643, 151667]);
}

#[test]
fn streaming_decode_equals_full_decode() {
    let fixture: Value = serde_json::from_str(FIXTURE).unwrap();
    let tok = tokenizer();
    for case in fixture["cases"].as_array().unwrap() {
        let want = ids(&case["ids"]);
        for skip in [false, true] {
            let mut stream = tok.decode_stream(skip);
            let mut text = String::new();
            for id in &want {
                if let Some(delta) = stream.step(*id).unwrap() {
                    assert!(!delta.contains('\u{FFFD}'), "split character in {delta:?}");
                    text.push_str(&delta);
                }
            }
            text.extend(stream.finish().unwrap());
            let key = if skip {
                "decoded_skip_special"
            } else {
                "decoded"
            };
            assert_eq!(text, case[key].as_str().unwrap());
        }
    }
}

#[cfg(feature = "native")]
#[test]
fn from_file_reads_the_same_tokenizer() {
    let path = cases::cases_dir().join("qwen/qwen3-tokenizer/tokenizer.json");
    let tok = Tokenizer::from_file(&path).unwrap();
    assert_eq!(tok.encode("Hello world").unwrap(), vec![9707, 1879]);
    let missing = Tokenizer::from_file(path.with_file_name("nope.json")).unwrap_err();
    assert!(
        matches!(missing, agentworld_text::Error::Io { .. }),
        "{missing}"
    );
}
