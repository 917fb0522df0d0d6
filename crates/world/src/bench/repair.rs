//! Repairing the almost-JSON judges write, and the last-resort `"scores"` object.
//!
//! The benchmark's `_repair_json` applies three regular expressions to the whole text (trailing
//! commas, single-quoted keys, unquoted keys), which also rewrites text inside strings (a
//! weakness such as `"too long, note: x"` gains quotes and breaks the JSON; the benchmark then
//! falls back to the `"scores"` object alone). [`repair_json`] does the same repairs and a
//! few more, but only outside strings, so where the benchmark's repair succeeds both give the
//! same object, and where it mangles a string this keeps the strengths and weaknesses.

/// Repairs, outside strings only:
/// - trailing commas before `}` or `]` (and at the very end) are dropped;
/// - single-quoted strings (keys or values) become double-quoted (`"` inside is escaped,
///   `\'` unescaped); raw control characters inside any string are escaped (`\n`, `\t`, …);
/// - an unquoted key (`\w+` right after `{` or `,`, followed by `:`) is quoted;
/// - an unterminated string is closed, then every `{` and `[` still open is closed, innermost
///   first (a cut-off answer).
///
/// Before that, JSON written as an escaped string literal (`{\"scores\": …}`: it has `\"` and
/// no `"` without a backslash before it) is unescaped (`\"` → `"`).
pub fn repair_json(text: &str) -> String {
    let unescaped;
    let text = if is_escaped_json(text) {
        unescaped = text.replace("\\\"", "\"");
        unescaped.as_str()
    } else {
        text
    };
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut stack: Vec<char> = Vec::new();
    // Last significant (non-whitespace) char written outside strings.
    let mut last = '\0';
    let mut i = 0;
    let mut open_string = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' | '\'' => {
                let (end, closed) = copy_string(&chars, i, &mut out);
                open_string = !closed;
                last = '"';
                i = end;
                continue;
            }
            ',' => {
                let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
                if matches!(next, Some('}') | Some(']') | None) {
                    i += 1;
                    continue;
                }
            }
            '{' | '[' => stack.push(if c == '{' { '}' } else { ']' }),
            '}' | ']' if stack.last() == Some(&c) => {
                stack.pop();
            }
            _ if is_word(c) && matches!(last, '{' | ',') => {
                let end = i + chars[i..].iter().take_while(|c| is_word(**c)).count();
                let after = chars[end..].iter().find(|c| !c.is_whitespace());
                if after == Some(&':') {
                    out.push('"');
                    out.extend(&chars[i..end]);
                    out.push('"');
                    last = '"';
                    i = end;
                    continue;
                }
            }
            _ => {}
        }
        out.push(c);
        if !c.is_whitespace() {
            last = c;
        }
        i += 1;
    }
    if open_string {
        out.push('"');
    }
    if !stack.is_empty() {
        let trimmed = out.trim_end().trim_end_matches(',').len();
        out.truncate(trimmed);
        out.extend(stack.iter().rev());
    }
    out
}

/// Whether every `"` in `text` has a backslash before it (and there is at least one).
fn is_escaped_json(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut quotes = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'"')
        .peekable();
    quotes.peek().is_some() && quotes.all(|(i, _)| i > 0 && bytes[i - 1] == b'\\')
}

/// Python's `\w` for our purposes: letters, digits (any script) and `_`.
fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Copies the string starting at `chars[start]` (a `"` or `'`) as a double-quoted JSON string.
/// Returns the index after it and whether it was closed.
fn copy_string(chars: &[char], start: usize, out: &mut String) -> (usize, bool) {
    let quote = chars[start];
    out.push('"');
    let mut i = start + 1;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            match chars.get(i + 1) {
                // `\'` is not a JSON escape; inside a string it is a plain quote.
                Some('\'') => out.push('\''),
                Some(next) => {
                    out.push('\\');
                    out.push(*next);
                }
                None => {}
            }
            i += 2;
            continue;
        }
        if c == quote {
            out.push('"');
            return (i + 1, true);
        }
        match c {
            // Only reachable inside a single-quoted string.
            '"' => out.push_str("\\\""),
            // Raw line breaks and other control characters are not allowed in JSON strings.
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
        i += 1;
    }
    (i, false)
}

/// The benchmark's last resort (`_extract_scores_only`): the first `"scores"` followed by `:`
/// and a brace-free object (`"scores"\s*:\s*\{[^}]+\}`), wrapped as
/// `{"strengths":[],"weaknesses":[],"scores":{…}}`.
pub fn scores_only(text: &str) -> Option<String> {
    const KEY: &str = "\"scores\"";
    let mut from = 0;
    while let Some(i) = text[from..].find(KEY) {
        let start = from + i;
        from = start + KEY.len();
        let rest = text[from..].trim_start();
        let Some(rest) = rest.strip_prefix(':') else {
            continue;
        };
        let Some(body) = rest.trim_start().strip_prefix('{') else {
            continue;
        };
        let Some(close) = body.find('}') else {
            continue;
        };
        if close == 0 {
            continue;
        }
        let matched_end = text.len() - body.len() + close + 1;
        return Some(format!(
            "{{\"strengths\":[],\"weaknesses\":[],{}}}",
            &text[start..matched_end]
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn parse(text: &str) -> Value {
        let repaired = repair_json(text);
        serde_json::from_str(&repaired).unwrap_or_else(|e| panic!("{repaired}: {e}"))
    }

    #[test]
    fn trailing_commas_single_quotes_and_bare_keys() {
        assert_eq!(
            parse("{'scores': {format: 4, 'quality': 3,},\n 'strengths': ['it\\'s \"fine\"',],}"),
            json!({"scores": {"format": 4, "quality": 3}, "strengths": ["it's \"fine\""]})
        );
    }

    #[test]
    fn strings_are_left_alone() {
        // The benchmark's regex would quote `note` inside the string and break it.
        let text = r#"{"weaknesses": ["too long, note: x", "a,}"], "scores": {"format": 2}}"#;
        assert_eq!(repair_json(text), text);
        assert_eq!(parse(text)["weaknesses"][0], "too long, note: x");
        // Literals in value position are not keys.
        assert_eq!(
            parse("{ok: true, n: [null, false]}"),
            json!({"ok": true, "n": [null, false]})
        );
    }

    #[test]
    fn escaped_json_is_unescaped() {
        assert_eq!(
            parse(r#"{\"scores\": {\"format\": 4}}"#),
            json!({"scores": {"format": 4}})
        );
        // One bare quote: not an escaped literal, left as it is.
        assert_eq!(repair_json(r#"{"a": "x\"y"}"#), r#"{"a": "x\"y"}"#);
    }

    #[test]
    fn cut_off_answers_are_closed() {
        assert_eq!(
            parse(r#"{"scores": {"format": 4, "realism": 3,"#),
            json!({"scores": {"format": 4, "realism": 3}})
        );
        assert_eq!(
            parse(r#"{"strengths": ["good"], "weaknesses": ["trunc"#),
            json!({"strengths": ["good"], "weaknesses": ["trunc"]})
        );
        // A raw line break inside a string is escaped.
        assert_eq!(parse("{\"w\": ['a\nb\t']}"), json!({"w": ["a\nb\t"]}));
        // Unbalanced but ending in a brace: one more closer.
        assert_eq!(
            parse(r#"{"scores": {"format": 5}"#),
            json!({"scores": {"format": 5}})
        );
    }

    #[test]
    fn scores_only_takes_the_first_matching_object() {
        let text = r#"{"strengths": "bad "quote", "scores" : {"format": 3, "quality": 4}, "x": }"#;
        assert_eq!(
            scores_only(text).unwrap(),
            r#"{"strengths":[],"weaknesses":[],"scores" : {"format": 3, "quality": 4}}"#
        );
        // `"scores": {}` does not match `[^}]+`; a later occurrence can.
        assert_eq!(
            scores_only(r#""scores": {} "scores":{"format":1}"#).unwrap(),
            r#"{"strengths":[],"weaknesses":[],"scores":{"format":1}}"#
        );
        assert_eq!(scores_only(r#""scores": [1]"#), None);
        assert_eq!(scores_only("nothing"), None);
    }
}
