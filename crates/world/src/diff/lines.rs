//! A line diff of two texts (terminal screens, JSON tool results), on a Myers alignment from
//! the `similar` crate.

use serde::{Deserialize, Serialize};
use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};

/// Whether a line went away or came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LineOp {
    /// Only the before text has the line.
    Removed,
    /// Only the after text has the line.
    Added,
}

/// One line that differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineChange {
    /// Removed or added.
    pub op: LineOp,
    /// 1-based line in the before text (removed lines only).
    pub before_line: Option<usize>,
    /// 1-based line in the after text (added lines only).
    pub after_line: Option<usize>,
    /// The line, without its line ending.
    pub text: String,
}

/// The lines that differ between `before` and `after`, in order: in each changed stretch the
/// removed lines, then the added ones. Lines are split as [`str::lines`] splits them (`\n` or
/// `\r\n`; a final line ending or its absence is no difference). Equal texts give nothing.
/// With the `native` feature, an alignment that runs past a few seconds (huge, very different
/// texts) falls back to a coarser one that is still correct but no longer minimal.
pub fn line_diff(before: &str, after: &str) -> Vec<LineChange> {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let mut out = Vec::new();
    for op in capture_diff_slices_deadline(Algorithm::Myers, &a, &b, super::deadline()) {
        let (tag, ra, rb) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            continue;
        }
        out.extend(ra.map(|i| LineChange {
            op: LineOp::Removed,
            before_line: Some(i + 1),
            after_line: None,
            text: a[i].to_string(),
        }));
        out.extend(rb.map(|j| LineChange {
            op: LineOp::Added,
            before_line: None,
            after_line: Some(j + 1),
            text: b[j].to_string(),
        }));
    }
    out
}

/// One line per change: `-   12 | text` for a removed line (its before line number), `+   12 |
/// text` for an added one (its after line number), each ending in a newline.
pub fn render_lines(changes: &[LineChange]) -> String {
    changes
        .iter()
        .map(|c| {
            let (sign, n) = match c.op {
                LineOp::Removed => ('-', c.before_line),
                LineOp::Added => ('+', c.after_line),
            };
            format!("{sign}{:>5} | {}\n", n.unwrap_or(0), c.text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_inserted_and_removed_lines() {
        let before = "$ ls\na.txt\nb.txt\nuser@host:~$ ";
        let after = "$ ls\na.txt\nc.txt\nd.txt\nuser@host:~$ \n";
        let d = line_diff(before, after);
        let got: Vec<_> = d
            .iter()
            .map(|c| (c.op, c.before_line, c.after_line, c.text.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (LineOp::Removed, Some(3), None, "b.txt"),
                (LineOp::Added, None, Some(3), "c.txt"),
                (LineOp::Added, None, Some(4), "d.txt"),
            ]
        );
        assert_eq!(
            render_lines(&d),
            "-    3 | b.txt\n+    3 | c.txt\n+    4 | d.txt\n"
        );
        assert!(line_diff(before, before).is_empty());
        assert!(line_diff("a\r\nb", "a\nb\n").is_empty());
        assert_eq!(line_diff("", "x").len(), 1);
    }
}
