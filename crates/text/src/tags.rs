//! Helpers for finding tags in streamed text without emitting half a tag.

/// Length of the longest suffix of `text` that is a proper prefix of one of `tags`.
///
/// Streaming parsers hold that many bytes back: `"reasoning</thi"` must not be emitted as
/// reasoning before the next chunk shows whether `</think>` follows. Tags must be ASCII and
/// start with `<`, so the cut is always on a char boundary.
pub(crate) fn partial_tag_len(text: &str, tags: &[&str]) -> usize {
    let Some(start) = text.rfind('<') else {
        return 0;
    };
    let tail = &text[start..];
    if tags
        .iter()
        .any(|tag| tag.len() > tail.len() && tag.starts_with(tail))
    {
        // A later '<' would give a shorter candidate, but the last '<' already starts one.
        return tail.len();
    }
    0
}

/// The earliest occurrence of any of `tags` in `text`: `(byte offset, tag index)`.
pub(crate) fn find_first(text: &str, tags: &[&str]) -> Option<(usize, usize)> {
    tags.iter()
        .enumerate()
        .filter_map(|(i, tag)| text.find(tag).map(|pos| (pos, i)))
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_tags_at_the_end() {
        let tags = ["</think>", "<tool_call>"];
        assert_eq!(partial_tag_len("abc</thi", &tags), 5);
        assert_eq!(partial_tag_len("abc<", &tags), 1);
        assert_eq!(partial_tag_len("abc<tool_", &tags), 6);
        assert_eq!(
            partial_tag_len("abc</think>", &tags),
            0,
            "a whole tag is not partial"
        );
        assert_eq!(partial_tag_len("a<b", &tags), 0);
        assert_eq!(partial_tag_len("é<", &tags), 1);
        assert_eq!(partial_tag_len("", &tags), 0);
    }

    #[test]
    fn earliest_tag_wins() {
        let tags = ["</think>", "<think>"];
        assert_eq!(find_first("x<think>y</think>", &tags), Some((1, 1)));
        assert_eq!(find_first("x</think><think>", &tags), Some((1, 0)));
        assert_eq!(find_first("none", &tags), None);
    }
}
