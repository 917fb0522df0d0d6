//! Showing thinking and observation as they stream in (for a CLI or a web view).

use super::{OBSERVATION_CLOSE, OBSERVATION_OPEN};
use crate::reasoning::{ReasoningEvent, ReasoningSplitter};
use crate::tags::partial_tag_len;

/// A classified piece of a streamed world-model output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObservationEvent {
    /// Thinking text.
    Thinking(String),
    /// A `<predicted_observation>` block starts.
    BlockStart,
    /// Text inside an observation block.
    Observation(String),
    /// The block closed.
    BlockEnd,
    /// Answer text outside any block.
    Outside(String),
}

/// Splits a streamed output into thinking, observation blocks and other text, holding back
/// partial tags. For display only: the final observation should still come from
/// [`super::extract_observation`] on the whole text (it keeps only the last block and
/// applies the orphan-tag rules).
#[derive(Debug, Clone)]
pub struct ObservationStream {
    reasoning: ReasoningSplitter,
    buf: String,
    in_block: bool,
}

impl ObservationStream {
    /// A stream for output generated with thinking on or off.
    pub fn new(thinking_enabled: bool) -> Self {
        Self {
            reasoning: ReasoningSplitter::new(thinking_enabled),
            buf: String::new(),
            in_block: false,
        }
    }

    /// Adds a chunk; returns the events it completes.
    pub fn push(&mut self, chunk: &str) -> Vec<ObservationEvent> {
        let events = self.reasoning.push(chunk);
        self.route(events, false)
    }

    /// Ends the stream, releasing anything held back (an open block is left open: no
    /// [`ObservationEvent::BlockEnd`]).
    pub fn finish(&mut self) -> Vec<ObservationEvent> {
        let events = self.reasoning.finish();
        self.route(events, true)
    }

    fn route(&mut self, events: Vec<ReasoningEvent>, at_end: bool) -> Vec<ObservationEvent> {
        let mut out = Vec::new();
        for event in events {
            match event {
                ReasoningEvent::Reasoning(s) => out.push(ObservationEvent::Thinking(s)),
                ReasoningEvent::Content(s) => self.buf.push_str(&s),
            }
        }
        loop {
            let tag = if self.in_block {
                OBSERVATION_CLOSE
            } else {
                OBSERVATION_OPEN
            };
            if let Some(pos) = self.buf.find(tag) {
                let text: String = self.buf.drain(..pos + tag.len()).take(pos).collect();
                self.text(&mut out, text);
                out.push(if self.in_block {
                    ObservationEvent::BlockEnd
                } else {
                    ObservationEvent::BlockStart
                });
                self.in_block = !self.in_block;
                continue;
            }
            let keep = if at_end {
                0
            } else {
                partial_tag_len(&self.buf, &[tag])
            };
            let text: String = self.buf.drain(..self.buf.len() - keep).collect();
            self.text(&mut out, text);
            return out;
        }
    }

    fn text(&self, out: &mut Vec<ObservationEvent>, text: String) {
        if !text.is_empty() {
            out.push(if self.in_block {
                ObservationEvent::Observation(text)
            } else {
                ObservationEvent::Outside(text)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_in_order_across_chunk_splits() {
        let text =
            "looks at ls</think>\n<predicted_observation>\nnotes.txt\n</predicted_observation>";
        let expected = vec![
            ObservationEvent::Thinking("looks at ls".into()),
            ObservationEvent::Outside("\n".into()),
            ObservationEvent::BlockStart,
            ObservationEvent::Observation("\nnotes.txt\n".into()),
            ObservationEvent::BlockEnd,
        ];
        for cut in 1..text.len() {
            let mut s = ObservationStream::new(true);
            let mut events = s.push(&text[..cut]);
            events.extend(s.push(&text[cut..]));
            events.extend(s.finish());
            // Merge adjacent text events of the same kind to compare shapes.
            let mut merged: Vec<ObservationEvent> = Vec::new();
            for e in events {
                match (merged.last_mut(), e) {
                    (Some(ObservationEvent::Thinking(a)), ObservationEvent::Thinking(b))
                    | (Some(ObservationEvent::Observation(a)), ObservationEvent::Observation(b))
                    | (Some(ObservationEvent::Outside(a)), ObservationEvent::Outside(b)) => {
                        a.push_str(&b)
                    }
                    (_, e) => merged.push(e),
                }
            }
            assert_eq!(merged, expected, "cut at {cut}");
        }
    }

    #[test]
    fn partial_tag_is_held_and_unclosed_block_stays_open() {
        let mut s = ObservationStream::new(false);
        assert_eq!(s.push("<predicted_obs"), vec![]);
        assert_eq!(
            s.push("ervation>x"),
            vec![
                ObservationEvent::BlockStart,
                ObservationEvent::Observation("x".into())
            ]
        );
        assert_eq!(s.push("</predicted"), vec![]);
        assert_eq!(
            s.finish(),
            vec![ObservationEvent::Observation("</predicted".into())]
        );
    }
}
