//! Finding the JSON object in a judge's answer: markdown code blocks, then forward brace
//! matching, then backward brace matching (the benchmark's `_extract_from_markdown`,
//! `_extract_best_json_object` and `_extract_last_json`).
//!
//! All scanning is on bytes; every delimiter is ASCII, so each cut lands on a char boundary.

const FENCE: &str = "```";
const SCORES_KEY: &str = "\"scores\"";

/// The contents of the code blocks in `text`, trimmed, in order: each block opens with three
/// backticks and an optional `json` (lowercase, as in the benchmark's regex
/// ```` ```(?:json)?\s*([\s\S]*?)\s*``` ````) and closes at the next three backticks.
fn code_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(i) = text[pos..].find(FENCE) {
        let mut body = pos + i + FENCE.len();
        if text[body..].starts_with("json") {
            body += 4;
        }
        let Some(close) = text[body..].find(FENCE) else {
            break;
        };
        out.push(text[body..body + close].trim());
        pos = body + close + FENCE.len();
    }
    out
}

/// The last code block that holds an object (`{` … `}`) with a `"scores"` key in it, else the
/// last code block that holds an object at all.
pub fn markdown_json(text: &str) -> Option<&str> {
    let objects: Vec<&str> = code_blocks(text)
        .into_iter()
        .filter(|c| c.starts_with('{') && c.ends_with('}'))
        .collect();
    objects
        .iter()
        .rev()
        .find(|c| c.contains(SCORES_KEY))
        .or(objects.last())
        .copied()
}

/// The balanced object starting at byte `start` (a `{`), skipping braces inside double-quoted
/// strings (with backslash escapes); `None` when it never closes.
fn match_forward(text: &str, start: usize) -> Option<&str> {
    let bytes = text.as_bytes();
    let (mut depth, mut in_string, mut escape) = (0usize, false, false);
    for (i, &c) in bytes.iter().enumerate().skip(start) {
        if escape {
            escape = false;
            continue;
        }
        match c {
            b'\\' if in_string => escape = true,
            b'"' => in_string = !in_string,
            _ if in_string => {}
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(&text[start..=i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Every balanced object found scanning left to right (a found object is skipped as a whole),
/// then the last one with a `"scores"` key, else the last one.
pub fn brace_forward(text: &str) -> Option<&str> {
    let mut objects = Vec::new();
    let mut pos = 0;
    while let Some(i) = text[pos..].find('{') {
        let start = pos + i;
        match match_forward(text, start) {
            Some(obj) => {
                objects.push(obj);
                pos = start + obj.len();
            }
            None => pos = start + 1,
        }
    }
    objects
        .iter()
        .rev()
        .find(|o| o.contains(SCORES_KEY))
        .or(objects.last())
        .copied()
}

/// The object that ends at the last `}`, found by walking backwards and counting braces outside
/// strings (a `"` not preceded by a backslash toggles the string state, as in the benchmark).
pub fn brace_backward(text: &str) -> Option<&str> {
    let end = text.rfind('}')?;
    let bytes = text.as_bytes();
    let (mut depth, mut in_string) = (0usize, false);
    for i in (0..=end).rev() {
        let c = bytes[i];
        if c == b'"' && (i == 0 || bytes[i - 1] != b'\\') {
            in_string = !in_string;
        }
        if !in_string {
            if c == b'}' {
                depth += 1;
            } else if c == b'{' {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(&text[i..=end]);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_prefers_the_last_block_with_scores() {
        let t = "```json\n{\"scores\": {\"format\": 1}}\n```\n```json\n{\"scores\": {\"format\": 2}}\n```\n```\n{\"note\": 1}\n```";
        assert_eq!(markdown_json(t), Some("{\"scores\": {\"format\": 2}}"));
        let t = "```json\n{\"a\": 1}\n``` and ```{\"b\": 2}```";
        assert_eq!(markdown_json(t), Some("{\"b\": 2}"));
        assert_eq!(markdown_json("```python\nprint(1)\n```"), None);
        // `JSON` is not the lowercase language tag, so the block starts with "JSON" and is skipped.
        assert_eq!(markdown_json("```JSON\n{\"scores\": {}}\n```"), None);
        assert_eq!(
            markdown_json("```json\n{\"scores\": 1}"),
            None,
            "unclosed fence"
        );
    }

    #[test]
    fn forward_matching_skips_braces_in_strings() {
        let t = r#"pre {"a": "}{"} mid {"scores": {"format": 3}, "w": ["x\"}"]} post {"z": 1}"#;
        assert_eq!(
            brace_forward(t),
            Some(r#"{"scores": {"format": 3}, "w": ["x\"}"]}"#)
        );
        assert_eq!(brace_forward("{\"a\": 1} {\"b\": 2}"), Some("{\"b\": 2}"));
        assert_eq!(brace_forward("{ never closed"), None);
    }

    #[test]
    fn backward_matching_from_the_last_brace() {
        assert_eq!(
            brace_backward("x {\"a\": {\"b\": 1}} tail"),
            Some("{\"a\": {\"b\": 1}}")
        );
        // The unbalanced prefix hides nothing from a backward walk.
        assert_eq!(
            brace_backward("{\"scores\": {\"format\": 4}"),
            Some("{\"format\": 4}")
        );
        assert_eq!(brace_backward("no braces"), None);
        assert_eq!(brace_backward("} only"), None);
    }
}
