//! Stop strings (the request's `stop`), applied to streamed text.

/// Cuts streamed text at the first occurrence of any stop string.
///
/// Text that could be the start of a stop string is held back until the next piece decides,
/// so a stop string split across tokens is still caught and never sent. The stop string
/// itself is not part of the output (OpenAI and vLLM semantics).
#[derive(Debug, Clone, Default)]
pub struct StopMatcher {
    stops: Vec<String>,
    held: String,
    stopped: bool,
}

impl StopMatcher {
    /// A matcher for `stops` (empty strings are ignored).
    pub fn new(stops: Vec<String>) -> Self {
        Self {
            stops: stops.into_iter().filter(|s| !s.is_empty()).collect(),
            held: String::new(),
            stopped: false,
        }
    }

    /// Adds a piece; returns the text that is now safe to send and whether a stop string was
    /// hit (then nothing more will come out).
    pub fn push(&mut self, text: &str) -> (String, bool) {
        if self.stopped {
            return (String::new(), true);
        }
        if self.stops.is_empty() {
            return (text.to_owned(), false);
        }
        self.held.push_str(text);
        let hit = self
            .stops
            .iter()
            .filter_map(|s| self.held.find(s.as_str()))
            .min();
        if let Some(pos) = hit {
            self.stopped = true;
            let out = self.held[..pos].to_owned();
            self.held.clear();
            return (out, true);
        }
        let keep = self.partial_len();
        let cut = self.held.len() - keep;
        let out = self.held[..cut].to_owned();
        self.held.drain(..cut);
        (out, false)
    }

    /// Ends the stream: releases what was held back (it did not become a stop string).
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }

    /// Length of the longest suffix of the held text that is a proper prefix of a stop.
    fn partial_len(&self) -> usize {
        let held = &self.held;
        let longest = self.stops.iter().map(String::len).max().unwrap_or(0);
        (1..longest.min(held.len() + 1))
            .rev()
            .find(|&k| {
                let start = held.len() - k;
                held.is_char_boundary(start)
                    && self
                        .stops
                        .iter()
                        .any(|s| s.len() > k && s.starts_with(&held[start..]))
            })
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stops: &[&str], pieces: &[&str]) -> (String, bool) {
        let mut m = StopMatcher::new(stops.iter().map(|s| s.to_string()).collect());
        let mut out = String::new();
        for p in pieces {
            let (t, hit) = m.push(p);
            out.push_str(&t);
            if hit {
                return (out, true);
            }
        }
        out.push_str(&m.finish());
        (out, false)
    }

    #[test]
    fn cuts_at_a_stop_split_across_pieces() {
        assert_eq!(
            run(&["END"], &["abc E", "N", "Dxyz"]),
            ("abc ".into(), true)
        );
        assert_eq!(run(&["END", "c E"], &["abc E", "ND"]), ("ab".into(), true));
    }

    #[test]
    fn near_misses_are_released() {
        assert_eq!(run(&["END"], &["abc EN", "d"]), ("abc ENd".into(), false));
        assert_eq!(run(&["END"], &["abc EN"]), ("abc EN".into(), false));
        assert_eq!(run(&[], &["a", "b"]), ("ab".into(), false));
        assert_eq!(run(&["é!"], &["café", "?"]), ("café?".into(), false));
    }

    #[test]
    fn holds_back_only_possible_prefixes() {
        let mut m = StopMatcher::new(vec!["</end>".into()]);
        assert_eq!(m.push("text </e"), ("text ".into(), false));
        assert_eq!(m.push("x"), ("</ex".into(), false));
    }
}
