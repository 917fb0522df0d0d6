//! `osworld-tsv`: the table OSWorld agents flatten the accessibility tree into
//! (`linearize_accessibility_tree`):
//!
//! ```text
//! tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)
//! push-button\tSave\t""\t\t\t(1012, 40)\t(68, 34)
//! label\tTitle\t"Say ""hi"""\t\t\t(10, 60)\t(200, 20)
//! ```
//!
//! One top-level node per row (the table is flat): role = `tag`, name = `name`, text = `text`
//! (a `"…"` field is unquoted, `""` inside it is one quote; a quoted field may span lines),
//! bounds from `position` `"(x, y)"` + `size` `"(w, h)"`, attributes `class` and `description`
//! when not empty, key = the positional path (rows have no id). A row with more than seven
//! fields (tabs inside the text) keeps the first two and the last four and joins the middle as
//! the text; a row with fewer is read as far as it goes; both with a warning, as are malformed
//! geometry and a missing header. The exception is the table's last row missing only its
//! geometry (five or six fields): a node without geometry ends its row in empty fields, and
//! text trimmed of its trailing whitespace (chat templates trim every message) loses those
//! tabs, so that row reads as having empty geometry, with no warning. The `[...]` line OSWorld
//! appends when it cuts the table to a token budget is a warning.

use super::super::read::{LineIndex, clip};
use super::osworld_xml::pair;
use crate::Result;
use crate::state::{ParsedState, Rect, StateNode, StateParser, TreeBuilder, Warning};

/// The `osworld-tsv` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct OsworldTsv;

/// The header line.
pub const HEADER: &str = "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)";

impl StateParser for OsworldTsv {
    fn name(&self) -> &'static str {
        "osworld-tsv"
    }

    fn description(&self) -> &'static str {
        "OSWorld linearised accessibility tree: `tag\\tname\\ttext\\tclass\\tdescription\\tposition\\tsize` rows"
    }

    /// 0.98 when the first non-blank line is the header (or starts like it); 0.4 when most
    /// lines have seven tab-separated fields ending in `(x, y)` `(w, h)`.
    fn detect(&self, text: &str) -> f32 {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if first.starts_with("tag\tname\ttext") {
            return 0.98;
        }
        let rows = super::line_fraction(
            text,
            |_| false,
            |l| {
                let f: Vec<&str> = l.split('\t').collect();
                f.len() >= 7 && pair(f[f.len() - 2]).is_some() && pair(f[f.len() - 1]).is_some()
            },
        );
        if rows > 0.6 { 0.4 } else { 0.0 }
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let ix = LineIndex::new(text);
        let mut warnings = Vec::new();
        let mut b = TreeBuilder::new(self.name());
        let mut pos = text.len() - text.trim_start().len();
        if text[pos..].starts_with("tag\tname\ttext") {
            pos = text[pos..].find('\n').map_or(text.len(), |i| pos + i + 1);
        } else {
            warnings.push(ix.warning(pos, "no `tag\\tname\\ttext…` header; rows read as such"));
        }
        while pos < text.len() {
            let (mut fields, mut end, quote_open) = record(text, pos);
            let start = pos;
            // An unquoted newline inside the text splits a row: join the following lines
            // while that makes at most seven fields.
            let mut joined = 0;
            while fields.len() < 7 && end < text.len() && !quote_open {
                let (more, next_end, _) = record(text, end);
                if fields.len() + more.len() - 1 > 7 || more.is_empty() {
                    break;
                }
                let mut more = more.into_iter();
                if let (Some(last), Some(first)) = (fields.last_mut(), more.next()) {
                    last.push('\n');
                    last.push_str(&first);
                }
                fields.extend(more);
                end = next_end;
                joined += 1;
            }
            if joined > 0 && fields.len() == 7 {
                warnings.push(ix.warning(
                    start,
                    format!(
                        "row continues over {} more line(s) (a newline in the text); joined",
                        joined
                    ),
                ));
            } else if joined > 0 {
                // Joining did not make a full row: read the first line alone.
                let (f, e, _) = record(text, start);
                fields = f;
                end = e;
            }
            pos = end;
            let line = text[start..end].trim_end_matches(['\n', '\r']);
            if line.trim().is_empty() {
                continue;
            }
            if line.trim() == "[...]" {
                warnings.push(ix.warning(start, "table cut to a token budget here (`[...]`)"));
                continue;
            }
            if quote_open {
                warnings.push(ix.warning(start, "quoted text not closed before the end"));
            }
            let last_row = text[end..].trim().is_empty();
            let fields = normalise(fields, last_row, &ix, start, &mut warnings);
            let get = |i: usize| fields.get(i).cloned().unwrap_or_default();
            let mut node = StateNode {
                role: get(0),
                name: get(1),
                text: get(2),
                line: ix.line(start),
                ..StateNode::default()
            };
            for (i, key) in [(3, "class"), (4, "description")] {
                if !get(i).is_empty() {
                    node.attributes.push((key.into(), get(i)));
                }
            }
            let (at, size) = (get(5), get(6));
            if !at.is_empty() || !size.is_empty() {
                match (pair(&at), pair(&size)) {
                    (Some((x, y)), Some((w, h))) => node.bounds = Some(Rect::from_xywh(x, y, w, h)),
                    _ => warnings.push(ix.warning(
                        start,
                        format!(
                            "malformed geometry {:?} {:?} dropped",
                            clip(&at),
                            clip(&size)
                        ),
                    )),
                }
            }
            b.leaf(node);
        }
        ParsedState::new(b.finish(), warnings, text, "no row")
    }
}

/// Seven fields from a row's raw fields, with a warning when there were not seven (except for
/// the last row of a trimmed table, `last_row`, missing only its geometry).
fn normalise(
    mut f: Vec<String>,
    last_row: bool,
    ix: &LineIndex<'_>,
    at: usize,
    warnings: &mut Vec<Warning>,
) -> Vec<String> {
    use std::cmp::Ordering;
    match f.len().cmp(&7) {
        Ordering::Equal => f,
        Ordering::Greater => {
            warnings.push(ix.warning(
                at,
                format!(
                    "{} fields (tabs in the text?); middle fields joined as the text",
                    f.len()
                ),
            ));
            let tail = f.split_off(f.len() - 4);
            let text = f.split_off(2).join("\t");
            f.push(text);
            f.extend(tail);
            f
        }
        Ordering::Less if last_row && f.len() >= 5 => f,
        Ordering::Less => {
            warnings.push(ix.warning(
                at,
                format!("{} of 7 fields; read as far as they go", f.len()),
            ));
            f
        }
    }
}

/// The fields of the record starting at `pos`: (fields, end offset, a quote left open). A
/// field starting with `"` is quoted (`""` is a quote) and may span lines; elsewhere a newline
/// ends the record.
fn record(text: &str, pos: usize) -> (Vec<String>, usize, bool) {
    let b = text.as_bytes();
    let mut fields = Vec::new();
    let mut i = pos;
    loop {
        let mut field = String::new();
        if b.get(i) == Some(&b'"') {
            // Quoted: to the closing quote followed by a tab, a newline or the end.
            let mut j = i + 1;
            let mut closed = false;
            while j < b.len() {
                if b[j] == b'"' {
                    if b.get(j + 1) == Some(&b'"') {
                        field.push('"');
                        j += 2;
                        continue;
                    }
                    if matches!(b.get(j + 1), None | Some(b'\t' | b'\n' | b'\r')) {
                        closed = true;
                        j += 1;
                        break;
                    }
                }
                let ch_len = text[j..].chars().next().map_or(1, char::len_utf8);
                field.push_str(&text[j..j + ch_len]);
                j += ch_len;
            }
            fields.push(field);
            i = j;
            if !closed {
                return (fields, text.len(), true);
            }
        } else {
            let end = text[i..].find(['\t', '\n']).map_or(text.len(), |k| i + k);
            fields.push(text[i..end].trim_end_matches('\r').to_string());
            i = end;
        }
        match b.get(i) {
            Some(b'\t') => i += 1,
            Some(b'\r') if b.get(i + 1) == Some(&b'\n') => return (fields, i + 2, false),
            Some(b'\n') => return (fields, i + 1, false),
            Some(_) => {
                // Text after a closing quote: read the rest of the field as plain text.
                let end = text[i..].find(['\t', '\n']).map_or(text.len(), |k| i + k);
                if let Some(last) = fields.last_mut() {
                    last.push_str(&text[i..end]);
                }
                i = end;
                if b.get(i) == Some(&b'\t') {
                    i += 1;
                } else {
                    return (fields, (i + 1).min(text.len()), false);
                }
            }
            None => return (fields, text.len(), false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows() {
        let text = format!(
            "{HEADER}\ntext\t\tline one\nline two\t\t\t(1, 2)\t(3, 4)\npush-button\tSave\t\"\"\t\t\t(1012, 40)\t(68, 34)\nlabel\tTitle\t\"Say \"\"hi\"\"\nnow\"\tGtkLabel\t\t(10, 60)\t(200, 20)\nweird\tx\ta\tb\tc\td\t(0, 0)\t(1, 1)\nshort\tonly\n[...]\n"
        );
        let p = OsworldTsv.parse(&text).unwrap();
        let n = &p.tree.nodes;
        assert_eq!(n.len(), 5);
        assert_eq!(n[0].text, "line one\nline two");
        assert_eq!(n[0].bounds, Some(Rect::from_corners(1, 2, 4, 6)));
        assert_eq!(n[1].bounds, Some(Rect::from_corners(1012, 40, 1080, 74)));
        assert_eq!(n[1].text, "");
        assert_eq!(n[2].text, "Say \"hi\"\nnow");
        assert_eq!(n[2].attr("class"), Some("GtkLabel"));
        assert_eq!(n[3].text, "a\tb");
        assert_eq!(n[4].role, "short");
        assert_eq!(p.warnings.len(), 4, "{:?}", p.warnings);
        assert!(OsworldTsv.detect(&text) > 0.9);
    }

    /// A table whose last row has no geometry, trimmed as a chat template trims a message,
    /// reads like the untrimmed one; a row cut short elsewhere still warns.
    #[test]
    fn a_trimmed_last_row_keeps_its_empty_geometry() {
        let full = format!(
            "{HEADER}\npush-button\tFiles\t\"\"\t\t\t(234, 4)\t(64, 24)\nheading\ttable summary name\t\"\"\t\ttable summary\t\t\n"
        );
        let trimmed = OsworldTsv.parse(full.trim()).unwrap();
        let untrimmed = OsworldTsv.parse(&full).unwrap();
        assert!(trimmed.warnings.is_empty(), "{:?}", trimmed.warnings);
        assert_eq!(trimmed.tree.nodes, untrimmed.tree.nodes);
        assert_eq!(
            trimmed.tree.nodes[1].attr("description"),
            Some("table summary")
        );
        // The same row anywhere but last, or cut before its description, is short.
        let inner = format!(
            "{HEADER}\nheading\ttable summary name\t\"\"\t\ttable summary\nlabel\tx\t\"\"\t\t\t(1, 2)\t(3, 4)"
        );
        assert_eq!(OsworldTsv.parse(&inner).unwrap().warnings.len(), 1);
        let cut = format!("{HEADER}\nheading\ttable summary name\t\"\"");
        assert_eq!(OsworldTsv.parse(&cut).unwrap().warnings.len(), 1);
    }
}
