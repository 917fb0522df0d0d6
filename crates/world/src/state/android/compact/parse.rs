//! Parsing `android-compact` text back into a tree.

use super::escape::{QuoteError, unquote};
use super::{FLAG_WORDS, expand_class, is_ident};
use crate::state::android::{AndroidNode, AndroidTree, Bounds, Parsed, SourceFormat, Warning};
use crate::{Error, Result};

/// Parses `android-compact` text (grammar: [`COMPACT_FORMAT`](crate::state::android::COMPACT_FORMAT)
/// and the crate README). Blank lines are skipped.
///
/// Any malformed line is an error with its line number, except the last non-blank line: when it
/// is cut short (unterminated string, partial bounds, partial flag word) the node keeps the
/// fields read before the cut and a [`Warning`] says what was dropped; a last line whose class
/// cannot be read, or whose indentation is wrong, is dropped with a warning. A line indented
/// deeper than one level below the line before is read one level below it, with a warning (as
/// the `axtree` reader does): model output often skips a level.
pub fn parse_compact(text: &str) -> Result<Parsed> {
    let lines: Vec<(usize, &str)> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let mut nodes: Vec<AndroidNode> = Vec::with_capacity(lines.len());
    let mut warnings = Vec::new();
    for (k, &(line_no, line)) in lines.iter().enumerate() {
        let last = k + 1 == lines.len();
        let (mut node, problem) = parse_line(line);
        let max_depth = nodes.last().map_or(0, |n| n.depth + 1);
        if problem.is_none()
            && let Some(n) = node.as_mut()
            && n.depth > max_depth
        {
            warnings.push(Warning {
                line: line_no,
                column: 1,
                message: format!(
                    "indentation jumps to depth {}; read at depth {max_depth}",
                    n.depth
                ),
            });
            n.depth = max_depth;
        }
        match (node, problem) {
            (Some(n), None) => nodes.push(n),
            (node, Some((column, message))) if last => {
                match node.filter(|n| n.depth <= max_depth) {
                    Some(n) => {
                        warnings.push(Warning {
                            line: line_no,
                            column,
                            message: format!("last line cut short, kept what was read: {message}"),
                        });
                        nodes.push(n);
                    }
                    None => warnings.push(Warning {
                        line: line_no,
                        column,
                        message: format!("last line dropped: {message}"),
                    }),
                }
            }
            (_, Some((column, message))) => {
                return Err(Error::Compact {
                    line: line_no,
                    message: format!("column {column}: {message}"),
                });
            }
            (None, None) => {}
        }
    }
    let tree = AndroidTree {
        source: SourceFormat::Compact,
        root_attributes: Vec::new(),
        nodes,
    };
    Ok(Parsed { tree, warnings })
}

/// A parse problem: 1-based character column and message.
type Problem = (usize, String);

/// Parses one line. Returns the node read so far (`None` when not even the class was read)
/// and the first problem met.
fn parse_line(line: &str) -> (Option<AndroidNode>, Option<Problem>) {
    let line = line.trim_end();
    let spaces = line.len() - line.trim_start_matches(' ').len();
    let body = &line[spaces..];
    if body.starts_with('\t') {
        return (
            None,
            Some((
                spaces + 1,
                "tab in indentation (use 2 spaces per level)".into(),
            )),
        );
    }
    if spaces % 2 == 1 {
        return (
            None,
            Some((1, format!("odd indentation of {spaces} spaces"))),
        );
    }
    let mut node = AndroidNode {
        depth: spaces / 2,
        ..AndroidNode::default()
    };
    let col = |pos: usize| line[..pos].chars().count() + 1;
    let mut pos = spaces;
    match read_class(&line[pos..]) {
        Ok((class, used)) => {
            node.class = class;
            pos += used;
        }
        Err(message) => return (None, Some((col(pos), message))),
    }
    let mut seen = [false; 4]; // id, text, desc, bounds
    loop {
        let rest = &line[pos..];
        let trimmed = rest.trim_start_matches(' ');
        if trimmed.is_empty() {
            return (Some(node), None);
        }
        if trimmed.len() == rest.len() {
            return (
                Some(node),
                Some((col(pos), "expected a space between tokens".into())),
            );
        }
        pos += rest.len() - trimmed.len();
        let start = pos;
        let result = read_token(trimmed, &mut node, &mut seen);
        match result {
            Ok(used) => pos += used,
            Err(message) => return (Some(node), Some((col(start), message))),
        }
    }
}

fn quote_problem(what: &str, e: QuoteError) -> String {
    match e {
        QuoteError::NotQuoted => format!("{what}: expected a quoted string"),
        QuoteError::Unterminated(_) => format!("{what}: unterminated string"),
        QuoteError::BadEscape(at) => format!("{what}: bad escape at byte {at} of the string"),
    }
}

fn read_class(s: &str) -> std::result::Result<(String, usize), String> {
    if let Some(q) = s.strip_prefix('~') {
        let (value, used) = unquote(q).map_err(|e| quote_problem("class", e))?;
        return Ok((value, used + 1));
    }
    let word = s.split(' ').next().unwrap_or("");
    if word.contains('.') && !word.starts_with(['"', '#', '[']) {
        Ok((word.to_string(), word.len()))
    } else if is_ident(word) {
        Ok((expand_class(word), word.len()))
    } else {
        Err(format!(
            "expected a class name, found {:?}",
            word.chars().take(30).collect::<String>()
        ))
    }
}

fn once(seen: &mut [bool; 4], slot: usize, what: &str) -> std::result::Result<(), String> {
    if seen[slot] {
        return Err(format!("{what} given twice"));
    }
    seen[slot] = true;
    Ok(())
}

/// Reads one token after the class into `node`; returns the bytes used.
fn read_token(
    s: &str,
    node: &mut AndroidNode,
    seen: &mut [bool; 4],
) -> std::result::Result<usize, String> {
    if let Some(id) = s.strip_prefix('#') {
        once(seen, 0, "#id")?;
        if id.starts_with('"') {
            let (value, used) = unquote(id).map_err(|e| quote_problem("#id", e))?;
            node.resource_id = value;
            return Ok(used + 1);
        }
        let word = id.split(' ').next().unwrap_or("");
        if word.is_empty() {
            return Err("empty #id".into());
        }
        node.resource_id = word.to_string();
        return Ok(word.len() + 1);
    }
    if s.starts_with('"') {
        once(seen, 1, "text")?;
        let (value, used) = unquote(s).map_err(|e| quote_problem("text", e))?;
        node.text = value;
        return Ok(used);
    }
    if let Some(q) = s.strip_prefix("desc=") {
        once(seen, 2, "desc")?;
        let (value, used) = unquote(q).map_err(|e| quote_problem("desc", e))?;
        node.content_desc = value;
        return Ok(used + 5);
    }
    let word = s.split(' ').next().unwrap_or("");
    if word.starts_with('[') {
        once(seen, 3, "bounds")?;
        node.bounds =
            Some(Bounds::parse(word).ok_or_else(|| format!("malformed bounds {word:?}"))?);
        return Ok(word.len());
    }
    let flags = &mut node.flags;
    let slot = match word {
        "disabled" => {
            flags.enabled = false;
            return Ok(word.len());
        }
        w if FLAG_WORDS.contains(&w) => flags.get_mut(w),
        _ => None,
    };
    match slot {
        Some(flag) => {
            *flag = true;
            Ok(word.len())
        }
        None => Err(format!(
            "unknown token {:?}",
            word.chars().take(30).collect::<String>()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{KeptFields, render_compact};
    use super::*;

    const SAMPLE: &str = "FrameLayout [0,0][1080,1794]\n  TextView #title \"Settings\" [42,100][500,160]\n  Switch #wifi \"Wi-Fi\" checkable checked clickable [900,200][1040,260]\n    View desc=\"a\\nb 🌿\" disabled\n  EditText #android:search \"say \\\"hi\\\"\" focused";

    #[test]
    fn parses_and_renders_back_identically() {
        let p = parse_compact(SAMPLE).unwrap();
        assert!(p.warnings.is_empty());
        let t = &p.tree;
        assert_eq!(t.len(), 5);
        assert_eq!(t.nodes[2].class, "android.widget.Switch");
        assert_eq!(t.nodes[2].resource_id, "wifi");
        assert!(
            t.nodes[2].flags.checked && t.nodes[2].flags.checkable && t.nodes[2].flags.clickable
        );
        assert_eq!(t.nodes[3].class, "android.view.View");
        assert_eq!(t.nodes[3].content_desc, "a\nb 🌿");
        assert!(!t.nodes[3].flags.enabled);
        assert_eq!(t.nodes[4].text, "say \"hi\"");
        assert_eq!(t.nodes[4].short_id(), "android:search");
        assert_eq!(render_compact(t), SAMPLE);
    }

    #[test]
    fn tokens_in_any_order_and_crlf() {
        let p = parse_compact("Button [1,2][3,4] clickable \"OK\" #ok\r\n").unwrap();
        assert_eq!(
            render_compact(&p.tree),
            "Button #ok \"OK\" clickable [1,2][3,4]"
        );
    }

    #[test]
    fn truncated_last_line_is_tolerated() {
        for (cut, kept_text, bounds) in [
            ("  TextView #t \"Hel", "", false),
            ("  TextView #t \"Hello\" [1,2][3", "Hello", false),
            ("  TextView #t \"Hello\" click", "Hello", false),
            ("  TextView #t \"Hello\" [1,2][3,4]", "Hello", true),
        ] {
            let p = parse_compact(&format!("FrameLayout\n{cut}")).unwrap();
            assert_eq!(p.tree.len(), 2, "{cut}");
            assert_eq!(p.tree.nodes[1].text, kept_text, "{cut}");
            assert_eq!(p.tree.nodes[1].resource_id, "t");
            assert_eq!(p.tree.nodes[1].bounds.is_some(), bounds);
            assert_eq!(
                p.warnings.len(),
                usize::from(!bounds),
                "{cut}: {:?}",
                p.warnings
            );
        }
        let p = parse_compact("FrameLayout\n      TextView").unwrap();
        assert_eq!(p.tree.len(), 2);
        assert!(
            p.warnings[0].message.contains("read at depth 1"),
            "{:?}",
            p.warnings
        );
        let p = parse_compact("FrameLayout\n  ~\"Tex").unwrap();
        assert_eq!((p.tree.len(), p.warnings.len()), (1, 1));
    }

    #[test]
    fn a_skipped_level_is_read_one_level_down_with_a_warning() {
        let p = parse_compact("A.B\n      C.D\n  E.F").unwrap();
        let depths: Vec<usize> = p.tree.nodes.iter().map(|n| n.depth).collect();
        assert_eq!(depths, [0, 1, 1]);
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        assert_eq!(p.warnings[0].line, 2);
        assert!(
            p.warnings[0]
                .message
                .contains("jumps to depth 3; read at depth 1")
        );
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("A.B\n   C.D\nE.F", 2, "odd indentation"),
            ("A.B \"x\" \"y\"\nE.F", 1, "text given twice"),
            ("A.B bogus\nE.F", 1, "unknown token"),
            ("A.B [1,2]\nE.F", 1, "malformed bounds"),
            ("\"quoted\"\nE.F", 1, "expected a class"),
            ("\tA.B\nE.F", 1, "tab"),
            ("A.B \"x\"#y\nE.F", 1, "expected a space"),
        ];
        for (text, line, needle) in cases {
            let err = parse_compact(text).unwrap_err();
            let msg = err.to_string();
            assert!(
                matches!(err, Error::Compact { line: l, .. } if l == line),
                "{text:?}: {msg}"
            );
            assert!(msg.contains(needle), "{text:?}: {msg}");
        }
    }

    #[test]
    fn empty_and_blank_input() {
        assert!(parse_compact("").unwrap().tree.is_empty());
        assert_eq!(parse_compact("\n\nA.B\n\n").unwrap().tree.len(), 1);
    }

    #[test]
    fn kept_fields_survive_round_trip() {
        let mut n = AndroidNode {
            class: "com.x.Custom".into(),
            resource_id: "com.x:id/a b".into(),
            ..Default::default()
        };
        n.text = "\u{2028}tab\there\\".into();
        n.flags.long_clickable = true;
        n.flags.focusable = true;
        n.flags.selected = true;
        n.flags.scrollable = true;
        let tree = AndroidTree::new(vec![n.clone()]).unwrap();
        let back = parse_compact(&render_compact(&tree)).unwrap().tree;
        assert_eq!(KeptFields::of(&back.nodes[0]), KeptFields::of(&n));
    }
}
