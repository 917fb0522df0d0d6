//! The demo recipe end to end at toy size: data in every domain from the real cases, a stop
//! part-way, a resume that reuses the data and tokenizer, export, and the held-out evaluation.

use std::path::PathBuf;

use agentworld_train::recipe::{BuildOptions, CopyStage, DemoRecipe, DemoSources, build_demo};
use agentworld_world::row::read_jsonl_file;

fn cases() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cases");
    dir.join("android").is_dir().then_some(dir)
}

fn tiny_recipe() -> DemoRecipe {
    let mut r = DemoRecipe {
        terminal_rows: 20,
        android_rows: 20,
        web_rows: 20,
        os_rows: 20,
        vocab_size: 700,
        eval_rows_per_domain: 2,
        eval_batch: 8,
        eval_max_tokens: 12,
        checkpoint_every: 2,
        copy_span: (4, 12),
        copy_stages: vec![
            CopyStage {
                steps: 1,
                span: (2, 6),
                vocab: 16,
                from_states: false,
            },
            CopyStage {
                steps: 1,
                span: (4, 8),
                vocab: 0,
                from_states: true,
            },
        ],
        rename_share: 0.5,
        restate_edits: true,
        target_in_thinking: vec!["web".into(), "os".into()],
        mark_named_lines: vec!["web".into()],
        patch_observations: vec!["os".into()],
        android_synthetic_share: 0.5,
        web_synthetic_share: 0.5,
        os_synthetic_share: 0.5,
        probe_every: 2,
        probe_rows_per_domain: 2,
        probe_generated_rows_per_domain: 1,
        ..Default::default()
    };
    r.model = serde_json::json!({
        "hidden_size": 32, "num_hidden_layers": 2,
        "layer_types": ["linear_attention", "full_attention"],
        "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
        "linear_num_key_heads": 1, "linear_num_value_heads": 2,
        "linear_key_head_dim": 16, "linear_value_head_dim": 16, "linear_conv_kernel_dim": 4,
        "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
        "shared_expert_intermediate_size": 32, "max_position_embeddings": 2048,
        "rms_norm_eps": 1e-6, "tie_word_embeddings": true
    });
    r.train.steps = 5;
    r.train.length_ramp = Some(agentworld_train::trainer::LengthRamp {
        steps: 2,
        start_tokens: 300,
    });
    r.train.warmup_steps = 1;
    r.train.tokens_per_batch = 1400;
    r
}

#[test]
fn stop_resume_export_and_evaluate_every_domain() {
    let Some(cases) = cases() else {
        eprintln!("skipped: ../shared/cases is not there");
        return;
    };
    let recipe = tiny_recipe();
    let dir = tempfile::tempdir().unwrap();
    let (work, out) = (dir.path().join("work"), dir.path().join("model"));
    let sources = DemoSources::from_cases(&cases);
    let mut notes = Vec::new();
    let stopped = build_demo::<burn::backend::Flex>(
        &Default::default(),
        &recipe,
        &sources,
        &work,
        &out,
        &BuildOptions {
            stop_after_steps: Some(3),
            ..Default::default()
        },
        &mut |e| notes.push(format!("{e:?}")),
    )
    .unwrap();
    assert!(!stopped.finished);
    assert!(
        !out.join("model.safetensors").exists(),
        "nothing exported yet"
    );
    let train_before = std::fs::read(work.join("train.jsonl")).unwrap();
    assert!(
        notes.iter().any(|n| n.contains("copy examples")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("content words renamed in")),
        "{notes:?}"
    );
    // Some Web or OS training row holds a local edit, and its thinking restates it.
    let rows = std::str::from_utf8(&train_before).unwrap();
    assert!(rows.contains(" It becomes: "), "no restated edit");
    // The Web and OS rows' thinking opens with the element the action names, held-out too.
    let held = std::fs::read_to_string(work.join("heldout.jsonl")).unwrap();
    for text in [rows, held.as_str()] {
        assert!(
            text.contains(r#""thinking":"Target: "#),
            "no grounded thinking"
        );
    }
    // The probe looked at step 2: a line per look, every domain in it.
    let probe = std::fs::read_to_string(work.join("probe.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(probe.lines().next().unwrap()).unwrap();
    assert_eq!(first["step"], 2);
    assert_eq!(first["domains"].as_array().unwrap().len(), 4, "{first}");
    // ... and generated from one held-out row a domain, scored as the final evaluation is.
    let generated = first["generated"].as_array().unwrap();
    assert_eq!(generated.len(), 4, "{first}");
    assert!(generated.iter().all(|d| d["rows"] == 1), "{first}");
    assert!(
        notes
            .iter()
            .any(|n| n.contains("held-out, generated, step 2")),
        "{notes:?}"
    );
    // Made-up states went into every GUI domain's training rows.
    let train_text = String::from_utf8(std::fs::read(work.join("train.jsonl")).unwrap()).unwrap();
    for domain in ["android", "web", "os"] {
        assert!(
            train_text
                .lines()
                .any(|l| l.contains("\"source\":\"synthetic\"")
                    && l.contains(&format!("\"task\":\"{domain}\""))),
            "no made-up {domain} row"
        );
    }

    let mut steps = Vec::new();
    let done = build_demo::<burn::backend::Flex>(
        &Default::default(),
        &recipe,
        &sources,
        &work,
        &out,
        &BuildOptions {
            resume: true,
            ..Default::default()
        },
        &mut |e| {
            if let agentworld_train::recipe::BuildEvent::Step(s, _) = e {
                steps.push(s.step)
            }
        },
    )
    .unwrap();
    assert!(done.finished);
    assert_eq!(
        steps,
        vec![3, 4],
        "the resumed run trains only the missing steps"
    );
    assert_eq!(
        std::fs::read(work.join("train.jsonl")).unwrap(),
        train_before,
        "the data is read back, not made again"
    );

    // Every domain is in the held-out file, the prompts folder, the card and the evaluation.
    let held = read_jsonl_file(out.join("heldout.jsonl")).unwrap();
    let card: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("agentworld.json")).unwrap())
            .unwrap();
    for domain in ["terminal", "android", "web", "os"] {
        assert!(
            held.iter().any(|r| r.task.ends_with(domain)),
            "no held-out {domain} row"
        );
        assert!(
            out.join(format!("prompts/{domain}/system_prompt.txt"))
                .is_file()
        );
        assert!(
            card["domains"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d == domain),
            "{card}"
        );
        assert!(
            done.evaluation.iter().any(|d| d.domain == domain),
            "no figures for {domain}"
        );
    }
    assert_eq!(card["state_formats"]["web"], "axtree");
    assert_eq!(card["state_formats"]["os"], "osworld-tsv");
    assert_eq!(card["target_in_thinking"], serde_json::json!(["web", "os"]));
    assert_eq!(
        card["line_marker_by_domain"],
        serde_json::json!({"web": "^"})
    );
    assert_eq!(
        card["observation_form_by_domain"],
        serde_json::json!({"os": "patch"})
    );
    // The card loads as the engine reads it.
    let read: agentworld_engine::ModelCard = serde_json::from_value(card.clone()).unwrap();
    assert_eq!(
        read.observation_form_for(Some("os")),
        agentworld_world::diff::ObservationForm::Patch
    );
    assert_eq!(card["training"]["steps"], 5);
    assert!(card["training"]["init_from"].is_null(), "{card}");

    // A warm start from the finished run, at a learning rate too small to move a bf16 weight,
    // exports that run's weights again: they came over from the checkpoint, not from a fresh
    // initialisation.
    let work2 = dir.path().join("work2");
    std::fs::create_dir_all(&work2).unwrap();
    for f in ["train.jsonl", "heldout.jsonl", "tokenizer.json"] {
        std::fs::copy(work.join(f), work2.join(f)).unwrap();
    }
    let mut warm = recipe.clone();
    warm.train.steps = 1;
    warm.train.learning_rate = 1e-20;
    warm.copy_stages.clear();
    warm.eval_rows_per_domain = 1;
    let out2 = dir.path().join("model2");
    let mut notes = Vec::new();
    build_demo::<burn::backend::Flex>(
        &Default::default(),
        &warm,
        &sources,
        &work2,
        &out2,
        &BuildOptions {
            resume: true,
            init_from: Some(work.join("checkpoints")),
            ..Default::default()
        },
        &mut |e| notes.push(format!("{e:?}")),
    )
    .unwrap();
    assert!(
        notes.iter().any(|n| n.contains("weights from")),
        "{notes:?}"
    );
    assert!(
        std::fs::read(out2.join("model.safetensors")).unwrap()
            == std::fs::read(out.join("model.safetensors")).unwrap(),
        "the warm-started model is not the finished run's"
    );
    let card2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out2.join("agentworld.json")).unwrap())
            .unwrap();
    assert!(
        card2["training"]["init_from"]
            .as_str()
            .is_some_and(|p| p.ends_with("checkpoints")),
        "{card2}"
    );

    // So does a warm start from the exported model folder: its bf16 weights, read back through
    // the model loader, round to themselves.
    let out5 = dir.path().join("model5");
    build_demo::<burn::backend::Flex>(
        &Default::default(),
        &warm,
        &sources,
        &work2,
        &out5,
        &BuildOptions {
            resume: true,
            init_from: Some(out.clone()),
            ..Default::default()
        },
        &mut |_| {},
    )
    .unwrap();
    assert!(
        std::fs::read(out5.join("model.safetensors")).unwrap()
            == std::fs::read(out.join("model.safetensors")).unwrap(),
        "the model warm-started from the exported folder is not the finished run's"
    );

    // A checkpoint of a run with another tokenizer is refused before any training.
    let other = dir.path().join("other");
    std::fs::create_dir_all(other.join("checkpoints")).unwrap();
    let latest = std::fs::read_to_string(work.join("checkpoints/latest")).unwrap();
    let step_dir = other.join("checkpoints").join(latest.trim());
    std::fs::create_dir_all(&step_dir).unwrap();
    for f in ["model.bin", "state.json"] {
        std::fs::copy(
            work.join("checkpoints").join(latest.trim()).join(f),
            step_dir.join(f),
        )
        .unwrap();
    }
    std::fs::write(other.join("tokenizer.json"), "{\"model\": {}}").unwrap();
    let err = build_demo::<burn::backend::Flex>(
        &Default::default(),
        &warm,
        &sources,
        &work2,
        &dir.path().join("model3"),
        &BuildOptions {
            resume: true,
            init_from: Some(step_dir.clone()),
            ..Default::default()
        },
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("tokenizer"), "{err}");
    assert!(!dir.path().join("model3").exists(), "nothing written");

    // A checkpoint in the run's own checkpoint directory is refused: the run would overwrite it.
    let err = build_demo::<burn::backend::Flex>(
        &Default::default(),
        &warm,
        &sources,
        &work2,
        &dir.path().join("model4"),
        &BuildOptions {
            resume: true,
            init_from: Some(work2.join("checkpoints")),
            ..Default::default()
        },
        &mut |_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("own checkpoint directory"), "{err}");
}
