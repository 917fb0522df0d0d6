//! transformers reads our demo model exactly as we do: the fixture
//! (`tests/fixtures/demo_model_reference.json`, written by `tools/parity/demo_model_reference.py`
//! with PreTrainedTokenizerFast / AutoModelForCausalLM in float64) holds transformers' chat-template render,
//! prompt ids, last-position logits and greedy continuation for held-out rows.

use agentworld_engine::{Engine, GenerateParams};
use agentworld_model::TokenBatch;
use agentworld_tests::{demo_model, repo};
use agentworld_train::dataset::prompt_text;
use agentworld_world::row::read_jsonl_file;
use serde_json::Value;

type B = burn::backend::Flex;

#[test]
fn transformers_and_agentworld_agree_on_the_demo_model() {
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("tests/fixtures/demo_model_reference.json")).unwrap(),
    )
    .unwrap();
    let engine = Engine::<B>::load_dir(&demo_model(), &Default::default(), &mut |_, _| {}).unwrap();
    let rows = read_jsonl_file(demo_model().join("heldout.jsonl")).unwrap();
    for case in fixture["cases"].as_array().unwrap() {
        let row = rows
            .iter()
            .find(|r| r.id == case["row_id"].as_str().unwrap())
            .expect("row still held out");
        let text = prompt_text(row, &engine.template).unwrap();
        assert_eq!(
            text,
            case["prompt_text"].as_str().unwrap(),
            "chat template render"
        );
        let ids = engine.encode(&text).unwrap();
        let expected: Vec<u32> = case["prompt_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(ids, expected, "tokenizer");

        let logits = engine
            .model
            .forward_last(&TokenBatch::single(ids.clone()), None)
            .unwrap();
        let logits = logits.into_data().to_vec::<f32>().unwrap();
        let top_ids = case["top_ids"].as_array().unwrap();
        let top_logits = case["top_logits"].as_array().unwrap();
        for (id, want) in top_ids.iter().zip(top_logits) {
            let got = logits[id.as_u64().unwrap() as usize] as f64;
            let want = want.as_f64().unwrap();
            assert!(
                (got - want).abs() < 1e-4,
                "logit of {id}: {got} vs transformers {want}"
            );
        }
        let greedy: Vec<u32> = case["greedy"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        let g = engine
            .generate(
                &ids,
                &GenerateParams {
                    max_tokens: greedy.len(),
                    ..Default::default()
                },
                &mut |_| {},
            )
            .unwrap();
        // transformers keeps generating past <|im_end|> only if eos is not set; compare the common part.
        let n = g.token_ids.len().min(greedy.len());
        assert!(n > 0);
        assert_eq!(g.token_ids[..n], greedy[..n], "greedy continuation");
    }
}
