//! Incremental detokenization for streaming output.

use super::Tokenizer;
use crate::error::Result;

/// Turns a stream of ids into text deltas, never splitting a UTF-8 character.
///
/// A byte-level BPE token can hold part of a multi-byte character (an emoji is often two or
/// three tokens). Decoding each id on its own would print `�`; instead the stream keeps a
/// short window of recent ids and only emits text once it decodes cleanly. It also handles
/// decoders whose output for a token depends on its neighbours.
///
/// Same algorithm as `tokenizers`' `DecodeStream`, but skipping follows
/// [`Tokenizer::decode`] (the kept tags stay).
#[derive(Debug)]
pub struct DecodeStream<'a> {
    tokenizer: &'a Tokenizer,
    skip_special_tokens: bool,
    /// Ids not yet fully emitted, starting with a few already-emitted ones for context.
    ids: Vec<u32>,
    /// Decoded text of `ids[..prefix_index]`, already emitted.
    prefix: String,
    prefix_index: usize,
}

impl<'a> DecodeStream<'a> {
    pub(super) fn new(tokenizer: &'a Tokenizer, skip_special_tokens: bool) -> Self {
        Self {
            tokenizer,
            skip_special_tokens,
            ids: Vec::new(),
            prefix: String::new(),
            prefix_index: 0,
        }
    }

    /// Adds one id; returns the text it completes, if any.
    ///
    /// `None` means the id is skipped or ends inside a character; its text comes with a later
    /// id (or from [`DecodeStream::finish`]).
    ///
    /// # Errors
    /// [`crate::Error::Tokenizer`] if the decoder fails.
    pub fn step(&mut self, id: u32) -> Result<Option<String>> {
        if self.skip_special_tokens && self.tokenizer.is_skipped(id) {
            return Ok(None);
        }
        self.ids.push(id);
        let text = self.tokenizer.decode(&self.ids, false)?;
        if text.len() <= self.prefix.len() || text.ends_with('\u{FFFD}') {
            return Ok(None);
        }
        // The window's text normally extends what was emitted; if a decoder rewrote the
        // context, emit only the part after the longest common prefix.
        let start = if text.starts_with(&self.prefix) {
            self.prefix.len()
        } else {
            common_prefix_len(&text, &self.prefix)
        };
        let delta = text[start..].to_owned();
        // Keep the last emitted ids as context for the next step.
        let emitted = self.ids.len() - self.prefix_index;
        self.ids.drain(..self.prefix_index);
        self.prefix = self.tokenizer.decode(&self.ids, false)?;
        self.prefix_index = emitted;
        Ok(Some(delta))
    }

    /// Ends the stream, returning the text of ids still held back (an incomplete character
    /// at the end of generation shows as `�`).
    ///
    /// # Errors
    /// [`crate::Error::Tokenizer`] if the decoder fails.
    pub fn finish(self) -> Result<Option<String>> {
        let text = self.tokenizer.decode(&self.ids, false)?;
        let start = common_prefix_len(&text, &self.prefix);
        Ok(Some(text[start..].to_owned()).filter(|t| !t.is_empty()))
    }
}

/// Length in bytes of the longest common prefix, on a char boundary.
fn common_prefix_len(a: &str, b: &str) -> usize {
    a.char_indices()
        .zip(b.chars())
        .find(|((_, ca), cb)| ca != cb)
        .map_or_else(|| a.len().min(b.len()), |((i, _), _)| i)
}

#[cfg(test)]
mod tests {
    use super::super::tests::tiny;
    use super::*;

    fn run(ids: &[u32], skip: bool) -> (Vec<Option<String>>, Option<String>) {
        let tok = tiny();
        let mut stream = tok.decode_stream(skip);
        let steps = ids.iter().map(|id| stream.step(*id).unwrap()).collect();
        (steps, stream.finish().unwrap())
    }

    #[test]
    fn multibyte_character_waits_for_its_last_byte() {
        // "é" is the bytes C3 A9, tokens "Ã" (8) and "©" (9).
        let (steps, rest) = run(&[6, 8, 9, 7], false);
        assert_eq!(
            steps,
            vec![Some("ab".into()), None, Some("é".into()), Some(" a".into())]
        );
        assert_eq!(rest, None);
    }

    #[test]
    fn truncated_character_comes_out_on_finish() {
        let (steps, rest) = run(&[6, 8], false);
        assert_eq!(steps, vec![Some("ab".into()), None]);
        assert_eq!(rest.as_deref(), Some("\u{FFFD}"));
    }

    #[test]
    fn skipped_specials_vanish_but_think_tags_stay() {
        let (steps, _) = run(&[11, 6, 12, 10, 7], true);
        let text: String = steps.into_iter().flatten().collect();
        assert_eq!(text, "<think>ab</think> a");
    }

    #[test]
    fn concatenated_deltas_equal_full_decode() {
        let ids = [11, 8, 9, 6, 7, 8, 9, 12, 10, 5, 0];
        let (steps, rest) = run(&ids, false);
        let text: String = steps.into_iter().flatten().chain(rest).collect();
        assert_eq!(text, tiny().decode(&ids, false).unwrap());
        assert_eq!(text, "<think>éab aé</think><|im_end|> a");
    }

    #[test]
    fn common_prefix_respects_char_boundaries() {
        assert_eq!(common_prefix_len("héllo", "hé"), 3);
        assert_eq!(common_prefix_len("hé", "hè"), 1);
        assert_eq!(common_prefix_len("", "x"), 0);
    }
}
