//! Tolerant low-level readers shared by the state formats: XML events into a flat element
//! list, JSON into a flat value list, Python string literals, and byte offset → line/column.
//!
//! Each reader recovers what it can read, records what it skipped as a [`Warning`], and never
//! recurses (nesting is tracked with explicit stacks).

pub(crate) mod json;
pub(crate) mod pyrepr;
pub(crate) mod xml;

use super::Warning;

/// Byte offset → 1-based line and character column, by binary search over line starts.
#[derive(Debug, Clone)]
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub(crate) fn new(text: &'a str) -> LineIndex<'a> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// 1-based line and character column of byte `offset` (clamped to the text).
    pub(crate) fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        (line, self.text[start..offset].chars().count() + 1)
    }

    /// 1-based line of byte `offset` (a binary search: cheap even on a one-line dump).
    pub(crate) fn line(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset.min(self.text.len()))
    }

    /// A warning at byte `offset`.
    pub(crate) fn warning(&self, offset: usize, message: impl Into<String>) -> Warning {
        let (line, column) = self.line_col(offset);
        Warning {
            line,
            column,
            message: message.into(),
        }
    }
}

/// At most 60 characters of `s`, for messages.
pub(crate) fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(60).collect();
    if s.chars().nth(60).is_some() {
        out.push('…');
    }
    out
}

/// The lines of `text` with the byte offset each starts at (a `\r` before `\n` is dropped).
pub(crate) fn lines_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.split('\n').map(move |l| {
        let at = offset;
        offset += l.len() + 1;
        (at, l.strip_suffix('\r').unwrap_or(l))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index() {
        let t = "ab\ncé€x\n";
        let ix = LineIndex::new(t);
        assert_eq!(ix.line_col(0), (1, 1));
        assert_eq!(ix.line_col(4), (2, 2));
        assert_eq!(ix.line_col(t.find('x').unwrap()), (2, 4));
        assert_eq!(ix.line_col(999), (3, 1));
        assert_eq!(ix.line_col(5), (2, 2), "inside a character: its start");
        let lines: Vec<_> = lines_with_offsets("a\r\nbc\n").collect();
        assert_eq!(lines, [(0, "a"), (3, "bc"), (6, "")]);
        assert_eq!(clip(&"x".repeat(70)).chars().count(), 61);
    }
}
