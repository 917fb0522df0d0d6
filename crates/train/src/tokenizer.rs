//! Our own small byte-level BPE for the demo model, trained on the training rows.
//!
//! Same conventions as the Qwen tokenizers (qwen3_5_moe.md §6): NFC normaliser, a regex split
//! then byte-level mapping, byte-level decoder, no BOS, and the Qwen control tokens as added
//! tokens (`<|endoftext|>`, `<|im_start|>`, `<|im_end|>` special; `<think>`, `</think>`,
//! `<tool_call>`, `</tool_call>`, `<tool_response>`, `</tool_response>` plain). One deliberate
//! difference: numbers split into runs of up to three digits (`\p{N}{1,3}`, as GPT-4's
//! tokenizer does) instead of single digits, because screen coordinates are a large share of
//! GUI states and a small model's context is short. `<predicted_observation>` and its closing
//! tag are added as plain tokens too, so the output format costs one token per tag.

use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{BPE, BpeTrainerBuilder};
use tokenizers::normalizers::unicode::NFC;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{
    AddedToken, DecoderWrapper, NormalizerWrapper, PostProcessorWrapper, PreTokenizerWrapper,
    SplitDelimiterBehavior, TokenizerBuilder, TokenizerImpl,
};

use crate::error::{Result, TrainError};

/// Pre-tokenizer regex: Qwen3.5's, with digits grouped by up to three.
pub const SPLIT_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}{1,3}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Special tokens, in id order after the learned vocabulary.
pub const SPECIAL_TOKENS: [&str; 3] = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"];

/// Plain added tokens (kept when decoding).
pub const ADDED_TOKENS: [&str; 8] = [
    "<tool_call>",
    "</tool_call>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
    "<predicted_observation>",
    "</predicted_observation>",
];

type Impl = TokenizerImpl<
    BPE,
    NormalizerWrapper,
    PreTokenizerWrapper,
    PostProcessorWrapper,
    DecoderWrapper,
>;

fn err(e: impl std::fmt::Display) -> TrainError {
    TrainError::Tokenizer(e.to_string())
}

/// Trains a byte-level BPE with `vocab_size` entries in total (learned tokens plus the added
/// ones) on `texts`, and returns its `tokenizer.json` text.
///
/// # Errors
/// [`TrainError::Tokenizer`] if training or serialisation fails.
pub fn train_tokenizer<'a>(
    texts: impl Iterator<Item = &'a str> + Send,
    vocab_size: usize,
) -> Result<String> {
    let split = Split::new(
        SplitPattern::Regex(SPLIT_REGEX.into()),
        SplitDelimiterBehavior::Isolated,
        false,
    )
    .map_err(err)?;
    let byte_level = ByteLevel::new(false, false, false);
    let mut tokenizer: Impl = TokenizerBuilder::new()
        .with_model(BPE::default())
        .with_normalizer(Some(NormalizerWrapper::NFC(NFC)))
        .with_pre_tokenizer(Some(PreTokenizerWrapper::Sequence(Sequence::new(vec![
            PreTokenizerWrapper::Split(split),
            PreTokenizerWrapper::ByteLevel(byte_level),
        ]))))
        .with_post_processor(Some(PostProcessorWrapper::ByteLevel(byte_level)))
        .with_decoder(Some(DecoderWrapper::ByteLevel(ByteLevelDecoder::new(
            false, false, false,
        ))))
        .build()
        .map_err(err)?;
    let learned = vocab_size.saturating_sub(SPECIAL_TOKENS.len() + ADDED_TOKENS.len());
    let mut trainer = BpeTrainerBuilder::new()
        .vocab_size(learned)
        .min_frequency(2)
        .show_progress(false)
        .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
        .build();
    tokenizer.train(&mut trainer, texts).map_err(err)?;
    let specials: Vec<AddedToken> = SPECIAL_TOKENS
        .iter()
        .map(|t| AddedToken::from(*t, true))
        .collect();
    tokenizer.add_special_tokens(specials).map_err(err)?;
    let plain: Vec<AddedToken> = ADDED_TOKENS
        .iter()
        .map(|t| AddedToken::from(*t, false))
        .collect();
    tokenizer.add_tokens(plain).map_err(err)?;
    tokenizer.to_string(false).map_err(err)
}

/// `tokenizer_config.json` for a tokenizer made by [`train_tokenizer`]: the special-token
/// variables the chat template uses. The template itself ships as `chat_template.jinja`.
///
/// The class is the generic `PreTrainedTokenizerFast`, not `Qwen2Tokenizer`: transformers 5
/// rebuilds a `Qwen2Tokenizer`'s pre-tokenizer with Qwen's single-digit split, which would
/// tokenize our `\p{N}{1,3}` vocabulary differently from `tokenizer.json` (checked by
/// `tests/tests/demo_transformers.rs`).
pub fn tokenizer_config() -> serde_json::Value {
    serde_json::json!({
        "tokenizer_class": "PreTrainedTokenizerFast",
        "add_bos_token": false,
        "bos_token": null,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": null,
        "model_max_length": 2048,
        "clean_up_tokenization_spaces": false,
        "errors": "replace",
        "split_special_tokens": false
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trained_tokenizer_round_trips_and_knows_the_control_tokens() {
        let corpus = [
            "<|im_start|>user\nls -l [0,0][1080,1794]<|im_end|>\n",
            "<|im_start|>assistant\n<think>\nok\n</think>\n\n<predicted_observation>\nfile.txt\n</predicted_observation><|im_end|>\n",
            "EditText #search \"pizza\" clickable [285,554][948,632] 你好 🌿",
        ];
        let texts: Vec<&str> = corpus.iter().cycle().take(30).copied().collect();
        let json = train_tokenizer(texts.into_iter(), 400).unwrap();
        let tk = agentworld_text::Tokenizer::from_bytes(json.as_bytes()).unwrap();
        for text in corpus {
            let ids = tk.encode(text).unwrap();
            assert_eq!(tk.decode(&ids, false).unwrap(), text);
        }
        let ids = tk
            .encode("<|im_start|>assistant\n<predicted_observation>")
            .unwrap();
        assert_eq!(ids[0], tk.token_to_id("<|im_start|>").unwrap());
        assert_eq!(
            *ids.last().unwrap(),
            tk.token_to_id("<predicted_observation>").unwrap()
        );
        // Bytes never seen in training still encode (full byte alphabet).
        let ids = tk.encode("Ω ק").unwrap();
        assert_eq!(tk.decode(&ids, false).unwrap(), "Ω ק");
        // `<think>` survives skip_special_tokens; `<|im_end|>` does not.
        let ids = tk.encode("<think>a</think><|im_end|>").unwrap();
        assert_eq!(tk.decode(&ids, true).unwrap(), "<think>a</think>");
        assert!(tk.vocab_size() <= 400);
    }

    #[test]
    fn numbers_split_in_runs_of_three_digits() {
        let texts = vec!["[1080,1794] 12345"; 20];
        let json = train_tokenizer(texts.into_iter(), 300).unwrap();
        let tk = agentworld_text::Tokenizer::from_bytes(json.as_bytes()).unwrap();
        let ids = tk.encode("12345").unwrap();
        let pieces: Vec<String> = ids
            .iter()
            .map(|&i| tk.decode(&[i], false).unwrap())
            .collect();
        assert_eq!(pieces, vec!["123", "45"]);
    }
}
