//! `agentworld bench`: the speed bench runs end to end on a tiny model, reads the PyTorch side's
//! result line, and prints ratios and the machine-readable summary. The PyTorch side is stood in
//! for by a script that prints fixed figures (CI has no torch), so the ratios are known.

mod common;

use common::{agentworld, text};

const TINY: &str = r#"{"model_type": "qwen3_5_moe_text", "vocab_size": 300, "hidden_size": 32,
 "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16,
 "linear_num_key_heads": 1, "linear_num_value_heads": 2, "linear_key_head_dim": 8,
 "linear_value_head_dim": 8, "num_experts": 4, "num_experts_per_tok": 2,
 "moe_intermediate_size": 16, "shared_expert_intermediate_size": 16,
 "full_attention_interval": 2, "max_position_embeddings": 512}"#;

fn summary_field(out: &str, key: &str) -> String {
    let line = out
        .lines()
        .find(|l| l.starts_with("summary "))
        .unwrap_or_else(|| panic!("no summary line in:\n{out}"));
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key} in {line}"))
        .to_string()
}

fn small_run() -> Vec<String> {
    [
        "bench",
        "--threads",
        "1",
        "--prompt-tokens",
        "32",
        "--decode-tokens",
        "4",
        "--batch",
        "2",
        "--batch-prompt-tokens",
        "8",
        "--repeats",
        "1",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn bench_prints_figures_and_a_summary_without_torch() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tiny.json");
    std::fs::write(&config, TINY).unwrap();
    let mut args = small_run();
    args.extend(["--no-torch".into(), "--synthetic".into()]);
    args.push(config.display().to_string());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = agentworld(&args);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    for figure in [
        "prefill tok/s",
        "decode tok/s (1 stream)",
        "decode tok/s (batch)",
    ] {
        assert!(stdout.contains(figure), "{figure} missing:\n{stdout}");
    }
    assert_eq!(summary_field(&stdout, "model"), "tiny");
    assert_eq!(summary_field(&stdout, "decode_vs_torch"), "n/a");
    assert_eq!(summary_field(&stdout, "batch2_vs_torch"), "n/a");
    let roofline: f64 = summary_field(&stdout, "roofline").parse().unwrap();
    assert!(roofline > 0.0 && roofline < 1.5, "{roofline}");
}

#[test]
#[cfg(unix)]
fn bench_divides_by_the_pytorch_side() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tiny.json");
    std::fs::write(&config, TINY).unwrap();
    // Stands in for python: checks it was handed the plan and the synthetic config, then
    // prints figures one millionth of any real engine's, so every ratio is far above 1.
    let fake = dir.path().join("fake-python");
    std::fs::write(
        &fake,
        "#!/bin/sh\ncase \"$*\" in *--synthetic*--plan*) ;; *) echo \"bad args: $*\" >&2; exit 3;; esac\n\
         echo 'loading...'\n\
         echo '{\"engine\": \"fake torch\", \"load_secs\": 1000.0, \"peak_rss_delta_bytes\": null, \
         \"weight_bytes\": 1, \"prefill_tok_s\": 0.000001, \"ttft_secs\": 1000.0, \
         \"decode_tok_s\": 0.000001, \"batch_decode_tok_s\": 0.000001, \"experts\": \"eager\"}'\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut args = small_run();
    args.extend(["--python".into(), fake.display().to_string()]);
    args.extend(["--synthetic".into(), config.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = agentworld(&args);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("fake torch (experts: eager)"), "{stdout}");
    for key in ["decode_vs_torch", "prefill_vs_torch", "batch2_vs_torch"] {
        let ratio: f64 = summary_field(&stdout, key).parse().unwrap();
        assert!(ratio > 1000.0, "{key}={ratio}");
    }
}

/// Two models are benched one after the other, each in its own process, and both summaries
/// come out at the end.
#[test]
fn bench_runs_several_models_apart() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        dir.path().join("first.json"),
        dir.path().join("second.json"),
    );
    std::fs::write(&a, TINY).unwrap();
    std::fs::write(&b, TINY).unwrap();
    let mut args = small_run();
    args.push("--no-torch".into());
    for p in [&a, &b] {
        args.extend(["--synthetic".into(), p.display().to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = agentworld(&args);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let summaries: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("summary "))
        .collect();
    assert_eq!(summaries.len(), 2, "{stdout}");
    assert!(summaries[0].contains("model=first") && summaries[1].contains("model=second"));
}

#[test]
fn bench_rejects_bad_settings_with_a_reason() {
    let out = agentworld(&["bench", "--prompt-tokens", "4", "--no-torch"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--prompt-tokens"));
    // bf16 now runs on the CPU; int8 still runs there only.
    let out = agentworld(&[
        "bench",
        "--dtype",
        "int8",
        "--backend",
        "cuda",
        "--no-torch",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("on the CPU"),
        "{}",
        text(&out.stderr)
    );
}
