//! The PyTorch side of `agentworld bench`: which Python runs it, and running
//! `tools/bench/torch_bench.py` on the same plan.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{Args, Figures, Plan, Target};
use crate::paths;

pub(super) fn python(args: &Args) -> PathBuf {
    if let Some(p) = &args.python {
        return p.clone();
    }
    if let Some(p) = std::env::var_os("AGENTWORLD_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/agentworld-venv/bin/python"));
    match venv {
        Some(v) if v.is_file() => v,
        _ => PathBuf::from("python3"),
    }
}

/// Runs `tools/bench/torch_bench.py` on the same plan and reads its last line.
pub(super) fn run_torch(python: &Path, target: &Target, plan: &Plan) -> Result<Figures> {
    let script = paths::repo_root().join("tools/bench/torch_bench.py");
    let plan_file = tempfile::NamedTempFile::new()?;
    std::fs::write(plan_file.path(), serde_json::to_vec(plan)?)?;
    eprintln!("running the PyTorch side ({})...", python.display());
    let (flag, path) = match target {
        Target::Dir(p) => ("--model", p),
        Target::Synthetic(p) => ("--synthetic", p),
    };
    let out = Command::new(python)
        .arg(&script)
        .arg(flag)
        .arg(path)
        .arg("--plan")
        .arg(plan_file.path())
        .output()
        .with_context(|| {
            format!(
                "running {} (install torch and transformers there, pass --python, or use --no-torch)",
                python.display()
            )
        })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        bail!(
            "{} failed ({}); last lines of its stderr:\n{}\n(the PyTorch side needs torch and \
             transformers in that Python: `python3 -m venv ~/.cache/agentworld-venv && \
             ~/.cache/agentworld-venv/bin/pip install torch transformers`, or pass --python; \
             --no-torch skips it)",
            script.display(),
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .with_context(|| format!("reading {}'s result line {last:?}", script.display()))
}
