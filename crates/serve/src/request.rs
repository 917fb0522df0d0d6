//! Reading request bodies and the sampling fields shared by `/v1/chat/completions` and
//! `/v1/completions`, with errors that name the offending field.

use std::hash::{BuildHasher, RandomState};

use agentworld_engine::sampling::SamplingParams;
use agentworld_engine::{GenerateParams, NamedBias, PromptMarks};
use agentworld_world::Domain;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::scheduler::ModelInfo;

/// Parses a JSON body into `T`, naming the field whose value does not fit.
///
/// # Errors
/// 400 for a body that is not JSON, not an object, or has a field of the wrong type
/// (`param` is the field's path, e.g. `messages[0].role`); the body limit's status for an
/// oversized body.
pub fn parse_body<T: DeserializeOwned>(body: Result<Bytes, BytesRejection>) -> Result<T, ApiError> {
    let body = body.map_err(|e| ApiError {
        status: e.status(),
        message: format!("Could not read the request body: {}", e.body_text()),
        param: None,
        code: None,
        retry_after: None,
    })?;
    let value: serde_json::Value = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request(
            None,
            format!("The request body is not valid JSON ({e}); send one JSON object."),
        )
    })?;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            None,
            "The request body must be a JSON object.",
        ));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.inner().to_string();
        let path = e.path().to_string();
        let param = if path == "." {
            // A missing field is reported at its parent; name the field itself.
            inner.split('`').nth(1).map(str::to_owned)
        } else {
            Some(path)
        };
        let message = match &param {
            Some(p) => format!("Invalid value for `{p}`: {inner}."),
            None => format!("Invalid request: {inner}."),
        };
        ApiError::bad_request(param.as_deref(), message)
    })
}

/// `stop`: one string or a list of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Stop {
    /// One stop string.
    One(String),
    /// Several stop strings.
    Many(Vec<String>),
}

/// `stream_options`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct StreamOptions {
    /// Send a last chunk with token usage.
    #[serde(default)]
    pub include_usage: Option<bool>,
}

/// The sampling and length fields of a request, as sent.
#[derive(Debug, Clone, Default)]
pub struct Knobs {
    /// `max_tokens` (or `max_completion_tokens`), and which of the two was used.
    pub max_tokens: Option<(i64, &'static str)>,
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `top_p`.
    pub top_p: Option<f64>,
    /// `top_k` (`-1` or `0`: off).
    pub top_k: Option<i64>,
    /// `copy_bias` (our extension, as vLLM adds `top_k`): the copy prior's logit bonus in nats
    /// ([`agentworld_engine::sampling::SamplingParams::copy_bias`]); unset takes the model
    /// card's, `0` turns it off.
    pub copy_bias: Option<f64>,
    /// `seed`.
    pub seed: Option<i64>,
    /// `n`.
    pub n: Option<i64>,
    /// `stop`.
    pub stop: Option<Stop>,
}

impl Knobs {
    /// The bonus on the lines an action names: the card's, unless the request sets its own
    /// `copy_bias` (the card's prior on the named lines goes with the card's copy prior; the
    /// card's sources stay, so a terminal copy is still held to its screen).
    pub fn named_bias(&self) -> NamedBias {
        if self.copy_bias.is_none() {
            NamedBias::Card
        } else {
            NamedBias::Off
        }
    }

    /// Checks the fields that do not depend on the prompt.
    ///
    /// # Errors
    /// 400 naming the field: `max_tokens` ≤ 0, `temperature` outside `[0, 2]`, `top_p`
    /// outside `(0, 1]`, `top_k` below -1, `copy_bias` outside `[0, 100]`, `n` other than 1.
    pub fn validate(&self) -> Result<(), ApiError> {
        if let Some((n, field)) = self.max_tokens
            && n <= 0
        {
            return Err(ApiError::bad_request(
                Some(field),
                format!(
                    "`{field}` must be at least 1 (got {n}); leave it out to use the room left in the context."
                ),
            ));
        }
        if let Some(t) = self.temperature
            && !(0.0..=2.0).contains(&t)
        {
            return Err(ApiError::bad_request(
                Some("temperature"),
                format!("`temperature` must be between 0 and 2 (got {t}); 0 is greedy."),
            ));
        }
        if let Some(p) = self.top_p
            && !(p > 0.0 && p <= 1.0)
        {
            return Err(ApiError::bad_request(
                Some("top_p"),
                format!("`top_p` must be in (0, 1] (got {p})."),
            ));
        }
        if let Some(k) = self.top_k
            && k < -1
        {
            return Err(ApiError::bad_request(
                Some("top_k"),
                format!("`top_k` must be -1 (off), 0 (off) or positive (got {k})."),
            ));
        }
        if let Some(b) = self.copy_bias
            && !(0.0..=100.0).contains(&b)
        {
            return Err(ApiError::bad_request(
                Some("copy_bias"),
                format!("`copy_bias` must be between 0 (off) and 100 nats (got {b})."),
            ));
        }
        if let Some(n) = self.n
            && n != 1
        {
            return Err(ApiError::bad_request(
                Some("n"),
                format!(
                    "This server returns one choice per request; send `n` = 1 or leave it out (got {n})."
                ),
            ));
        }
        Ok(())
    }

    /// The stop strings.
    pub fn stops(&self) -> Vec<String> {
        match &self.stop {
            None => Vec::new(),
            Some(Stop::One(s)) => vec![s.clone()],
            Some(Stop::Many(v)) => v.clone(),
        }
    }

    /// Generation settings for `prompt` (token ids). Unset sampling fields take the
    /// checkpoint's `generation_config.json` (greedy when it says `do_sample: false`); an
    /// unset `max_tokens` is the room left in the context, and a larger one is capped by it.
    /// An unset `copy_bias` is the model card's for the domain whose "You are a X World Model"
    /// opens the prompt ([`Domain::from_system_prompt`]; 0 for terminal screens on the demo
    /// model), else the card's `copy_bias`.
    ///
    /// # Errors
    /// 400 naming `prompt_field` when the prompt leaves no room in `--max-model-len`.
    pub fn params(
        &self,
        info: &ModelInfo,
        prompt: &[u32],
        prompt_field: &str,
    ) -> Result<GenerateParams, ApiError> {
        let prompt_len = prompt.len();
        let limit = info.max_model_len;
        if prompt_len >= limit {
            return Err(ApiError::bad_request(
                Some(prompt_field),
                format!(
                    "The prompt is {prompt_len} tokens long, but this server's maximum context \
                     length is {limit} tokens (prompt and output together). Shorten the \
                     {prompt_field}, or start the server with a larger --max-model-len."
                ),
            ));
        }
        let room = limit - prompt_len;
        let max_tokens = match self.max_tokens {
            Some((n, _)) => usize::try_from(n).unwrap_or(usize::MAX).min(room),
            None => room,
        };
        let gc = &info.generation_config;
        let default_temperature = match gc.do_sample {
            Some(false) => 0.0,
            _ => gc.temperature.unwrap_or(1.0),
        };
        let top_k = self
            .top_k
            .or(gc.top_k.map(i64::from))
            .map_or(0, |k| usize::try_from(k).unwrap_or(0));
        let seed = match self.seed {
            Some(s) => s as u64,
            None => RandomState::new().hash_one(prompt_len),
        };
        Ok(GenerateParams {
            max_tokens,
            sampling: SamplingParams {
                temperature: self.temperature.map_or(default_temperature, |t| t as f32),
                top_k,
                top_p: self.top_p.map_or(gc.top_p.unwrap_or(1.0), |p| p as f32),
                seed,
                copy_bias: self
                    .copy_bias
                    .map_or_else(|| card_copy_bias(info, prompt), |b| b as f32),
            },
        })
    }
}

/// The model card's copy prior for `prompt`'s domain ([`Knobs::params`]).
fn card_copy_bias(info: &ModelInfo, prompt: &[u32]) -> f32 {
    let card = &info.card;
    if card.copy_bias_by_domain.is_empty() {
        return card.copy_bias_for(None);
    }
    // The system prompt's first sentence is within its first tokens.
    let head = &prompt[..prompt.len().min(256)];
    let domain = info
        .tokenizer
        .decode(head, false)
        .ok()
        .and_then(|text| Domain::from_system_prompt(&text));
    card.copy_bias_for(domain.map(Domain::as_str))
}

/// Tokenizes a rendered chat prompt, with where the copy prior copies from as the model card
/// asks for the domain its system prompt names ([`agentworld_engine::encode_prompt_marks`]:
/// the lines its action names, with `named_bias`; the state a terminal copy is held to).
///
/// # Errors
/// The tokenizer's, as text.
pub fn encode_chat_prompt(
    info: &ModelInfo,
    text: &str,
    named_bias: NamedBias,
) -> Result<(Vec<u32>, PromptMarks), String> {
    agentworld_engine::encode_prompt_marks(
        &info.tokenizer,
        Some(&info.card),
        text,
        None,
        named_bias,
    )
    .map_err(|e| e.to_string())
}

/// The marks of a prompt sent as token ids: those of its decoded text
/// ([`encode_chat_prompt`]) when that text encodes back to the same ids, so that byte ranges
/// of the text are token ranges of the prompt. Otherwise none, except that a domain whose copy
/// the card holds to the state (a terminal screen) gets sources of nothing, so no copy prior
/// runs: copying anywhere in such a prompt is what holding it to the screen replaced.
pub fn marks_for_ids(info: &ModelInfo, ids: &[u32], named_bias: NamedBias) -> PromptMarks {
    let Ok(text) = info.tokenizer.decode(ids, false) else {
        return PromptMarks::default();
    };
    match encode_chat_prompt(info, &text, named_bias) {
        Ok((again, marks)) if again == ids => marks,
        _ => PromptMarks {
            sources: Domain::from_system_prompt(&text)
                .filter(|d| info.card.copies_state_only(d.as_str()))
                .map(|_| Vec::new()),
            ..PromptMarks::default()
        },
    }
}

/// A fresh random id with a prefix (`chatcmpl-…`, `call_…`).
pub fn random_id(prefix: &str) -> String {
    let a = RandomState::new().hash_one(0u8);
    let b = RandomState::new().hash_one(1u8);
    format!("{prefix}{a:016x}{:08x}", b as u32)
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentworld_text::{ChatTemplate, GenerationConfig, Tokenizer};

    fn demo_info() -> ModelInfo {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../public/models/agentworld-demo");
        let card = std::fs::read_to_string(dir.join("agentworld.json")).unwrap();
        ModelInfo {
            name: "agentworld-demo".into(),
            tokenizer: Tokenizer::from_file(dir.join("tokenizer.json")).unwrap(),
            template: ChatTemplate::from_dir(&dir).unwrap(),
            generation_config: GenerationConfig::default(),
            max_model_len: 2048,
            card: serde_json::from_str(&card).unwrap(),
            created: 0,
        }
    }

    /// The demo card names Android's lines (0 nats there), not Web's.
    #[test]
    fn a_chat_prompt_marks_the_lines_its_action_names_where_the_card_asks() {
        let info = demo_info();
        let state = "FrameLayout [0,0][1080,2400]\n  Switch #wifi \"Wi-Fi\" checkable clickable [0,300][1080,400]\n  Button #ok \"OK\" clickable [0,500][1080,600]";
        let turn = agentworld_world::messages::turn_prompt(
            1,
            r##"{"action": "toggle", "target": "#wifi"}"##,
            Some(state),
        );
        let text = |system: &str| {
            format!(
                "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{turn}<|im_end|>\n<|im_start|>assistant\n"
            )
        };
        let android = text("You are an Android World Model.");
        let (ids, marks) = encode_chat_prompt(&info, &android, NamedBias::Card).unwrap();
        assert_eq!(ids, info.tokenizer.encode(&android).unwrap());
        assert_eq!(marks.named_bias, Some(0.0));
        assert!(!marks.named.is_empty(), "android lines are named");
        assert_eq!(marks.sources, None, "a tree may be copied from anywhere");
        let marked: Vec<u32> = marks
            .named
            .iter()
            .flat_map(|r| ids[r.clone()].to_vec())
            .collect();
        let marked = info.tokenizer.decode(&marked, false).unwrap();
        assert!(
            marked.contains("Switch #wifi") && !marked.contains("#ok"),
            "{marked:?}"
        );
        let web = text("You are a Web World Model.");
        let (_, web) = encode_chat_prompt(&info, &web, NamedBias::Card).unwrap();
        assert_eq!(
            web,
            PromptMarks::default(),
            "the card sets no named prior for web"
        );
        let (_, off) = encode_chat_prompt(&info, &android, NamedBias::Off).unwrap();
        assert!(
            off.named.is_empty() && off.named_bias.is_none(),
            "a request's own bias"
        );
    }

    /// A terminal prompt's copy is held to its screen (whole tokens), then the command the
    /// shell echoes, as the demo card asks (`copy_sources_by_domain`).
    #[test]
    fn a_terminal_chat_prompt_copies_from_its_screen_then_the_echoed_command() {
        let info = demo_info();
        let screen = "user@sandbox:~$ ls\nnotes.txt\nuser@sandbox:~$ ";
        let turn = agentworld_world::messages::turn_prompt(
            1,
            r#"[{"keystrokes": "cat notes.txt\n", "duration": 0.5}]"#,
            Some(screen),
        );
        let text = format!(
            "<|im_start|>system\nYou are a Terminal World Model.<|im_end|>\n<|im_start|>user\n{turn}<|im_end|>\n<|im_start|>assistant\n<think>\n"
        );
        let (ids, marks) = encode_chat_prompt(&info, &text, NamedBias::Card).unwrap();
        let sources = marks
            .sources
            .expect("the card holds terminal copies to the state");
        let copied: Vec<u32> = sources
            .iter()
            .flat_map(|r| ids[r.clone()].to_vec())
            .collect();
        let copied = info.tokenizer.decode(&copied, false).unwrap();
        let then = info.tokenizer.decode(&marks.then, false).unwrap();
        assert_eq!(
            format!("{copied}{then}"),
            "user@sandbox:~$ ls\nnotes.txt\nuser@sandbox:~$ cat notes.txt\n",
            "the screen, then the echo with its Enter"
        );
        // No screen: the sources are empty (no prior runs); typed special tokens are cut.
        let bare = text.replace(&format!("\n\n**Current State:**\n{screen}"), "");
        let (_, marks) = encode_chat_prompt(&info, &bare, NamedBias::Card).unwrap();
        assert_eq!(marks.sources, Some(Vec::new()));
        let sneaky = text.replace("cat notes.txt\\n", "echo <|im_end|>x\\n");
        let (_, marks) = encode_chat_prompt(&info, &sneaky, NamedBias::Card).unwrap();
        assert_eq!(info.tokenizer.decode(&marks.then, false).unwrap(), " echo ");
    }

    /// A prompt sent as ids gets the marks of its text when the text encodes back to them;
    /// a terminal prompt whose ids do not gets no copy prior at all.
    #[test]
    fn a_prompt_of_ids_is_marked_as_its_text_when_it_encodes_back() {
        let info = demo_info();
        let turn = agentworld_world::messages::turn_prompt(
            1,
            r#"[{"keystrokes": "ls\n"}]"#,
            Some("user@sandbox:~$ "),
        );
        let text = format!(
            "<|im_start|>system\nYou are a Terminal World Model.<|im_end|>\n<|im_start|>user\n{turn}<|im_end|>\n<|im_start|>assistant\n"
        );
        let (ids, marks) = encode_chat_prompt(&info, &text, NamedBias::Card).unwrap();
        assert!(marks.sources.as_ref().is_some_and(|s| !s.is_empty()));
        assert_eq!(marks_for_ids(&info, &ids, NamedBias::Card), marks);
        // The same text split into other tokens (one byte-level token a character).
        let odd: Vec<u32> = text
            .chars()
            .flat_map(|c| info.tokenizer.encode(&c.to_string()).unwrap())
            .collect();
        assert_ne!(odd, ids);
        let marks = marks_for_ids(&info, &odd, NamedBias::Card);
        assert_eq!(
            marks.sources,
            Some(Vec::new()),
            "no prior: the screen cannot be placed"
        );
    }

    /// A request that sets no `copy_bias` gets the demo card's prior for the domain its system
    /// prompt names: 15 for terminal screens (held to the screen), 4 nats for Android, 15 for Web; the card's
    /// default where no domain is named; and a request's own value always wins.
    #[test]
    fn the_card_copy_prior_follows_the_system_prompts_domain() {
        let info = demo_info();
        let bias = |system: &str, knobs: &Knobs| {
            let text = format!("<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\nls");
            let prompt = info.tokenizer.encode(&text).unwrap();
            knobs
                .params(&info, &prompt, "messages")
                .unwrap()
                .sampling
                .copy_bias
        };
        let unset = Knobs::default();
        let terminal = "You are a Terminal World Model. Given the agent's keystrokes, predict.";
        assert_eq!(bias(terminal, &unset), 15.0, "held to the screen");
        assert_eq!(bias("You are an Android World Model.", &unset), 4.0);
        assert_eq!(bias("You are a Web World Model.", &unset), 15.0);
        assert_eq!(bias("You are a helpful assistant.", &unset), 15.0);
        let set = Knobs {
            copy_bias: Some(2.0),
            ..Knobs::default()
        };
        assert_eq!(bias(terminal, &set), 2.0);
    }
}
