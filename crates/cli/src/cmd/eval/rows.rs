//! Input rows with their line numbers, the stored result of a row's output
//! ([`inference_of`]), and the resumable `--out` file: rows already done are kept, new results
//! are appended one line at a time as they arrive, and the finished file is rewritten in input
//! order.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use agentworld_text::observation::extract_observation;
use agentworld_world::Row;
use agentworld_world::bench::{Inference, SampleKey};
use anyhow::{Context, Result, bail};

/// The stored result of one row's output text: the observation extracted as the benchmark's
/// parser does.
pub fn inference_of(text: String, reasoning: Option<String>) -> Inference {
    Inference {
        prediction: extract_observation(&text),
        generation: text,
        reasoning,
        error: None,
    }
}

/// A row and where it came from.
pub struct Numbered {
    /// `file:line` (1-based), for messages.
    pub origin: String,
    /// The row.
    pub row: Row,
}

/// Reads the rows of `--data`: a JSONL file, or a directory whose `*_test.jsonl` files are read
/// in name order (as `eval.py` reads an AgentWorldBench checkout). `limit` keeps the first rows.
pub fn read_inputs(path: &Path, limit: Option<usize>) -> Result<Vec<Numbered>> {
    let mut rows = Vec::new();
    if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("reading {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with("_test.jsonl"))
            .collect();
        files.sort();
        if files.is_empty() {
            bail!("{} holds no *_test.jsonl file", path.display());
        }
        for f in files {
            rows.extend(read_rows(&f, false)?);
        }
    } else {
        rows = read_rows(path, false)?;
    }
    if let Some(n) = limit {
        rows.truncate(n);
    }
    Ok(rows)
}

/// Reads JSONL rows, keeping where each came from. A last line that does not parse and has no
/// newline after it (a run stopped mid-write) is skipped with a warning when `tolerate_cut_end`.
pub fn read_rows(path: &Path, tolerate_cut_end: bool) -> Result<Vec<Numbered>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let lines: Vec<&str> = text.split('\n').collect();
    let mut rows = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let origin = format!("{}:{}", path.display(), i + 1);
        match serde_json::from_str::<Row>(line) {
            Ok(row) => rows.push(Numbered { origin, row }),
            Err(e) if tolerate_cut_end && i + 1 == lines.len() => {
                eprintln!(
                    "warning: {origin}: ignoring a cut-off last line ({e}); that row is redone"
                );
            }
            Err(e) => bail!("{origin}: not an AgentWorldBench row: {e}"),
        }
    }
    Ok(rows)
}

/// Fails when two rows share `(task, id, turn_idx)`: resuming needs each sample named once.
pub fn check_unique(rows: &[Numbered]) -> Result<()> {
    let mut seen: HashMap<SampleKey, &str> = HashMap::new();
    for r in rows {
        if let Some(first) = seen.insert(SampleKey::of(&r.row), &r.origin) {
            bail!(
                "{first} and {} are the same sample ({}); each (task, id, turn_idx) must be unique",
                r.origin,
                SampleKey::of(&r.row)
            );
        }
    }
    Ok(())
}

/// The `--out` file of a resumable step.
pub struct Output {
    path: PathBuf,
    /// Results by input index; `Some` once done (kept from an earlier run or new).
    results: Vec<Option<Row>>,
    /// Rows of the old file that match no input row, kept at the end.
    strays: Vec<Row>,
    writer: BufWriter<File>,
}

impl Output {
    /// Opens `path`: rows already there for which `is_done(input, old)` holds are kept (and
    /// counted as done), the file is rewritten with them, and new results are appended.
    pub fn open(
        path: &Path,
        inputs: &[Numbered],
        is_done: impl Fn(&Row, &Row) -> bool,
    ) -> Result<Self> {
        let index: HashMap<SampleKey, usize> = inputs
            .iter()
            .enumerate()
            .map(|(i, r)| (SampleKey::of(&r.row), i))
            .collect();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        let mut results = vec![None; inputs.len()];
        let mut strays = Vec::new();
        if path.exists() {
            for old in read_rows(path, true)? {
                match index.get(&SampleKey::of(&old.row)) {
                    Some(&i) if is_done(&inputs[i].row, &old.row) => results[i] = Some(old.row),
                    Some(_) => {}
                    None => strays.push(old.row),
                }
            }
            if !strays.is_empty() {
                eprintln!(
                    "warning: {} rows of {} are not in the input; they are kept at the end",
                    strays.len(),
                    path.display()
                );
            }
        }
        rewrite(path, results.iter().flatten().chain(&strays))?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("opening {} to append", path.display()))?;
        Ok(Output {
            path: path.to_path_buf(),
            results,
            strays,
            writer: BufWriter::new(file),
        })
    }

    /// Whether input `i` is done.
    pub fn is_done(&self, i: usize) -> bool {
        self.results[i].is_some()
    }

    /// How many inputs are done.
    pub fn done_count(&self) -> usize {
        self.results.iter().filter(|r| r.is_some()).count()
    }

    /// The rows done so far, in input order.
    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.results.iter().flatten()
    }

    /// Records input `i`'s result and appends it to the file at once.
    pub fn push(&mut self, i: usize, row: Row) -> Result<()> {
        let line = serde_json::to_string(&row)?;
        writeln!(self.writer, "{line}")
            .and_then(|_| self.writer.flush())
            .with_context(|| format!("writing {}", self.path.display()))?;
        self.results[i] = Some(row);
        Ok(())
    }

    /// Rewrites the file with every row done, in input order, then the strays.
    pub fn finish(mut self) -> Result<()> {
        self.writer
            .flush()
            .with_context(|| format!("writing {}", self.path.display()))?;
        rewrite(
            &self.path,
            self.results.iter().flatten().chain(&self.strays),
        )
    }
}

/// Writes rows to a temporary file beside `path`, then renames it over `path`.
fn rewrite<'a>(path: &Path, rows: impl Iterator<Item = &'a Row>) -> Result<()> {
    let tmp = path.with_extension("jsonl.tmp");
    let mut w =
        BufWriter::new(File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?);
    for row in rows {
        writeln!(w, "{}", serde_json::to_string(row)?)
            .with_context(|| format!("writing {}", tmp.display()))?;
    }
    w.flush()
        .with_context(|| format!("writing {}", tmp.display()))?;
    drop(w);
    std::fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}
