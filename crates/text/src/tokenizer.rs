//! A thin wrapper over [`tokenizers::Tokenizer`] with the conventions of Qwen checkpoints.
//!
//! - [`Tokenizer::encode`] never adds a BOS (Qwen has none) but does recognise special tokens
//!   written in the text, so an encoded chat-template render gets the right control ids.
//! - [`Tokenizer::decode`] with `skip_special_tokens = true` still keeps the markup the output
//!   parsers need (`<think>`, `</think>`, `<tool_call>`, `</tool_call>` by default), even on
//!   tokenizers where those are marked special.
//! - [`Tokenizer::stop_token_ids`] gives the ids generation stops on.
//! - [`Tokenizer::decode_stream`] turns ids into text one id at a time for streaming.

mod stream;

use std::collections::HashSet;

pub use stream::DecodeStream;

use crate::error::{Error, Result};

/// Special tokens that [`Tokenizer::decode`] keeps even when skipping special tokens.
pub const DEFAULT_KEPT_TOKENS: [&str; 4] = ["<think>", "</think>", "<tool_call>", "</tool_call>"];

/// Tokens generation stops on when the vocabulary has them (`<|im_end|>` ends a chat turn,
/// `<|endoftext|>` ends a document).
pub const DEFAULT_STOP_TOKENS: [&str; 2] = ["<|im_end|>", "<|endoftext|>"];

/// Each token's byte offsets `(start, end)` in the text it was encoded from
/// ([`Tokenizer::encode_with_offsets`]).
pub type TokenOffsets = Vec<(usize, usize)>;

/// A `tokenizer.json` tokenizer plus the set of ids treated as special when decoding.
#[derive(Debug, Clone)]
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// Ids skipped by `decode(.., true)`: the special added tokens minus the kept ones.
    skipped_ids: HashSet<u32>,
}

impl Tokenizer {
    /// Loads a tokenizer from the bytes of a `tokenizer.json`.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] if the bytes are not a valid `tokenizer.json` (or use a feature,
    /// such as an Oniguruma-only regex, that this build cannot handle).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Ok(Self::from_tokenizers(tokenizers::Tokenizer::from_bytes(
            bytes,
        )?))
    }

    /// Loads a tokenizer from a `tokenizer.json` file.
    ///
    /// # Errors
    /// [`Error::Io`] if the file cannot be read, [`Error::Tokenizer`] if it is not a tokenizer.
    #[cfg(feature = "native")]
    pub fn from_file(path: impl AsRef<std::path::Path>) -> Result<Self> {
        Self::from_bytes(&crate::error::read_file(path.as_ref())?)
    }

    /// Wraps an already-built tokenizer, keeping [`DEFAULT_KEPT_TOKENS`] when decoding.
    pub fn from_tokenizers(inner: tokenizers::Tokenizer) -> Self {
        let mut tokenizer = Self {
            inner,
            skipped_ids: HashSet::new(),
        };
        tokenizer.set_kept_tokens(&DEFAULT_KEPT_TOKENS);
        tokenizer
    }

    /// Replaces the special tokens that `decode(.., skip_special_tokens = true)` keeps.
    ///
    /// Tokens that are not in the vocabulary are ignored.
    pub fn with_kept_tokens(mut self, kept: &[&str]) -> Self {
        self.set_kept_tokens(kept);
        self
    }

    fn set_kept_tokens(&mut self, kept: &[&str]) {
        let kept: HashSet<u32> = kept
            .iter()
            .filter_map(|t| self.inner.token_to_id(t))
            .collect();
        self.skipped_ids = self
            .inner
            .get_added_tokens_decoder()
            .into_iter()
            .filter(|(id, token)| token.special && !kept.contains(id))
            .map(|(id, _)| id)
            .collect();
    }

    /// The wrapped `tokenizers` tokenizer.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }

    /// Number of ids, added tokens included (the embedding may be padded beyond this).
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    /// Encodes text into ids without adding BOS/EOS or any other post-processing tokens.
    ///
    /// Added tokens written in the text (`<|im_start|>`, `<think>`, ...) become their ids.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] if the tokenizer pipeline fails.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        Ok(self.inner.encode_fast(text, false)?.get_ids().to_vec())
    }

    /// Encodes text as [`Tokenizer::encode`] does, and gives the token ranges (`[start, end)`,
    /// sorted, runs of adjacent tokens merged) of the tokens that overlap any of `marked` (byte
    /// ranges of `text`). Empty ranges mark nothing.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] if the tokenizer pipeline fails.
    pub fn encode_marked(
        &self,
        text: &str,
        marked: &[std::ops::Range<usize>],
    ) -> Result<(Vec<u32>, Vec<std::ops::Range<usize>>)> {
        let (ids, offsets) = self.encode_with_offsets(text)?;
        Ok((ids, token_ranges(&offsets, marked, false)))
    }

    /// Encodes text as [`Tokenizer::encode`] does, with each token's byte offsets in `text`
    /// (`(start, end)`; both byte-level halves of a split character carry the character's).
    ///
    /// # Errors
    /// [`Error::Tokenizer`] if the tokenizer pipeline fails.
    pub fn encode_with_offsets(&self, text: &str) -> Result<(Vec<u32>, TokenOffsets)> {
        let encoding = self.inner.encode(text, false)?;
        Ok((encoding.get_ids().to_vec(), encoding.get_offsets().to_vec()))
    }

    /// Decodes ids into text.
    ///
    /// With `skip_special_tokens`, special tokens are dropped except the kept ones
    /// ([`DEFAULT_KEPT_TOKENS`] unless changed with [`Tokenizer::with_kept_tokens`]).
    /// Ids outside the vocabulary are ignored.
    ///
    /// # Errors
    /// [`Error::Tokenizer`] if the decoder fails.
    pub fn decode(&self, ids: &[u32], skip_special_tokens: bool) -> Result<String> {
        if skip_special_tokens {
            let kept: Vec<u32> = ids
                .iter()
                .copied()
                .filter(|id| !self.is_skipped(*id))
                .collect();
            Ok(self.inner.decode(&kept, false)?)
        } else {
            Ok(self.inner.decode(ids, false)?)
        }
    }

    /// Whether `decode(.., skip_special_tokens = true)` drops this id.
    pub fn is_skipped(&self, id: u32) -> bool {
        self.skipped_ids.contains(&id)
    }

    /// Whether the id is an added token (`<|im_end|>`, `<think>`, kept or not): text that
    /// spells one in a prompt becomes it.
    pub fn is_added(&self, id: u32) -> bool {
        self.inner
            .get_added_vocabulary()
            .simple_id_to_token(id)
            .is_some()
    }

    /// The id of a token, if it is in the vocabulary.
    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// The id of a token that must exist.
    ///
    /// # Errors
    /// [`Error::UnknownToken`] if the token is not in the vocabulary.
    pub fn require_token_id(&self, token: &str) -> Result<u32> {
        self.token_to_id(token)
            .ok_or_else(|| Error::UnknownToken(token.to_owned()))
    }

    /// The token string of an id (byte-level form, e.g. `Ġhello`), if the id exists.
    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// The ids generation stops on: `<|im_end|>` and `<|endoftext|>` when present, then
    /// `extra_eos` (e.g. [`crate::GenerationConfig::eos_token_id`]), without duplicates and in
    /// that order.
    pub fn stop_token_ids(&self, extra_eos: &[u32]) -> Vec<u32> {
        let mut ids: Vec<u32> = Vec::new();
        let known = DEFAULT_STOP_TOKENS
            .iter()
            .filter_map(|t| self.token_to_id(t));
        for id in known.chain(extra_eos.iter().copied()) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids
    }

    /// Starts an incremental decoder that turns one id at a time into new text.
    pub fn decode_stream(&self, skip_special_tokens: bool) -> DecodeStream<'_> {
        DecodeStream::new(self, skip_special_tokens)
    }
}

/// The token ranges (`[start, end)`, sorted, runs of adjacent tokens merged) of the tokens
/// whose byte `offsets` ([`Tokenizer::encode_with_offsets`]) overlap any of `marked` (byte
/// ranges of the text), or, with `whole`, lie wholly inside one of them (a copy source must
/// not start or end inside a token that also holds text outside it). Empty ranges mark nothing.
pub fn token_ranges(
    offsets: &[(usize, usize)],
    marked: &[std::ops::Range<usize>],
    whole: bool,
) -> Vec<std::ops::Range<usize>> {
    let hit = |&(a, b): &(usize, usize)| {
        marked.iter().any(|m| {
            !m.is_empty()
                && if whole {
                    m.start <= a && b <= m.end
                } else {
                    a < m.end && m.start < b
                }
        })
    };
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
    for (i, o) in offsets.iter().enumerate() {
        if !hit(o) {
            continue;
        }
        match ranges.last_mut() {
            Some(r) if r.end == i => r.end = i + 1,
            _ => ranges.push(i..i + 1),
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny byte-level BPE tokenizer: bytes `a`..`e` and a few merges, plus special tokens.
    pub(crate) fn tiny() -> Tokenizer {
        let json = r#"{
          "version": "1.0",
          "added_tokens": [
            {"id": 10, "content": "<|im_end|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
            {"id": 11, "content": "<think>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
            {"id": 12, "content": "</think>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
            {"id": 13, "content": "<|endoftext|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}
          ],
          "normalizer": null,
          "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": true},
          "post_processor": null,
          "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": true},
          "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                    "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                    "vocab": {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4, "Ġ": 5, "ab": 6, "Ġa": 7, "Ã": 8, "©": 9},
                    "merges": [["a", "b"], ["Ġ", "a"]]}
        }"#;
        Tokenizer::from_bytes(json.as_bytes()).expect("tiny tokenizer parses")
    }

    #[test]
    fn encode_adds_no_bos_and_recognises_special_tokens() {
        let tok = tiny();
        assert_eq!(tok.encode("ab a").unwrap(), vec![6, 7]);
        assert_eq!(tok.encode("<think>ab<|im_end|>").unwrap(), vec![11, 6, 10]);
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // lists of spans, some of one
    fn marked_byte_ranges_become_token_ranges_of_the_same_ids() {
        let tok = tiny();
        let text = "<think>ab a\u{e9}";
        let mark = |ranges: &[std::ops::Range<usize>]| {
            let (ids, marked) = tok.encode_marked(text, ranges).unwrap();
            assert_eq!(ids, tok.encode(text).unwrap());
            marked
        };
        // Tokens: <think> | ab | " a" | Ã | © (é is two bytes, two byte-level tokens).
        assert_eq!(mark(&[7..9]), [1..2], "ab");
        assert_eq!(mark(&[8..10]), [1..3], "a touched token counts whole");
        assert_eq!(mark(&[11..12]), [3..5], "both halves of é");
        assert_eq!(mark(&[0..7, 9..11]), [0..1, 2..3]);
        assert!(mark(&[]).is_empty() && mark(&[5..5]).is_empty());
        // Whole tokens only: a token that reaches outside the mark is left out.
        let (ids, offsets) = tok.encode_with_offsets(text).unwrap();
        assert_eq!(ids, tok.encode(text).unwrap());
        assert_eq!(token_ranges(&offsets, &[7..10], true), [1..2], "not \" a\"");
        assert_eq!(token_ranges(&offsets, &[7..13], true), [1..5]);
        assert!(
            token_ranges(&offsets, &[11..12], true).is_empty(),
            "half of é"
        );
    }

    #[test]
    fn decode_skipping_specials_keeps_think_tags() {
        let tok = tiny();
        let ids = [11, 6, 12, 7, 10];
        assert_eq!(
            tok.decode(&ids, false).unwrap(),
            "<think>ab</think> a<|im_end|>"
        );
        assert_eq!(tok.decode(&ids, true).unwrap(), "<think>ab</think> a");
        let strict = tiny().with_kept_tokens(&[]);
        assert_eq!(strict.decode(&ids, true).unwrap(), "ab a");
    }

    #[test]
    fn ids_outside_the_vocabulary_are_ignored() {
        let tok = tiny();
        assert_eq!(tok.decode(&[6, 999_999, 7], false).unwrap(), "ab a");
        assert_eq!(tok.id_to_token(999_999), None);
        let mut stream = tok.decode_stream(false);
        assert_eq!(stream.step(999_999).unwrap(), None);
        assert_eq!(stream.step(6).unwrap().as_deref(), Some("ab"));
    }

    #[test]
    fn stop_ids_are_chat_end_then_eot_then_extras_without_duplicates() {
        let tok = tiny();
        assert_eq!(tok.stop_token_ids(&[]), vec![10, 13]);
        assert_eq!(tok.stop_token_ids(&[13, 4, 4]), vec![10, 13, 4]);
    }

    #[test]
    fn token_lookup() {
        let tok = tiny();
        assert_eq!(tok.token_to_id("</think>"), Some(12));
        assert_eq!(tok.id_to_token(6).as_deref(), Some("ab"));
        assert!(
            matches!(tok.require_token_id("<nope>"), Err(Error::UnknownToken(t)) if t == "<nope>")
        );
        assert_eq!(tok.vocab_size(), 14);
    }

    #[test]
    fn invalid_json_is_an_error() {
        assert!(matches!(
            Tokenizer::from_bytes(b"{"),
            Err(Error::Tokenizer(_))
        ));
    }
}
