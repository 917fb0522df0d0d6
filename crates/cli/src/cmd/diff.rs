//! `agentworld diff`: what changed between two states of one format (UI dumps, pages,
//! accessibility trees, screens, tool results): inserted, removed, moved, text- and
//! attribute-changed nodes, and a line diff for terminal screens and JSON.

use std::io::Write;
use std::path::{Path, PathBuf};

use agentworld_world::Error;
use agentworld_world::diff::{self, LineChange, StateDiff};
use agentworld_world::state::{ParsedState, Registry, StateTree, Warning};
use anyhow::Result;
use serde_json::json;

use super::parse::read_text;

/// Formats whose states are text first: their diff is shown line by line.
const LINE_FORMATS: [&str; 2] = ["terminal", "json"];

/// Arguments of `agentworld diff`.
#[derive(clap::Args)]
#[command(
    after_help = "Changes, one a line: `+ insert`, `- remove`, `> move`, `~ text`, `~ name`, \
`~ attr` (bounds and role too), `~ doc` (document attributes). Nodes are named `role #key`: the \
resource-id / bid / element id where the format has one, else the position (`/0/2`) or JSON \
path. Terminal screens and JSON print a line diff instead (`-   3 | old`, `+   3 | new`); \
`--json` has both.\n\nA summary and the warnings (parse problems, duplicate keys) go to stderr. \
The exit status is non-zero only when a file cannot be read at all (or --format is unknown); \
text that no format recognises is diffed as an empty state, with a warning.\n\nExamples:\n  \
agentworld diff before.xml after.xml\n  \
agentworld diff --format axtree before.txt after.txt --json"
)]
pub struct Args {
    /// The state before (`-` reads standard input).
    before: PathBuf,
    /// The state after (`-` reads standard input).
    after: PathBuf,
    /// The format of both: `auto` detects it, or a format's name (see `agentworld parse`).
    #[arg(long, default_value = "auto")]
    format: String,
    /// Print `{format, before, after, changes, warnings, lines}` as JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// One side of the diff: its file, what was read, and the parse warnings.
struct Side {
    file: String,
    text: String,
    parsed: ParsedState,
}

/// `text` as `format`; text that no parser can read is an empty state with a warning.
fn parse_or_empty(registry: &Registry, format: &str, text: &str) -> Result<ParsedState> {
    match registry.parse(format, text) {
        Ok(p) => Ok(p),
        Err(e @ Error::Unreadable { .. }) => Ok(ParsedState {
            tree: StateTree {
                format: if format == "auto" { "none" } else { format }.to_string(),
                ..StateTree::default()
            },
            warnings: vec![Warning::at_start(format!("{e}; diffed as an empty state"))],
            source: text.to_string(),
        }),
        Err(e) => Err(e.into()),
    }
}

fn read_side(registry: &Registry, format: &str, path: &Path) -> Result<Side> {
    let text = read_text(path)?;
    let parsed = parse_or_empty(registry, format, &text)?;
    Ok(Side {
        file: path.display().to_string(),
        text,
        parsed,
    })
}

/// With `--format auto`, two files detected as two formats are read again as one: the file its
/// format is less sure of is read in the other's format (else the other way round). An empty
/// side takes the other's format.
fn agree(registry: &Registry, before: &mut Side, after: &mut Side) {
    let (fb, fa) = (
        before.parsed.tree.format.clone(),
        after.parsed.tree.format.clone(),
    );
    if fb == fa {
        return;
    }
    if before.parsed.tree.is_empty() {
        before.parsed.tree.format = fa;
        return;
    }
    if after.parsed.tree.is_empty() {
        after.parsed.tree.format = fb;
        return;
    }
    // The side its own format is less sure of is read again first.
    let sure = |s: &Side, f: &str| registry.get(f).map_or(0.0, |p| p.detect(&s.text));
    let tries = if sure(after, &fa) <= sure(before, &fb) {
        [(true, fb.as_str()), (false, fa.as_str())]
    } else {
        [(false, fa.as_str()), (true, fb.as_str())]
    };
    for (reread_after, format) in tries {
        let (side, other) = if reread_after {
            (&mut *after, "before")
        } else {
            (&mut *before, "after")
        };
        if let Ok(mut p) = registry.parse(format, &side.text) {
            let was = &side.parsed.tree.format;
            let note = format!("detected as {was}; read as {format} like the {other} state");
            p.warnings.insert(0, Warning::at_start(note));
            side.parsed = p;
            return;
        }
    }
}

pub fn run(args: Args) -> Result<()> {
    if args.before.as_os_str() == "-" && args.after.as_os_str() == "-" {
        anyhow::bail!("only one of BEFORE and AFTER can be `-` (standard input)");
    }
    let registry = Registry::standard();
    let mut before = read_side(&registry, &args.format, &args.before)?;
    let mut after = read_side(&registry, &args.format, &args.after)?;
    if args.format == "auto" {
        agree(&registry, &mut before, &mut after);
    }
    let d: StateDiff = diff::diff(&before.parsed.tree, &after.parsed.tree);
    let format = before.parsed.tree.format.as_str();
    let lines: Option<Vec<LineChange>> = LINE_FORMATS
        .contains(&format)
        .then(|| diff::line_diff(&before.text, &after.text));
    let out = if args.json {
        let side = |s: &Side| {
            json!({
                "file": s.file,
                "format": s.parsed.tree.format,
                "nodes": s.parsed.tree.len(),
                "warnings": s.parsed.warnings,
            })
        };
        let v = json!({
            "format": format,
            "before": side(&before),
            "after": side(&after),
            "changes": d.changes,
            "warnings": d.warnings,
            "lines": lines,
        });
        serde_json::to_string_pretty(&v)? + "\n"
    } else if let Some(lines) = &lines {
        diff::render_lines(lines)
    } else {
        d.render()
    };
    // A reader that stops early (`| head`) is not an error.
    match std::io::stdout().lock().write_all(out.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(anyhow::Error::new(e).context("writing the diff"));
        }
        _ => {}
    }
    for s in [&before, &after] {
        for w in &s.parsed.warnings {
            eprintln!("warning: {}: {w}", s.file);
        }
    }
    for w in &d.warnings {
        eprintln!("warning: {w}");
    }
    let line_note = lines
        .map(|l| {
            let removed = l.iter().filter(|c| c.before_line.is_some()).count();
            format!("; lines: {removed} removed, {} added", l.len() - removed)
        })
        .unwrap_or_default();
    eprintln!(
        "format {format}: {} node(s) before, {} after; {} change(s): {}{line_note}",
        before.parsed.tree.len(),
        after.parsed.tree.len(),
        d.changes.len(),
        d.summary()
    );
    Ok(())
}
