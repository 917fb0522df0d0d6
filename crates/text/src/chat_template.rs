//! Chat templates: the Jinja template a checkpoint ships, rendered with MiniJinja so the
//! output is byte-identical to transformers' `apply_chat_template(..., tokenize=False)`.
//!
//! ```
//! use agentworld_text::{ChatMessage, ChatTemplate, RenderOptions};
//!
//! let template = ChatTemplate::agentworld();
//! let prompt = template
//!     .render(&[ChatMessage::user("ls")], &RenderOptions::new().with_generation_prompt(true))
//!     .unwrap();
//! assert_eq!(prompt, "<|im_start|>user\nls<|im_end|>\n<|im_start|>assistant\n<think>\n");
//! ```
//!
//! Known differences from Jinja2, none of which the Qwen templates hit: `~` concatenation
//! of a non-string prints MiniJinja's form (`true`, not `True`; printing and `| string` do
//! follow Python); Python's `repr` of tuples prints as a list; `strftime_now` uses UTC.

mod config;
mod environment;
mod message;
mod pyjson;
mod pystr;
mod strftime;

use std::collections::BTreeMap;
use std::sync::Arc;

use minijinja::value::{Serde, Value};
use serde::Serialize;

pub use config::{SPECIAL_TOKEN_NAMES, special_tokens_from_tokenizer_config};
pub use message::{ChatMessage, FunctionCall, MessageToolCall};
pub use pystr::py_str_repr;

use crate::error::{Error, Result};
use environment::{Clock, TEMPLATE_NAME};

/// The chat template of this project's demo model (Qwen3.5 conventions; see
/// `templates/agentworld.jinja`).
pub const AGENTWORLD_TEMPLATE: &str = include_str!("../templates/agentworld.jinja");

/// What to render besides the messages: the variables transformers passes to a template.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RenderOptions {
    /// Append the header of a new assistant turn (`add_generation_prompt`).
    pub add_generation_prompt: bool,
    /// Tool schemas (`tools`); `None` renders `tools` as `None`, as transformers does.
    pub tools: Option<Vec<serde_json::Value>>,
    /// RAG documents (`documents`); `None` renders as `None`.
    pub documents: Option<Vec<serde_json::Value>>,
    /// `enable_thinking`; `None` leaves it undefined (the template's default applies).
    pub enable_thinking: Option<bool>,
    /// Any other template variables (transformers' `**kwargs`). They override special tokens.
    pub extra: BTreeMap<String, serde_json::Value>,
}

impl RenderOptions {
    /// No generation prompt, no tools, template defaults for everything else.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `add_generation_prompt`.
    pub fn with_generation_prompt(mut self, yes: bool) -> Self {
        self.add_generation_prompt = yes;
        self
    }

    /// Sets `enable_thinking`.
    pub fn with_thinking(mut self, enabled: bool) -> Self {
        self.enable_thinking = Some(enabled);
        self
    }

    /// Sets the tool schemas.
    pub fn with_tools(mut self, tools: Vec<serde_json::Value>) -> Self {
        self.tools = Some(tools);
        self
    }

    /// Adds one extra template variable.
    pub fn with_var(mut self, name: impl Into<String>, value: serde_json::Value) -> Self {
        self.extra.insert(name.into(), value);
        self
    }
}

/// A compiled chat template plus the special tokens it can refer to.
#[derive(Clone)]
pub struct ChatTemplate {
    source: Arc<str>,
    env: Arc<minijinja::Environment<'static>>,
    special_tokens: Vec<(String, String)>,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate")
            .field("source_len", &self.source.len())
            .field("special_tokens", &self.special_tokens)
            .finish_non_exhaustive()
    }
}

impl ChatTemplate {
    /// Compiles a template from its Jinja source.
    ///
    /// # Errors
    /// [`Error::Template`] if the source does not compile.
    pub fn new(source: impl Into<String>) -> Result<Self> {
        let clock: Clock = Arc::new(strftime::system_clock);
        let source: String = source.into();
        let env = environment::build(source.clone(), clock).map_err(Error::Template)?;
        Ok(Self {
            source: source.into(),
            env: Arc::new(env),
            special_tokens: Vec::new(),
        })
    }

    /// The chat template of this project's demo model ([`AGENTWORLD_TEMPLATE`]), with
    /// `eos_token` `<|im_end|>` and `pad_token` `<|endoftext|>`.
    pub fn agentworld() -> Self {
        Self::new(AGENTWORLD_TEMPLATE)
            .expect("the bundled template compiles (checked by tests)")
            .with_special_token("eos_token", "<|im_end|>")
            .with_special_token("pad_token", "<|endoftext|>")
    }

    /// Loads the template and special tokens of a `tokenizer_config.json`.
    ///
    /// A `chat_template` given as a list of named templates yields the one named `"default"`;
    /// use [`ChatTemplate::from_tokenizer_config_named`] for another.
    ///
    /// # Errors
    /// [`Error::Json`]/[`Error::Config`] for a malformed config, [`Error::MissingChatTemplate`]
    /// if it has no template, [`Error::Template`] if the template does not compile.
    pub fn from_tokenizer_config(bytes: &[u8]) -> Result<Self> {
        Self::from_tokenizer_config_named(bytes, None)
    }

    /// Like [`ChatTemplate::from_tokenizer_config`], choosing a named template (e.g.
    /// `"tool_use"`) from the list form.
    ///
    /// # Errors
    /// As [`ChatTemplate::from_tokenizer_config`]; also [`Error::MissingChatTemplate`] if no
    /// template has that name.
    pub fn from_tokenizer_config_named(bytes: &[u8], name: Option<&str>) -> Result<Self> {
        let config = config::parse_object(bytes)?;
        let source = config::select_template(config.get("chat_template"), name)?;
        Ok(Self::new(source)?.with_special_tokens(config::special_tokens(&config)))
    }

    /// Loads a checkpoint directory's template the way transformers 5 does:
    /// `chat_template.jinja` if present, else `chat_template.json`'s `chat_template`, else
    /// `tokenizer_config.json`'s. Special tokens come from `tokenizer_config.json` if present.
    ///
    /// # Errors
    /// [`Error::MissingChatTemplate`] if none of the files has a template; [`Error::Io`],
    /// [`Error::Json`], [`Error::Config`] or [`Error::Template`] for unreadable or bad files.
    #[cfg(feature = "native")]
    pub fn from_dir(dir: impl AsRef<std::path::Path>) -> Result<Self> {
        use crate::error::read_file;
        let dir = dir.as_ref();
        let tokenizer_config = dir.join("tokenizer_config.json");
        let config = if tokenizer_config.is_file() {
            Some(config::parse_object(&read_file(&tokenizer_config)?)?)
        } else {
            None
        };
        let jinja = dir.join("chat_template.jinja");
        let json = dir.join("chat_template.json");
        let source = if jinja.is_file() {
            String::from_utf8(read_file(&jinja)?)
                .map_err(|e| Error::Config(format!("{}: {e}", jinja.display())))?
        } else if json.is_file() {
            let processor = config::parse_object(&read_file(&json)?)?;
            config::select_template(processor.get("chat_template"), None)?
        } else if let Some(config) = &config {
            config::select_template(config.get("chat_template"), None)?
        } else {
            return Err(Error::MissingChatTemplate(format!(
                "no template files in {}",
                dir.display()
            )));
        };
        let specials = config
            .as_ref()
            .map(config::special_tokens)
            .unwrap_or_default();
        Ok(Self::new(source)?.with_special_tokens(specials))
    }

    /// Sets one special-token variable (`eos_token`, `bos_token`, ...).
    pub fn with_special_token(mut self, name: impl Into<String>, token: impl Into<String>) -> Self {
        let name = name.into();
        self.special_tokens.retain(|(n, _)| *n != name);
        self.special_tokens.push((name, token.into()));
        self
    }

    /// Sets several special-token variables, e.g. from [`special_tokens_from_tokenizer_config`].
    pub fn with_special_tokens(self, tokens: impl IntoIterator<Item = (String, String)>) -> Self {
        tokens
            .into_iter()
            .fold(self, |t, (name, token)| t.with_special_token(name, token))
    }

    /// Replaces the clock `strftime_now` reads (seconds since the Unix epoch, UTC). Needed on
    /// `wasm32-unknown-unknown`, which has no system clock; also handy for tests.
    pub fn with_clock(self, clock: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        let clock: Clock = Arc::new(move || Some(clock()));
        let env = environment::build(self.source.to_string(), clock)
            .expect("the template compiled before, so it compiles again");
        Self {
            env: Arc::new(env),
            ..self
        }
    }

    /// The template's Jinja source.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The special-token variables passed to the template.
    pub fn special_tokens(&self) -> &[(String, String)] {
        &self.special_tokens
    }

    /// Renders a conversation into the prompt text.
    ///
    /// `messages` can be [`ChatMessage`]s, `serde_json::Value`s or any type that serialises to
    /// a mapping with `role`, `content`, ... fields. As transformers does, `None` fields are
    /// dropped and `reasoning_content`/`thinking`/`reasoning` are aliased to each other.
    ///
    /// # Errors
    /// [`Error::InvalidMessage`] if a message is not a mapping; [`Error::TemplateRaised`] if
    /// the template calls `raise_exception` (bad input, e.g. no user message);
    /// [`Error::Template`] for any other rendering failure.
    pub fn render<M: Serialize>(&self, messages: &[M], options: &RenderOptions) -> Result<String> {
        let mut ctx: BTreeMap<String, Value> = BTreeMap::new();
        for (name, token) in &self.special_tokens {
            ctx.insert(name.clone(), Value::from(token.as_str()));
        }
        if let Some(thinking) = options.enable_thinking {
            ctx.insert("enable_thinking".into(), Value::from(thinking));
        }
        for (name, value) in &options.extra {
            ctx.insert(name.clone(), Value::from(Serde(value)));
        }
        ctx.insert("messages".into(), message::template_messages(messages)?);
        ctx.insert("tools".into(), Value::from(Serde(&options.tools)));
        ctx.insert("documents".into(), Value::from(Serde(&options.documents)));
        ctx.insert(
            "add_generation_prompt".into(),
            Value::from(options.add_generation_prompt),
        );

        let template = self
            .env
            .get_template(TEMPLATE_NAME)
            .map_err(Error::Template)?;
        template
            .render(Value::from(ctx))
            .map_err(|err| match environment::raised_message(&err) {
                Some(message) => Error::TemplateRaised(message),
                None => Error::Template(err),
            })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn variables_reach_the_template() {
        let t = ChatTemplate::new(
            "{{ messages | length }} {{ tools }} {{ documents }} {{ add_generation_prompt }} \
             {{ eos_token }} {{ bos_token }}|{{ enable_thinking }}|{{ custom }}",
        )
        .unwrap()
        .with_special_token("eos_token", "<e>");
        let msgs = [ChatMessage::user("hi")];
        assert_eq!(
            t.render(&msgs, &RenderOptions::new()).unwrap(),
            "1 None None False <e> ||"
        );
        let opts = RenderOptions::new()
            .with_generation_prompt(true)
            .with_thinking(false)
            .with_tools(vec![json!({"name": "f"})])
            .with_var("custom", json!([1, "x"]))
            .with_var("eos_token", json!("<override>"));
        assert_eq!(
            t.render(&msgs, &opts).unwrap(),
            "1 [{'name': 'f'}] None True <override> |False|[1, 'x']"
        );
    }

    #[test]
    fn raised_exceptions_and_render_errors_are_distinguished() {
        let t = ChatTemplate::new("{% if messages[0].role != 'user' %}{{ raise_exception('first must be user') }}{% endif %}{{ messages[0].content + 1 }}").unwrap();
        let err = t
            .render(&[ChatMessage::system("s")], &RenderOptions::new())
            .unwrap_err();
        assert!(
            matches!(&err, Error::TemplateRaised(m) if m == "first must be user"),
            "{err}"
        );
        let err = t
            .render(&[ChatMessage::user("u")], &RenderOptions::new())
            .unwrap_err();
        assert!(matches!(err, Error::Template(_)), "{err}");
        assert!(matches!(
            ChatTemplate::new("{% if %}"),
            Err(Error::Template(_))
        ));
    }

    #[test]
    fn tokenizer_config_template_and_tokens() {
        let cfg = br#"{"chat_template": [{"name": "default", "template": "{{ eos_token }}D"},
                                         {"name": "tool_use", "template": "T{{ pad_token }}"}],
                       "eos_token": "<|im_end|>", "pad_token": {"content": "<|endoftext|>"}}"#;
        let msgs: [ChatMessage; 0] = [];
        let t = ChatTemplate::from_tokenizer_config(cfg).unwrap();
        assert_eq!(
            t.render(&msgs, &RenderOptions::new()).unwrap(),
            "<|im_end|>D"
        );
        let t = ChatTemplate::from_tokenizer_config_named(cfg, Some("tool_use")).unwrap();
        assert_eq!(
            t.render(&msgs, &RenderOptions::new()).unwrap(),
            "T<|endoftext|>"
        );
        assert!(matches!(
            ChatTemplate::from_tokenizer_config(br#"{"eos_token": "x"}"#),
            Err(Error::MissingChatTemplate(_))
        ));
    }

    #[test]
    fn clock_is_replaceable() {
        let t = ChatTemplate::new("{{ strftime_now('%Y-%m-%d') }}")
            .unwrap()
            .with_clock(|| 86_400);
        let msgs: [ChatMessage; 0] = [];
        assert_eq!(
            t.render(&msgs, &RenderOptions::new()).unwrap(),
            "1970-01-02"
        );
    }
}
