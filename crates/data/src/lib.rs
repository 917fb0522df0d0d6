#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub mod android;
pub mod os;
pub mod rename;
pub mod restate;
pub mod rng;
#[cfg(feature = "native")]
pub mod terminal;
pub mod web;

pub use android::{AndroidDataConfig, generate_android};
pub use os::{AtspiTree, OsDataConfig, generate_os};
pub use rename::{RenameConfig, rename_content};
pub use restate::{ground_thinking, restate_edits};
#[cfg(feature = "native")]
pub use terminal::{TerminalDataConfig, generate_terminal};
pub use web::{WebDataConfig, WebPage, generate_web};

use agentworld_world::Row;

/// The `*.{ext}` files of `dir`, sorted by path. `what` names them in errors ("dump", "page").
///
/// # Errors
/// The folder cannot be read, or holds no such file.
#[cfg(feature = "native")]
pub(crate) fn list_files(
    dir: &std::path::Path,
    ext: &str,
    what: &str,
) -> agentworld_world::Result<Vec<std::path::PathBuf>> {
    let read = std::fs::read_dir(dir).map_err(|e| {
        agentworld_world::Error::io(format!("cannot read {what} dir {}", dir.display()), e)
    })?;
    let mut paths: Vec<std::path::PathBuf> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(agentworld_world::Error::Data(format!(
            "no .{ext} {what}s in {}",
            dir.display()
        )));
    }
    Ok(paths)
}

/// Reads files as (file name, text) pairs. `what` names them in errors.
///
/// # Errors
/// A file cannot be read.
#[cfg(feature = "native")]
pub(crate) fn read_named(
    paths: &[std::path::PathBuf],
    what: &str,
) -> agentworld_world::Result<Vec<(String, String)>> {
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).map_err(|e| {
                agentworld_world::Error::io(format!("cannot read {what} {}", p.display()), e)
            })?;
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok((name, text))
        })
        .collect()
}

/// A rough Qwen-style token count: one token per digit, one per non-ASCII character (CJK,
/// emoji), one per four other ASCII characters (rounded up per run). Meant for budgets, not
/// billing: it overestimates English prose a little.
pub fn estimate_tokens(text: &str) -> usize {
    let mut tokens = 0;
    let mut run = 0usize;
    for c in text.chars() {
        if c.is_ascii_digit() || !c.is_ascii() {
            tokens += 1 + run.div_ceil(4);
            run = 0;
        } else {
            run += 1;
        }
    }
    tokens + run.div_ceil(4)
}

/// [`estimate_tokens`] over everything a model sees for a row (system, prompts, responses).
pub fn row_tokens(row: &Row) -> usize {
    let texts = std::iter::once(&row.system_str)
        .chain(&row.prompt)
        .chain(&row.response);
    texts.map(|t| estimate_tokens(t) + 4).sum()
}

/// Lower-case words (runs of ASCII letters) of the training rows' prompts and responses.
#[cfg(test)]
pub(crate) fn train_words(rows: &[Row]) -> std::collections::HashSet<String> {
    rows.iter()
        .filter(|r| r.split == Some(agentworld_world::Split::Train))
        .flat_map(|r| {
            let text = (r.prompt.concat() + &r.response.concat()).to_ascii_lowercase();
            text.split(|c: char| !c.is_ascii_alphabetic())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Test check of a made-up share: no word of the rows at that share (`all`) is a held-out
/// word (`held`, lower case) unless share-0 rows (`none`) hold it too (a format word), and the
/// rows the share `half` leaves alone equal share 0's row for row, with `lo..hi` of them left.
#[cfg(test)]
pub(crate) fn assert_made_up_share(
    held: &std::collections::HashSet<String>,
    none: &[Row],
    all: &[Row],
    half: &[Row],
    kept_range: std::ops::Range<usize>,
) {
    let before = train_words(none);
    for w in train_words(all) {
        assert!(
            !held.contains(&w) || before.contains(&w),
            "held-out word {w}"
        );
    }
    let kept: Vec<usize> = (0..half.len())
        .filter(|&i| half[i].extra["source"] != "synthetic")
        .collect();
    assert!(kept_range.contains(&kept.len()), "{} kept", kept.len());
    for i in kept {
        assert_eq!(half[i], none[i]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_estimate() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("[0,0][1080,1794]"), 10 + 5);
        assert_eq!(estimate_tokens("命理解读"), 4);
    }
}
