//! Removing `<think>` blocks from a judge's answer and taking its last tagged block, as the
//! benchmark's `_remove_thinking_tags` and `_extract_tagged_content` do.
//!
//! Tags match ASCII case-insensitively (Python's `re.IGNORECASE` also folds a few non-ASCII
//! letters, such as the dotless ı, which never appear in these tags in practice).

use std::collections::BTreeSet;

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Byte offsets of every (non-overlapping) ASCII-case-insensitive occurrence of `needle`.
fn find_all(lower: &str, needle: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = lower[from..].find(needle) {
        out.push(from + i);
        from += i + needle.len();
    }
    out
}

/// Removes thinking from `text`, then trims it.
///
/// In the benchmark's order, on the original text:
/// 1. each `<think>` (left to right) pairs with the first unpaired `</think>` after it, and
///    the pair with everything between is removed;
/// 2. each unpaired `</think>` removes everything from the start of the text up to and
///    including it;
/// 3. each unpaired `<think>` removes everything from it up to the next `<{response_tag}>`, or
///    to the end when there is none (an empty `response_tag`: always to the end).
///
/// Overlapping removals merge.
pub fn remove_thinking(text: &str, response_tag: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let opens = find_all(&lower, OPEN);
    let closes = find_all(&lower, CLOSE);
    if opens.is_empty() && closes.is_empty() {
        return text.to_string();
    }
    let mut unused_closes: BTreeSet<usize> = closes.iter().copied().collect();
    let mut ranges = Vec::new();
    let mut orphan_opens = Vec::new();
    for &open in &opens {
        match unused_closes.range(open..).next().copied() {
            Some(close) => {
                unused_closes.remove(&close);
                ranges.push((open, close + CLOSE.len()));
            }
            None => orphan_opens.push(open),
        }
    }
    for &close in &unused_closes {
        ranges.push((0, close + CLOSE.len()));
    }
    let response_open = format!("<{}>", response_tag.to_ascii_lowercase());
    for open in orphan_opens {
        let end = if response_tag.is_empty() {
            text.len()
        } else {
            lower[open..]
                .find(&response_open)
                .map_or(text.len(), |i| open + i)
        };
        ranges.push((open, end));
    }
    ranges.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut prev = 0;
    for (start, end) in merged {
        if start > prev {
            out.push_str(&text[prev..start]);
        }
        prev = prev.max(end);
    }
    if prev < text.len() {
        out.push_str(&text[prev..]);
    }
    out.trim().to_string()
}

/// The content of the last `<tag>` block, up to the first `</tag>` after it or to the end when
/// it is unclosed, trimmed. `None` when there is no `<tag>` or the content is empty (the
/// benchmark then parses the whole text).
pub fn tagged_block<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let lower = text.to_ascii_lowercase();
    let open = format!("<{}>", tag.to_ascii_lowercase());
    let close = format!("</{}>", tag.to_ascii_lowercase());
    let start = lower.rfind(&open)? + open.len();
    let end = lower[start..]
        .find(&close)
        .map_or(text.len(), |i| start + i);
    Some(text[start..end].trim()).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAG: &str = "final_evaluation";

    #[test]
    fn pairs_orphans_and_case() {
        assert_eq!(
            remove_thinking("a<think>x</think>b<THINK>y</Think>c", TAG),
            "abc"
        );
        // The orphan </think> removes everything before it, including the paired block.
        assert_eq!(remove_thinking("plan </think> out", TAG), "out");
        assert_eq!(remove_thinking("<think>x</think> y </think> z", TAG), "z");
        // An orphan <think> stops at the response tag.
        assert_eq!(
            remove_thinking("a <think> still thinking <final_evaluation>{}", TAG),
            "a <final_evaluation>{}"
        );
        assert_eq!(remove_thinking("a <think> never closed", TAG), "a");
        assert_eq!(
            remove_thinking("a <think> never closed <final_evaluation>", ""),
            "a"
        );
        assert_eq!(remove_thinking("  no tags  ", TAG), "  no tags  ");
    }

    #[test]
    fn nested_opens_pair_with_the_first_free_close() {
        // <think>(0) pairs with the first </think>, the inner <think> with the second: all gone.
        assert_eq!(
            remove_thinking("<think>a<think>b</think>c</think>d", TAG),
            "d"
        );
        // Two opens, one close: the first pairs, the second is an orphan running to the end.
        assert_eq!(remove_thinking("x<think>a</think>y<think>b", TAG), "xy");
    }

    #[test]
    fn last_tagged_block() {
        let t = "<final_evaluation>one</final_evaluation> then <FINAL_EVALUATION> two </final_evaluation>";
        assert_eq!(tagged_block(t, TAG), Some("two"));
        assert_eq!(tagged_block("<final_evaluation>\n cut", TAG), Some("cut"));
        assert_eq!(
            tagged_block("<final_evaluation> </final_evaluation>", TAG),
            None
        );
        assert_eq!(tagged_block("nothing", TAG), None);
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        assert_eq!(remove_thinking("é<think>ü</think>ß", TAG), "éß");
        assert_eq!(tagged_block("<final_evaluation>ü", TAG), Some("ü"));
    }
}
