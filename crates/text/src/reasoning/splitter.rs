//! The streaming reasoning splitter.

use super::{THINK_CLOSE, THINK_OPEN};
use crate::tags::{find_first, partial_tag_len};

const TOOL_CALL: &str = "<tool_call>";
const FUNCTION: &str = "<function";
const REASONING_TAGS: [&str; 3] = [THINK_CLOSE, THINK_OPEN, TOOL_CALL];

/// A piece of streamed output, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReasoningEvent {
    /// Thinking text.
    Reasoning(String),
    /// Answer text (everything after the reasoning, tool calls included).
    Content(String),
}

impl ReasoningEvent {
    /// Concatenates events into `(reasoning, content)`.
    pub fn collect(events: impl IntoIterator<Item = ReasoningEvent>) -> (String, String) {
        let (mut reasoning, mut content) = (String::new(), String::new());
        for event in events {
            match event {
                ReasoningEvent::Reasoning(s) => reasoning.push_str(&s),
                ReasoningEvent::Content(s) => content.push_str(&s),
            }
        }
        (reasoning, content)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Thinking disabled, nothing but whitespace seen: a leading `<think>` would switch to
    /// reasoning, anything else to content.
    Undecided,
    Reasoning,
    /// Inside the reasoning, `buf` starts with `<tool_call>`; waiting to see whether
    /// `<function` follows.
    ToolCall,
    Content,
}

/// Splits streamed output into reasoning and content as it arrives.
///
/// Text that could be the start of a tag (`…</thi`) is held back until the next chunk
/// decides, so no partial tag ever leaks into either side. Feeding a text in any chunking
/// and trimming the concatenated parts gives [`super::split_reasoning`]'s result.
///
/// ```
/// use agentworld_text::reasoning::{ReasoningEvent, ReasoningSplitter};
///
/// let mut s = ReasoningSplitter::new(true);
/// assert_eq!(s.push("weighing it</thi"), vec![ReasoningEvent::Reasoning("weighing it".into())]);
/// assert_eq!(s.push("nk>Answer."), vec![ReasoningEvent::Content("Answer.".into())]);
/// assert_eq!(s.finish(), vec![]);
/// ```
#[derive(Debug, Clone)]
pub struct ReasoningSplitter {
    phase: Phase,
    buf: String,
}

impl ReasoningSplitter {
    /// A splitter for output generated with thinking on (the prompt ended in `<think>\n`)
    /// or off.
    pub fn new(thinking_enabled: bool) -> Self {
        let phase = if thinking_enabled {
            Phase::Reasoning
        } else {
            Phase::Undecided
        };
        Self {
            phase,
            buf: String::new(),
        }
    }

    /// Whether the reasoning has ended (everything from now on is content).
    pub fn in_content(&self) -> bool {
        self.phase == Phase::Content
    }

    /// Adds a chunk of output; returns the pieces that are now certain.
    pub fn push(&mut self, chunk: &str) -> Vec<ReasoningEvent> {
        self.buf.push_str(chunk);
        let mut events = Vec::new();
        self.drain(false, &mut events);
        events
    }

    /// Ends the stream, releasing anything held back.
    pub fn finish(&mut self) -> Vec<ReasoningEvent> {
        let mut events = Vec::new();
        self.drain(true, &mut events);
        let rest = std::mem::take(&mut self.buf);
        match self.phase {
            Phase::Reasoning | Phase::ToolCall => {
                emit(&mut events, ReasoningEvent::Reasoning(rest))
            }
            Phase::Undecided | Phase::Content => emit(&mut events, ReasoningEvent::Content(rest)),
        }
        events
    }

    /// Moves everything decidable from `buf` into `events`.
    fn drain(&mut self, at_end: bool, events: &mut Vec<ReasoningEvent>) {
        loop {
            match self.phase {
                Phase::Content => {
                    emit(
                        events,
                        ReasoningEvent::Content(std::mem::take(&mut self.buf)),
                    );
                    return;
                }
                Phase::Undecided => {
                    let rest = self.buf.trim_start();
                    if let Some(after) = rest.strip_prefix(THINK_OPEN) {
                        self.buf = after.to_owned();
                        self.phase = Phase::Reasoning;
                    } else if !at_end && (rest.is_empty() || THINK_OPEN.starts_with(rest)) {
                        return;
                    } else {
                        self.phase = Phase::Content;
                    }
                }
                Phase::Reasoning => match find_first(&self.buf, &REASONING_TAGS) {
                    Some((pos, tag)) => {
                        let before: String = self.buf.drain(..pos).collect();
                        emit(events, ReasoningEvent::Reasoning(before));
                        match REASONING_TAGS[tag] {
                            THINK_CLOSE => {
                                self.buf.drain(..THINK_CLOSE.len());
                                self.phase = Phase::Content;
                            }
                            THINK_OPEN => {
                                self.buf.drain(..THINK_OPEN.len());
                            }
                            _ => self.phase = Phase::ToolCall,
                        }
                    }
                    None => {
                        let keep = if at_end {
                            0
                        } else {
                            partial_tag_len(&self.buf, &REASONING_TAGS)
                        };
                        let ready: String = self.buf.drain(..self.buf.len() - keep).collect();
                        emit(events, ReasoningEvent::Reasoning(ready));
                        return;
                    }
                },
                Phase::ToolCall => match tool_call_verdict(&self.buf[TOOL_CALL.len()..]) {
                    Verdict::Call => self.phase = Phase::Content,
                    Verdict::Undecided if !at_end => return,
                    Verdict::Undecided | Verdict::NotACall => {
                        // Only the tag itself is settled; what follows is scanned again.
                        self.buf.drain(..TOOL_CALL.len());
                        emit(events, ReasoningEvent::Reasoning(TOOL_CALL.to_owned()));
                        self.phase = Phase::Reasoning;
                    }
                },
            }
        }
    }
}

enum Verdict {
    Call,
    NotACall,
    Undecided,
}

/// Whether the text after `<tool_call>` starts an XML call: optional whitespace, then
/// `<function` followed by whitespace or `=` (vLLM's `<function[\s=]`).
fn tool_call_verdict(after: &str) -> Verdict {
    let rest = after.trim_start();
    match rest.strip_prefix(FUNCTION) {
        Some(tail) => match tail.chars().next() {
            Some(c) if c == '=' || c.is_whitespace() => Verdict::Call,
            Some(_) => Verdict::NotACall,
            None => Verdict::Undecided,
        },
        None if FUNCTION.starts_with(rest) => Verdict::Undecided,
        None => Verdict::NotACall,
    }
}

/// Appends an event, merging it into the previous one of the same kind; drops empty text.
fn emit(events: &mut Vec<ReasoningEvent>, event: ReasoningEvent) {
    match (events.last_mut(), event) {
        (_, ReasoningEvent::Reasoning(s) | ReasoningEvent::Content(s)) if s.is_empty() => {}
        (Some(ReasoningEvent::Reasoning(last)), ReasoningEvent::Reasoning(s))
        | (Some(ReasoningEvent::Content(last)), ReasoningEvent::Content(s)) => last.push_str(&s),
        (_, event) => events.push(event),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reasoning::split_reasoning;

    fn stream(chunks: &[&str], enabled: bool) -> (String, String) {
        let mut s = ReasoningSplitter::new(enabled);
        let mut events: Vec<ReasoningEvent> = chunks.iter().flat_map(|c| s.push(c)).collect();
        events.extend(s.finish());
        ReasoningEvent::collect(events)
    }

    #[test]
    fn no_partial_tag_leaks() {
        let mut s = ReasoningSplitter::new(true);
        assert_eq!(
            s.push("...think<"),
            vec![ReasoningEvent::Reasoning("...think".into())]
        );
        assert_eq!(
            s.push("/think>\n<tool_call>x"),
            vec![ReasoningEvent::Content("\n<tool_call>x".into())]
        );
        assert!(s.in_content());
    }

    #[test]
    fn tool_call_waits_for_function_tag() {
        let mut s = ReasoningSplitter::new(true);
        assert_eq!(
            s.push("go <tool_call>\n<func"),
            vec![ReasoningEvent::Reasoning("go ".into())]
        );
        assert_eq!(
            s.push("tion=click>"),
            vec![ReasoningEvent::Content(
                "<tool_call>\n<function=click>".into()
            )]
        );
        let mut s = ReasoningSplitter::new(true);
        assert_eq!(
            s.push("a <tool_call>"),
            vec![ReasoningEvent::Reasoning("a ".into())]
        );
        assert_eq!(
            s.push("{\"name\"</think>b"),
            vec![
                ReasoningEvent::Reasoning("<tool_call>{\"name\"".into()),
                ReasoningEvent::Content("b".into())
            ]
        );
    }

    #[test]
    fn disabled_thinking_waits_only_for_a_leading_think_tag() {
        let mut s = ReasoningSplitter::new(false);
        assert_eq!(s.push("\n<thi"), vec![]);
        assert_eq!(
            s.push("nk>r</think>c"),
            vec![
                ReasoningEvent::Reasoning("r".into()),
                ReasoningEvent::Content("c".into())
            ]
        );
        let mut s = ReasoningSplitter::new(false);
        assert_eq!(
            s.push("\nClick"),
            vec![ReasoningEvent::Content("\nClick".into())]
        );
        assert_eq!(s.finish(), vec![]);
    }

    #[test]
    fn every_chunking_gives_the_one_shot_split() {
        let texts = [
            "<think>\nplan: click search\n</think>\n\nClicked.",
            "a <tool_call>\n<function=f>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>",
            "<think>first</think>mid<think>second</think>end",
            "x <tool_call>{\"a\": 1}</tool_call> y</think>z",
            "only reasoning <tool_ca",
            "é中<think>😀</think>ü",
        ];
        for text in texts {
            for enabled in [true, false] {
                let (r, c) = split_reasoning(text, enabled);
                // Every split point, char-aligned, in two and three chunks.
                let cuts: Vec<usize> = text
                    .char_indices()
                    .map(|(i, _)| i)
                    .chain([text.len()])
                    .collect();
                for &a in &cuts {
                    for &b in cuts.iter().filter(|b| **b >= a) {
                        let (sr, sc) = stream(&[&text[..a], &text[a..b], &text[b..]], enabled);
                        let norm = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_owned());
                        assert_eq!(
                            (norm(&sr), norm(&sc)),
                            (r.clone(), c.clone()),
                            "{text:?} cut {a},{b}"
                        );
                    }
                }
            }
        }
    }
}
