//! A tolerant, iterative JSON reader into a flat, pre-order value list.
//!
//! No recursion and no depth limit (a 10,000-level array nest is read like a flat one). The
//! JSON may be surrounded by text (a sentence, a code fence): reading starts at the first
//! character that can start a value (else the first `{` or `[`), text before and after is
//! reported. Several values one after another (JSON Lines) are read as several roots, named
//! `$`, `$1`, `$2`, … Recovered with a warning: a trailing comma, a malformed number or string
//! escape (kept as written), Python's `True`/`False`/`None`; at the first real syntax error or
//! at a cut the values read so far are kept and open containers are closed. `NaN`, `Infinity`
//! and `-Infinity` are read as numbers.

use super::{LineIndex, clip};
use crate::state::Warning;
use crate::state::tree::RunPath;

/// The kind of a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JsonKind {
    /// `{…}`.
    Object,
    /// `[…]`.
    Array,
    /// A string.
    String,
    /// A number (kept as written).
    Number,
    /// `true` / `false`.
    Bool,
    /// `null`.
    Null,
}

impl JsonKind {
    /// `object`, `array`, `string`, `number`, `bool`, `null`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            JsonKind::Object => "object",
            JsonKind::Array => "array",
            JsonKind::String => "string",
            JsonKind::Number => "number",
            JsonKind::Bool => "bool",
            JsonKind::Null => "null",
        }
    }
}

/// One value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct JsonValue {
    /// Depth (roots are 0).
    pub(crate) depth: usize,
    /// Parent index.
    pub(crate) parent: Option<usize>,
    /// The member name when the parent is an object.
    pub(crate) member: Option<String>,
    /// The kind.
    pub(crate) kind: JsonKind,
    /// A scalar's value: the decoded string, the number as written, `true`/`false`, `null`.
    pub(crate) scalar: String,
    /// The path: `$`, `$.key`, `$["a key"]`, `$.items[0]`; a run of more than seven equal
    /// segments is written `seg*k` (`$[0]*500`), and past about 200 bytes the middle is left
    /// out as `…n…`.
    pub(crate) path: String,
    /// 1-based line where it starts.
    pub(crate) line: usize,
}

/// What [`read`] found.
#[derive(Debug, Default)]
pub(crate) struct JsonDoc {
    /// The values in pre-order.
    pub(crate) values: Vec<JsonValue>,
    /// What was skipped or repaired.
    pub(crate) warnings: Vec<Warning>,
}

#[derive(Clone, Copy, PartialEq)]
enum Expect {
    Value,
    ValueOrClose,
    KeyOrClose,
    Key,
    Colon,
    CommaOrClose,
}

#[derive(Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

struct Frame {
    idx: usize,
    object: bool,
    count: usize,
}

/// Reads every JSON value in `text` it can.
pub(crate) fn read(text: &str) -> JsonDoc {
    let ix = LineIndex::new(text);
    let mut doc = JsonDoc::default();
    let b = text.as_bytes();
    let Some(mut pos) = find_start(text) else {
        return doc;
    };
    if !text[..pos].trim().is_empty() {
        let msg = format!(
            "text before the JSON ignored: {:?}",
            clip(text[..pos].trim())
        );
        doc.warnings.push(ix.warning(0, msg));
    }
    let mut stack: Vec<Frame> = Vec::new();
    let mut path: RunPath<Seg> = RunPath::default();
    let mut key: Option<String> = None;
    let mut expect = Expect::Value;
    let mut roots = 0usize;
    loop {
        while pos < b.len() && b[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if pos >= b.len() {
            break;
        }
        let c = b[pos];
        let top_is = |o: bool| stack.last().is_some_and(|f| f.object == o);
        // Closing brackets.
        let closes = match (expect, c) {
            (Expect::ValueOrClose, b']') | (Expect::KeyOrClose, b'}') => Some(false),
            (Expect::CommaOrClose, b']') if top_is(false) => Some(false),
            (Expect::CommaOrClose, b'}') if top_is(true) => Some(false),
            (Expect::Value, b']') if top_is(false) => Some(true),
            (Expect::Key, b'}') => Some(true),
            _ => None,
        };
        if let Some(trailing_comma) = closes {
            if trailing_comma {
                doc.warnings.push(ix.warning(pos, "trailing comma ignored"));
            }
            stack.pop();
            pos += 1;
            expect = Expect::CommaOrClose;
        } else {
            match (expect, c) {
                (Expect::Colon, b':') => {
                    pos += 1;
                    expect = Expect::Value;
                    continue;
                }
                (Expect::CommaOrClose, b',') => {
                    pos += 1;
                    expect = if top_is(true) {
                        Expect::Key
                    } else {
                        Expect::Value
                    };
                    continue;
                }
                (Expect::KeyOrClose | Expect::Key, b'"') => {
                    let (s, end, ok) = read_string(text, pos);
                    if !ok {
                        doc.warnings
                            .push(ix.warning(pos, "malformed member name kept as written"));
                    }
                    key = Some(s);
                    pos = end;
                    expect = Expect::Colon;
                    continue;
                }
                (Expect::Value | Expect::ValueOrClose, _) => {
                    let depth = stack.len();
                    let seg = match stack.last_mut() {
                        Some(f) => {
                            f.count += 1;
                            if f.object {
                                Seg::Key(key.clone().unwrap_or_default())
                            } else {
                                Seg::Index(f.count - 1)
                            }
                        }
                        None => Seg::Index(0),
                    };
                    let start = pos;
                    let (kind, scalar) = match c {
                        b'{' => (JsonKind::Object, String::new()),
                        b'[' => (JsonKind::Array, String::new()),
                        b'"' => {
                            let (s, end, ok) = read_string(text, pos);
                            if !ok {
                                doc.warnings
                                    .push(ix.warning(pos, "malformed string kept as written"));
                            }
                            pos = end;
                            (JsonKind::String, s)
                        }
                        b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'A'..=b'Z' => {
                            let end = pos
                                + text[pos..]
                                    .find(|ch: char| {
                                        !(ch.is_ascii_alphanumeric() || "+-.".contains(ch))
                                    })
                                    .unwrap_or(text.len() - pos);
                            let word = &text[pos..end];
                            let Some((kind, value, note)) = scalar_word(word) else {
                                let msg =
                                    format!("unexpected {:?}; the rest is skipped", clip(word));
                                doc.warnings.push(ix.warning(pos, msg));
                                break;
                            };
                            if let Some(note) = note {
                                doc.warnings.push(ix.warning(pos, note));
                            }
                            pos = end;
                            (kind, value)
                        }
                        _ => {
                            let ch = text[pos..].chars().next().unwrap_or(' ');
                            doc.warnings.push(ix.warning(pos, format!("unexpected {ch:?} where a value was expected; the rest is skipped")));
                            break;
                        }
                    };
                    if depth == 0 {
                        roots += 1;
                    }
                    path.truncate(depth.saturating_sub(1));
                    if depth > 0 {
                        path.push(seg);
                    }
                    let root = if roots <= 1 {
                        "$".to_string()
                    } else {
                        format!("${}", roots - 1)
                    };
                    doc.values.push(JsonValue {
                        depth,
                        parent: stack.last().map(|f| f.idx),
                        member: if stack.last().is_some_and(|f| f.object) {
                            key.take()
                        } else {
                            None
                        },
                        kind,
                        scalar,
                        path: root + &path.render("", show_seg),
                        line: ix.line(start),
                    });
                    if matches!(kind, JsonKind::Object | JsonKind::Array) {
                        stack.push(Frame {
                            idx: doc.values.len() - 1,
                            object: kind == JsonKind::Object,
                            count: 0,
                        });
                        pos += 1;
                        expect = if kind == JsonKind::Object {
                            Expect::KeyOrClose
                        } else {
                            Expect::ValueOrClose
                        };
                        continue;
                    }
                    expect = Expect::CommaOrClose;
                }
                _ => {
                    let ch = text[pos..].chars().next().unwrap_or(' ');
                    let want = match expect {
                        Expect::Colon => "':'",
                        Expect::CommaOrClose => "',' or a closing bracket",
                        _ => "a member name",
                    };
                    doc.warnings.push(ix.warning(
                        pos,
                        format!("unexpected {ch:?}, expected {want}; the rest is skipped"),
                    ));
                    break;
                }
            }
        }
        if stack.is_empty() {
            // A root value is complete: another may follow (JSON Lines), else trailing text.
            let rest = &text[pos..];
            let next = rest.len() - rest.trim_start().len();
            if rest.trim_start().starts_with(['{', '[']) {
                pos += next;
                expect = Expect::Value;
                continue;
            }
            if !rest.trim().is_empty() {
                let msg = format!("text after the JSON ignored: {:?}", clip(rest.trim()));
                doc.warnings.push(ix.warning(pos + next, msg));
            }
            return doc;
        }
    }
    if !stack.is_empty() {
        let msg = format!(
            "input ends with {} container(s) not closed; closed here",
            stack.len()
        );
        doc.warnings.push(ix.warning(text.len(), msg));
    }
    doc
}

fn show_seg(s: &Seg) -> String {
    match s {
        Seg::Index(i) => format!("[{i}]"),
        Seg::Key(k) => {
            let ident = k
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_')
                && k.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
            if ident {
                format!(".{k}")
            } else {
                format!("[{}]", serde_json::Value::String(k.clone()))
            }
        }
    }
}

/// Where the JSON starts: the first non-blank character when it can start a value, else
/// the first `{` or `[`.
fn find_start(text: &str) -> Option<usize> {
    let first = text.find(|c: char| !c.is_whitespace())?;
    let c = text[first..].chars().next()?;
    if matches!(c, '{' | '[' | '"' | '-' | '0'..='9') {
        return Some(first);
    }
    let word = text[first..].trim_end();
    if scalar_word(word).is_some() {
        return Some(first);
    }
    text.find(['{', '['])
}

/// A bare word as a scalar: (kind, value, warning).
fn scalar_word(w: &str) -> Option<(JsonKind, String, Option<&'static str>)> {
    Some(match w {
        "true" | "false" => (JsonKind::Bool, w.into(), None),
        "null" => (JsonKind::Null, w.into(), None),
        "True" | "False" => (
            JsonKind::Bool,
            w.to_lowercase(),
            Some("Python literal read as a boolean"),
        ),
        "None" => (
            JsonKind::Null,
            "null".into(),
            Some("Python None read as null"),
        ),
        "NaN" | "Infinity" | "-Infinity" => (JsonKind::Number, w.into(), None),
        _ if w.starts_with([
            '-', '+', '.', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9',
        ]) =>
        {
            let ok = serde_json::from_str::<serde_json::Number>(w).is_ok();
            (
                JsonKind::Number,
                w.into(),
                (!ok).then_some("malformed number kept as written"),
            )
        }
        _ => return None,
    })
}

/// Reads the string starting at the quote at `start`: (value, end offset, well formed).
/// An unterminated string takes the rest of the text.
fn read_string(text: &str, start: usize) -> (String, usize, bool) {
    let b = text.as_bytes();
    let mut i = start + 1;
    while i < b.len() && b[i] != b'"' {
        i += if b[i] == b'\\' { 2 } else { 1 };
    }
    let (inner, end, closed) = if i < b.len() {
        (&text[start + 1..i], i + 1, true)
    } else {
        (&text[start + 1..], text.len(), false)
    };
    let (value, ok) = unescape(inner);
    (value, end, ok && closed)
}

/// JSON string escapes, leniently: an unknown escape or lone surrogate is kept as written.
fn unescape(s: &str) -> (String, bool) {
    let mut out = String::with_capacity(s.len());
    let mut ok = true;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            ok &= !c.is_control();
            out.push(c);
            continue;
        }
        let Some((_, e)) = chars.next() else {
            out.push('\\');
            ok = false;
            break;
        };
        let simple = match e {
            '"' => Some('"'),
            '\\' => Some('\\'),
            '/' => Some('/'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            continue;
        }
        let hex = |at: usize| {
            s.get(at..at + 4)
                .filter(|h| h.chars().all(|d| d.is_ascii_hexdigit()))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
        };
        let decoded = match (e, hex(i + 2)) {
            ('u', Some(hi @ 0xD800..=0xDBFF)) => {
                let lo = s
                    .get(i + 6..i + 8)
                    .filter(|p| *p == "\\u")
                    .and_then(|_| hex(i + 8));
                match lo {
                    Some(lo @ 0xDC00..=0xDFFF) => {
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                            .map(|c| (c, 10))
                    }
                    _ => None,
                }
            }
            ('u', Some(cp)) => char::from_u32(cp).map(|c| (c, 4)),
            _ => None,
        };
        match decoded {
            Some((ch, skip)) => {
                out.push(ch);
                for _ in 0..skip {
                    chars.next();
                }
            }
            None => {
                ok = false;
                out.push('\\');
                out.push(e);
            }
        }
    }
    (out, ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(d: &JsonDoc) -> Vec<String> {
        d.values
            .iter()
            .map(|v| format!("{} {} {} {}", v.depth, v.path, v.kind.name(), v.scalar))
            .collect()
    }

    #[test]
    fn nested_values_and_paths() {
        let d = read(r#"{"a": [1, "x\u00e9\ud83c\udf3f", {"b c": null}], "t": true}"#);
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert_eq!(
            shape(&d),
            [
                "0 $ object ",
                "1 $.a array ",
                "2 $.a[0] number 1",
                "2 $.a[1] string xé🌿",
                "2 $.a[2] object ",
                "3 $.a[2][\"b c\"] null null",
                "1 $.t bool true",
            ]
        );
        assert_eq!(d.values[1].member.as_deref(), Some("a"));
        assert_eq!(d.values[5].parent, Some(4));
    }

    #[test]
    fn text_around_and_json_lines() {
        let d = read("Result:\n```json\n{\"ok\": 1}\n```");
        assert_eq!(d.values.len(), 2);
        assert_eq!(d.warnings.len(), 2, "{:?}", d.warnings);
        assert_eq!(d.values[1].line, 3);
        let d = read("{\"a\":1}\n{\"a\":2}\n");
        let roots: Vec<_> = d
            .values
            .iter()
            .filter(|v| v.depth == 0)
            .map(|v| v.path.as_str())
            .collect();
        assert_eq!(roots, ["$", "$1"]);
        assert_eq!(d.values[3].path, "$1.a");
    }

    #[test]
    fn recoveries() {
        let d = read("[1, 2,]");
        assert_eq!(d.values.len(), 3);
        assert!(d.warnings[0].message.contains("trailing comma"));
        let d = read(r#"{"a": {"b": [1, 2"#);
        assert_eq!(d.values.len(), 5);
        assert!(d.warnings[0].message.contains("3 container(s) not closed"));
        let d = read(r#"{"a": True, "b": None, "c": 1.2.3, "d": "\q"}"#);
        assert_eq!(d.values.len(), 5);
        assert_eq!(d.warnings.len(), 4, "{:?}", d.warnings);
        let d = read(r#"{"a" 1}"#);
        assert_eq!(d.values.len(), 1);
        assert!(d.warnings[0].message.contains("expected ':'"));
        assert!(read("no json here").values.is_empty());
        assert_eq!(read("42").values[0].scalar, "42");
        assert_eq!(read("\"open").values[0].scalar, "open");
    }

    #[test]
    fn deep_nesting_is_flat() {
        let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let d = read(&text);
        assert!(d.warnings.is_empty());
        assert_eq!(d.values.len(), 10_000);
        assert_eq!(d.values[9_999].path, "$[0]*9999");
    }
}
