//! Splitting model output into reasoning and answer, as vLLM's `qwen3` reasoning parser does.
//!
//! Qwen3.5 (and Qwen3 thinking models) put `<think>\n` at the end of the prompt, so the
//! output usually holds only the closing tag: `plan…</think>\n\nanswer`.
//!
//! Rules, for both [`split_reasoning`] and the streaming [`ReasoningSplitter`]:
//! - text before the first `</think>` is reasoning, text after it is content (verbatim,
//!   later `<think>`/`</think>` included);
//! - a stray `<think>` in the reasoning (old templates where the model opens the block
//!   itself) is dropped, giving the same split;
//! - without `</think>`: with thinking enabled everything is reasoning (the output was cut
//!   at `max_tokens`), with thinking disabled everything is content, unless the output
//!   starts with `<think>`;
//! - a `<tool_call>` followed by `<function=` (Qwen3-Coder XML form) inside the reasoning
//!   ends it implicitly; the call starts the content. A `<tool_call>` followed by JSON does
//!   not, so a JSON call quoted inside the thinking stays there.
//!
//! Differences from vLLM's non-streaming parser, all on unusual output, so that the
//! one-shot and the streaming results are always the same: text before a stray `<think>` is
//! kept as reasoning (vLLM drops it); an XML tool call inside the thinking ends the reasoning
//! even if `</think>` comes later (as vLLM's streaming parser does); with thinking disabled
//! a `</think>` not preceded by `<think>` stays in the content; and [`split_reasoning`] trims
//! whitespace around both parts.

mod splitter;

pub use splitter::{ReasoningEvent, ReasoningSplitter};

/// Opening think tag.
pub const THINK_OPEN: &str = "<think>";
/// Closing think tag.
pub const THINK_CLOSE: &str = "</think>";

/// Splits a whole model output into `(reasoning, content)`, each trimmed and `None` when
/// empty. See the [module docs](self) for the rules.
///
/// ```
/// use agentworld_text::reasoning::split_reasoning;
///
/// let (reasoning, content) = split_reasoning("plan: click search\n</think>\n\nClicked.", true);
/// assert_eq!(reasoning.as_deref(), Some("plan: click search"));
/// assert_eq!(content.as_deref(), Some("Clicked."));
/// assert_eq!(split_reasoning("plan: click sea", true), (Some("plan: click sea".into()), None));
/// assert_eq!(split_reasoning("Clicked.", false), (None, Some("Clicked.".into())));
/// ```
pub fn split_reasoning(text: &str, thinking_enabled: bool) -> (Option<String>, Option<String>) {
    let mut splitter = ReasoningSplitter::new(thinking_enabled);
    let mut events = splitter.push(text);
    events.extend(splitter.finish());
    let (reasoning, content) = ReasoningEvent::collect(events);
    (non_empty(reasoning.trim()), non_empty(content.trim()))
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str, enabled: bool) -> (Option<&'static str>, Option<&'static str>) {
        let (r, c) = split_reasoning(text, enabled);
        (r.map(|s| &*s.leak()), c.map(|s| &*s.leak()))
    }

    #[test]
    fn closing_tag_only() {
        assert_eq!(split("a\n</think>\n\nb", true), (Some("a"), Some("b")));
        assert_eq!(split("a</think>", true), (Some("a"), None));
        assert_eq!(split("</think>b", false), (None, Some("</think>b")));
    }

    #[test]
    fn stray_open_tag_gives_the_same_split() {
        assert_eq!(
            split("<think>\na\n</think>\n\nb", true),
            (Some("a"), Some("b"))
        );
        assert_eq!(split("<think>a</think>b", false), (Some("a"), Some("b")));
        assert_eq!(split("  <think>a</think>b", false), (Some("a"), Some("b")));
        assert_eq!(split("x<think>a</think>b", true), (Some("xa"), Some("b")));
    }

    #[test]
    fn missing_close_depends_on_thinking() {
        assert_eq!(split("half a thou", true), (Some("half a thou"), None));
        assert_eq!(split("half a thou", false), (None, Some("half a thou")));
        assert_eq!(split("<think>half", false), (Some("half"), None));
        assert_eq!(split("", true), (None, None));
    }

    #[test]
    fn xml_tool_call_ends_reasoning_json_does_not() {
        let xml = "need to click\n<tool_call>\n<function=click>\n<parameter=id>\n3\n</parameter>\n</function>\n</tool_call>";
        let (r, c) = split(xml, true);
        assert_eq!(r, Some("need to click"));
        assert!(c.unwrap().starts_with("<tool_call>\n<function=click>"));
        let json = "maybe <tool_call>{\"name\": \"a\"}</tool_call> later";
        assert_eq!(split(json, true), (Some(json), None));
        assert_eq!(
            split("x <tool_call> <functionality", true),
            (Some("x <tool_call> <functionality"), None)
        );
        assert_eq!(
            split("x <tool_call>\n<function", true),
            (Some("x <tool_call>\n<function"), None)
        );
    }

    #[test]
    fn content_after_close_is_verbatim() {
        assert_eq!(
            split("<think>first</think>mid<think>second</think>end", true),
            (Some("first"), Some("mid<think>second</think>end"))
        );
    }
}
