//! Reading an OpenAI-compatible streaming answer (`text/event-stream` of
//! `chat.completion.chunk` objects) chunk by chunk, as bytes arrive. Plain data, tested
//! natively; the browser side is in `remote.rs`.

use serde_json::Value;

/// Something one event said.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// More reasoning (`delta.reasoning_content`, or vLLM's older `delta.reasoning`).
    Thinking(String),
    /// More answer text (`delta.content`).
    Content(String),
    /// The choice ended (`finish_reason`).
    Finished(String),
    /// The server reported an error inside the stream.
    Error(String),
    /// `data: [DONE]`.
    Done,
}

/// Splits a byte stream into server-sent events and decodes their `data:` payloads.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    /// An empty decoder.
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Event> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some((end, sep)) = find_boundary(&self.buf) {
            let block: Vec<u8> = self.buf.drain(..end + sep).take(end).collect();
            let block = String::from_utf8_lossy(&block);
            decode_block(&block, &mut out);
        }
        out
    }

    /// What is left when the stream closes (a last event without its blank line).
    pub fn finish(&mut self) -> Vec<Event> {
        let block = String::from_utf8_lossy(&std::mem::take(&mut self.buf)).into_owned();
        let mut out = Vec::new();
        decode_block(&block, &mut out);
        out
    }
}

/// The end of the first event (index, separator length): a blank line, `\n\n` or `\r\n\r\n`.
fn find_boundary(buf: &[u8]) -> Option<(usize, usize)> {
    let lf = buf.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2));
    let crlf = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

fn decode_block(block: &str, out: &mut Vec<Event>) {
    let data: Vec<&str> = block
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    if data.is_empty() {
        return;
    }
    let data = data.join("\n");
    if data.trim() == "[DONE]" {
        out.push(Event::Done);
        return;
    }
    let v: Value = match serde_json::from_str(&data) {
        Ok(v) => v,
        Err(e) => {
            out.push(Event::Error(format!("unreadable event ({e}): {data:.200}")));
            return;
        }
    };
    if let Some(err) = v.get("error") {
        let msg = err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| err.to_string());
        out.push(Event::Error(msg));
        return;
    }
    let Some(choice) = v.get("choices").and_then(|c| c.get(0)) else {
        return;
    };
    let delta = &choice["delta"];
    for key in ["reasoning_content", "reasoning"] {
        if let Some(t) = delta.get(key).and_then(Value::as_str)
            && !t.is_empty()
        {
            out.push(Event::Thinking(t.to_string()));
            break;
        }
    }
    if let Some(t) = delta.get("content").and_then(Value::as_str)
        && !t.is_empty()
    {
        out.push(Event::Content(t.to_string()));
    }
    if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
        out.push(Event::Finished(r.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks() {
        let mut d = Decoder::new();
        let s = "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"thi\"}}]}\n\n\
                 data: {\"choices\":[{\"delta\":{\"content\":\"<predicted_observation>é\"}}]}\r\n\r\n\
                 data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
                 data: [DONE]\n\n";
        let bytes = s.as_bytes();
        let mut events = Vec::new();
        // One byte at a time, so UTF-8 and event boundaries fall inside chunks.
        for b in bytes.chunks(1) {
            events.extend(d.push(b));
        }
        events.extend(d.finish());
        assert_eq!(
            events,
            [
                Event::Thinking("thi".into()),
                Event::Content("<predicted_observation>é".into()),
                Event::Finished("stop".into()),
                Event::Done
            ]
        );
    }

    #[test]
    fn errors_are_events() {
        let mut d = Decoder::new();
        let e = d.push(b"data: {\"error\":{\"message\":\"too long\"}}\n\ndata: nope\n\n: ping\n\n");
        assert_eq!(e[0], Event::Error("too long".into()));
        assert!(matches!(&e[1], Event::Error(m) if m.contains("unreadable")));
        assert_eq!(e.len(), 2);
        assert_eq!(
            d.push(b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}"),
            []
        );
        assert_eq!(d.finish(), [Event::Content("x".into())]);
    }
}
