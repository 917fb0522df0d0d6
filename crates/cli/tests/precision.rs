//! `--dtype`, `--quantize` and the memory plan, as a user meets them: the real binary, the demo
//! model, and config.json-only folders of the released shapes.

mod common;
use common::{agentworld, repo, text};

/// A folder holding `tools/bench/NAME` as its config.json and nothing else.
fn config_only(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("tools/bench").join(name),
        dir.path().join("config.json"),
    )
    .unwrap();
    dir
}

/// `weights_gib` of a `memory ...` line.
fn field(line: &str, key: &str) -> f64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {line}"))
        .parse()
        .unwrap()
}

fn memory_line(args: &[&str]) -> String {
    let out = agentworld(args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
        .lines()
        .find(|l| l.starts_with("memory "))
        .unwrap_or_else(|| panic!("no memory line in {}", text(&out.stdout)))
        .to_string()
}

/// The 35B-A3B planned from its config alone: about 34.7B parameters, so ~64.6 GiB in bf16
/// (one 80 GB GPU) and twice that in f32 (none); the cache grows with --max-model-len and
/// --max-batch multiplies it.
#[test]
fn inspect_plans_the_35b_from_config_json_alone() {
    let dir = config_only("qwen3_5_35b_a3b.json");
    let d = dir.path().to_str().unwrap();
    let bf16 = memory_line(&["inspect", "--model", d, "--max-model-len", "32768"]);
    assert!(bf16.starts_with("memory dtype=bf16 "), "{bf16}");
    let w = field(&bf16, "weights_gib");
    assert!((60.0..68.0).contains(&w), "{bf16}");
    let f32 = memory_line(&[
        "inspect",
        "--model",
        d,
        "--dtype",
        "f32",
        "--max-model-len",
        "32768",
    ]);
    assert!((field(&f32, "weights_gib") / w - 2.0).abs() < 0.01, "{f32}");
    let long = memory_line(&[
        "inspect",
        "--model",
        d,
        "--max-model-len",
        "65536",
        "--max-batch",
        "4",
    ]);
    let per_seq = field(&long, "cache_per_seq_gib");
    assert!(per_seq > field(&bf16, "cache_per_seq_gib"), "{long}");
    assert!(
        (field(&long, "total_gib") - (w + 4.0 * per_seq)).abs() < 0.01,
        "{long}"
    );
    let int8 = memory_line(&["inspect", "--model", d, "--quantize", "int8"]);
    assert!(int8.starts_with("memory dtype=int8 "), "{int8}");
    assert!(field(&int8, "weights_gib") < 0.6 * w, "{int8}");
}

/// serve checks the plan before reading a weight, and refuses with the numbers and what to
/// change (this folder has no weights at all: the refusal must come first).
#[test]
fn serve_refuses_a_model_that_does_not_fit() {
    let dir = config_only("qwen3_5_35b_a3b.json");
    let d = dir.path().to_str().unwrap();
    let out = agentworld(&[
        "serve",
        "--model",
        d,
        "--dtype",
        "f32",
        "--gpu-memory",
        "80",
        "--port",
        "0",
    ]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("does not fit"), "{err}");
    assert!(err.contains("memory dtype=f32 weights_gib=129."), "{err}");
    assert!(err.contains("--dtype bf16"), "{err}");
}

#[test]
fn a_bad_dtype_says_which_exist() {
    let out = agentworld(&["inspect", "--dtype", "int4"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("f32, bf16, f16"),
        "{}",
        text(&out.stderr)
    );
}

/// The demo model greedy in f32, in bf16 (its checkpoint's own dtype, the CPU default) and in
/// int8 blocks: the same observation, token for token. The demo's weights are bf16 on disk,
/// so f32 and bf16 multiply the same numbers; int8 rounds every projection and expert to
/// 1/254 of its block's largest weight, and the trained model's margins absorb that.
#[test]
fn the_demo_model_writes_the_same_observation_in_every_precision() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "simulate",
            "--domain",
            "terminal",
            "--state",
            "examples/terminal/screen1.txt",
            "--action",
            "examples/terminal/ls_l.json",
            "--max-tokens",
            "32",
            "--copy-bias",
            "0",
        ];
        args.extend_from_slice(extra);
        let out = agentworld(&args);
        assert!(out.status.success(), "{extra:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let f32 = run(&["--dtype", "f32"]);
    assert!(!f32.trim().is_empty());
    assert_eq!(run(&[]), f32, "bf16 (the default) differs from f32");
    assert_eq!(run(&["--quantize", "int8"]), f32, "int8 differs from f32");
}

/// `agentworld parity` (the device check's comparison) on the committed fixture: bf16 holding
/// matches the float64 transformers reference with every greedy token, and a tolerance tighter
/// than float32 rounding fails with the figure.
#[test]
fn parity_compares_a_checkpoint_with_a_reference_run() {
    let f = "crates/model/tests/fixtures/parity";
    let (model, reference) = (format!("{f}/composite"), format!("{f}/reference.json"));
    let out = agentworld(&[
        "parity",
        "--model",
        &model,
        "--reference",
        &reference,
        "--dtype",
        "bf16",
        "--greedy",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line = text(&out.stdout);
    assert!(
        line.starts_with("parity ") && line.contains("dtype=bf16"),
        "{line}"
    );
    assert!(line.contains("greedy_match=32/32"), "{line}");
    let out = agentworld(&[
        "parity",
        "--model",
        &model,
        "--reference",
        &reference,
        "--tolerance",
        "1e-9",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("more than --tolerance"),
        "{}",
        text(&out.stderr)
    );
}
