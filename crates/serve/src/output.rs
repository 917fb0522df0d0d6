//! Turning a generation's text stream into what the chat API returns: stop strings, then the
//! reasoning split (vLLM's `qwen3` parser semantics, [`ReasoningSplitter`]), then tool calls
//! ([`ToolCallStream`]). Each stage holds back text that could be the start of a tag or a
//! stop string, so nothing split across tokens ever leaks; streaming and non-streaming
//! responses go through this same code.

use agentworld_text::reasoning::{ReasoningEvent, ReasoningSplitter};
use agentworld_text::tool_calls::{ToolCall, ToolSchemas};

use crate::stop::StopMatcher;
use crate::tools::{ContentPiece, ToolCallStream};

/// What one piece of output adds to the message.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatDelta {
    /// New reasoning text.
    pub reasoning: String,
    /// New answer text (tool-call blocks removed when tools are parsed).
    pub content: String,
    /// Calls completed by this piece.
    pub tool_calls: Vec<ToolCall>,
}

impl ChatDelta {
    /// Whether there is nothing to send.
    pub fn is_empty(&self) -> bool {
        self.reasoning.is_empty() && self.content.is_empty() && self.tool_calls.is_empty()
    }

    fn append(&mut self, other: ChatDelta) {
        self.reasoning.push_str(&other.reasoning);
        self.content.push_str(&other.content);
        self.tool_calls.extend(other.tool_calls);
    }
}

/// The chat output pipeline of one generation.
#[derive(Debug, Clone)]
pub struct ChatOutput {
    stop: StopMatcher,
    splitter: ReasoningSplitter,
    tools: Option<ToolCallStream>,
    done: bool,
}

impl ChatOutput {
    /// A pipeline cutting at `stops`, splitting reasoning as for a prompt with thinking
    /// `thinking_enabled`, and parsing tool calls when `tools` is given.
    pub fn new(stops: Vec<String>, thinking_enabled: bool, tools: Option<ToolSchemas>) -> Self {
        Self {
            stop: StopMatcher::new(stops),
            splitter: ReasoningSplitter::new(thinking_enabled),
            tools: tools.map(ToolCallStream::new),
            done: false,
        }
    }

    /// Adds generated text. Returns what is now certain and whether a stop string was hit;
    /// after a hit the delta already includes everything ([`Self::finish`] returns nothing).
    pub fn push(&mut self, text: &str) -> (ChatDelta, bool) {
        if self.done {
            return (ChatDelta::default(), true);
        }
        let (safe, hit) = self.stop.push(text);
        let events = self.splitter.push(&safe);
        let mut delta = self.route(events);
        if hit {
            delta.append(self.finish());
        }
        (delta, hit)
    }

    /// Ends the output, releasing everything held back.
    pub fn finish(&mut self) -> ChatDelta {
        if self.done {
            return ChatDelta::default();
        }
        self.done = true;
        let rest = self.stop.finish();
        let mut events = self.splitter.push(&rest);
        events.extend(self.splitter.finish());
        let mut delta = self.route(events);
        if let Some(tools) = self.tools.as_mut() {
            for piece in tools.finish() {
                match piece {
                    ContentPiece::Text(t) => delta.content.push_str(&t),
                    ContentPiece::Calls(c) => delta.tool_calls.extend(c),
                }
            }
        }
        delta
    }

    fn route(&mut self, events: Vec<ReasoningEvent>) -> ChatDelta {
        let mut delta = ChatDelta::default();
        for event in events {
            match (event, self.tools.as_mut()) {
                (ReasoningEvent::Reasoning(r), tools) => {
                    if let Some(tools) = tools {
                        delta.tool_calls.extend(tools.push_reasoning(&r));
                    }
                    delta.reasoning.push_str(&r);
                }
                (ReasoningEvent::Content(c), Some(tools)) => {
                    for piece in tools.push_content(&c) {
                        match piece {
                            ContentPiece::Text(t) => delta.content.push_str(&t),
                            ContentPiece::Calls(calls) => delta.tool_calls.extend(calls),
                        }
                    }
                }
                (ReasoningEvent::Content(c), None) => delta.content.push_str(&c),
            }
        }
        delta
    }
}

#[cfg(test)]
mod tests {
    use agentworld_text::reasoning::split_reasoning;
    use serde_json::json;

    use super::*;

    fn run(text: &str, size: usize, thinking: bool, tools: bool, stops: &[&str]) -> ChatDelta {
        let schemas = tools.then(|| ToolSchemas::from_tools(&[json!({"name": "click"})]));
        let mut out = ChatOutput::new(
            stops.iter().map(|s| s.to_string()).collect(),
            thinking,
            schemas,
        );
        let mut all = ChatDelta::default();
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(size) {
            let (delta, hit) = out.push(&piece.iter().collect::<String>());
            all.append(delta);
            if hit {
                return all;
            }
        }
        all.append(out.finish());
        all
    }

    #[test]
    fn any_chunking_gives_the_one_shot_split() {
        let texts = [
            "plan: click search\n</think>\n\nClicked.",
            "<think>a</think>b",
            "half a thou",
            "x <tool_call>\n<function=click>\n<parameter=id>\n3\n</parameter>\n</function>\n</tool_call>",
            "é🙂</think>\n\nnaïve</think>",
        ];
        for text in texts {
            for thinking in [true, false] {
                let (r, c) = split_reasoning(text, thinking);
                for size in [1, 2, 3, 5, 100] {
                    let d = run(text, size, thinking, false, &[]);
                    let trimmed = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_owned());
                    assert_eq!(
                        (trimmed(&d.reasoning), trimmed(&d.content)),
                        (r.clone(), c.clone()),
                        "{text:?} size {size} thinking {thinking}"
                    );
                }
            }
        }
    }

    #[test]
    fn tool_calls_come_out_of_the_content() {
        let text = "need it</think>\n\nOK.\n<tool_call>\n<function=click>\n<parameter=id>\n3\n</parameter>\n</function>\n</tool_call>";
        for size in [1, 4, 1000] {
            let d = run(text, size, true, true, &[]);
            assert_eq!(d.reasoning, "need it");
            assert_eq!(d.content.trim(), "OK.");
            assert_eq!(d.tool_calls.len(), 1);
            assert_eq!(d.tool_calls[0].arguments, json!({"id": "3"}));
        }
    }

    #[test]
    fn stop_strings_cut_before_splitting() {
        for size in [1, 3, 100] {
            let d = run(
                "think</think>answer STOP more",
                size,
                true,
                false,
                &["STOP"],
            );
            assert_eq!(
                (d.reasoning.as_str(), d.content.as_str()),
                ("think", "answer ")
            );
        }
    }
}
