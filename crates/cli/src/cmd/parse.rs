//! `agentworld parse`: read a state file (UI dump, page, accessibility tree, element list, screen,
//! tool result) into the common state tree and print it, with what was skipped.

use std::io::Read;
use std::path::{Path, PathBuf};

use agentworld_world::state::Registry;
use anyhow::{Context, Result};
use serde_json::json;

/// Arguments of `agentworld parse`.
#[derive(clap::Args)]
#[command(
    after_help = "Formats: uiautomator, appium, android-compact, androidworld, droidbot, html, \
axtree, som, mind2web, osworld-xml, osworld-tsv, atspi, terminal, json (see crates/world/README.md).\n\n\
The tree goes to stdout; the format, its size and the warnings to stderr. The exit status is \
non-zero only when nothing could be read.\n\nExamples:\n  \
agentworld parse examples/web/browsergym_axtree.txt\n  \
agentworld parse --format osworld-xml examples/os/osworld_a11y.xml --json"
)]
pub struct Args {
    /// The state file (`-` reads standard input).
    file: PathBuf,
    /// The format: `auto` detects it, or a format's name.
    #[arg(long, default_value = "auto")]
    format: String,
    /// Print `{format, detected, warnings, tree}` as JSON on stdout instead of the indented tree.
    #[arg(long)]
    json: bool,
}

/// Reads the file (or stdin) as text; invalid UTF-8 is replaced, with a note.
pub(crate) fn read_text(path: &Path) -> Result<String> {
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("reading standard input")?;
    } else {
        bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    Ok(match String::from_utf8(bytes.to_vec()) {
        Ok(s) => s,
        Err(_) => {
            eprintln!(
                "note: {} is not valid UTF-8; bad bytes replaced",
                path.display()
            );
            String::from_utf8_lossy(bytes).into_owned()
        }
    })
}

pub fn run(args: Args) -> Result<()> {
    let text = read_text(&args.file)?;
    if text.trim().is_empty() {
        anyhow::bail!(
            "{} is empty: give a state file (UI dump, page, accessibility tree, screen, tool result)",
            args.file.display()
        );
    }
    let registry = Registry::standard();
    let detected = if args.format == "auto" {
        registry.detect(&text)
    } else {
        Vec::new()
    };
    let parsed = registry.parse(&args.format, &text)?;
    let tree = &parsed.tree;
    if args.json {
        let detected: Vec<_> = detected
            .iter()
            .map(|(name, c)| json!({"format": name, "confidence": c}))
            .collect();
        let v = json!({
            "format": tree.format,
            "detected": detected,
            "warnings": parsed.warnings,
            "tree": tree,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", tree.outline());
    }
    let guesses: Vec<String> = detected
        .iter()
        .take(3)
        .map(|(n, c)| format!("{n} {c:.2}"))
        .collect();
    let how = if guesses.is_empty() {
        "as asked".to_string()
    } else {
        format!("detected: {}", guesses.join(", "))
    };
    eprintln!(
        "format {} ({how}): {} nodes, depth {}, {} warning(s)",
        tree.format,
        tree.len(),
        tree.max_depth(),
        parsed.warnings.len()
    );
    for w in &parsed.warnings {
        eprintln!("warning: {w}");
    }
    Ok(())
}
