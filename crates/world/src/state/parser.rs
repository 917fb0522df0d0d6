//! One trait for every state format ([`StateParser`]) and the registry that detects a text's
//! format and parses it ([`Registry`]).

use serde::Serialize;

use super::Warning;
use super::formats;
use super::tree::StateTree;
use crate::{Error, Result};

/// A state read from text: the common tree, what was skipped, and the text itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParsedState {
    /// The tree (its `format` names the parser that read it).
    pub tree: StateTree,
    /// Recoverable oddities, in input order (1-based line and character column).
    pub warnings: Vec<Warning>,
    /// The original text, unchanged.
    #[serde(skip)]
    pub source: String,
}

impl ParsedState {
    /// A parsed state; an empty tree is [`Error::Unreadable`] (nothing could be read).
    pub fn new(
        tree: StateTree,
        warnings: Vec<Warning>,
        source: &str,
        why_empty: &str,
    ) -> Result<ParsedState> {
        if tree.is_empty() {
            let first = warnings
                .first()
                .map(|w| format!(" (first problem: {w})"))
                .unwrap_or_default();
            return Err(Error::Unreadable {
                format: tree.format,
                message: format!("{why_empty}{first}"),
            });
        }
        Ok(ParsedState {
            tree,
            warnings,
            source: source.to_string(),
        })
    }
}

/// A reader of one state format into the common tree.
///
/// Parsers recover what they can: [`parse`](Self::parse) fails only when nothing at all can
/// be read ([`Error::Unreadable`]); everything skipped or repaired is a [`Warning`]. No parser
/// panics on any input or recurses.
pub trait StateParser: Send + Sync {
    /// The format's name as `--format` takes it (`uiautomator`, `html`, `axtree`, …).
    fn name(&self) -> &'static str;

    /// One line on what the format is and where it comes from.
    fn description(&self) -> &'static str;

    /// How sure the parser is that `text` is in its format, from 0.0 (not at all) to 1.0.
    fn detect(&self, text: &str) -> f32;

    /// Reads `text` into the common tree.
    fn parse(&self, text: &str) -> Result<ParsedState>;
}

/// The state parsers, in a fixed order (which breaks detection ties).
pub struct Registry {
    parsers: Vec<Box<dyn StateParser>>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::standard()
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Registry {
    /// Every format this crate reads (see the crate README).
    pub fn standard() -> Registry {
        Registry {
            parsers: formats::all(),
        }
    }

    /// A registry with no parser.
    pub fn empty() -> Registry {
        Registry {
            parsers: Vec::new(),
        }
    }

    /// Adds a parser (it replaces one of the same name).
    pub fn register(&mut self, parser: Box<dyn StateParser>) {
        self.parsers.retain(|p| p.name() != parser.name());
        self.parsers.push(parser);
    }

    /// The parsers' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.parsers.iter().map(|p| p.name()).collect()
    }

    /// The parsers.
    pub fn parsers(&self) -> impl Iterator<Item = &dyn StateParser> {
        self.parsers.iter().map(|p| p.as_ref())
    }

    /// The parser called `name`.
    pub fn get(&self, name: &str) -> Option<&dyn StateParser> {
        self.parsers().find(|p| p.name() == name)
    }

    /// Every parser's confidence for `text`, most confident first (ties in registry order),
    /// those at 0 left out.
    pub fn detect(&self, text: &str) -> Vec<(&'static str, f32)> {
        let mut out: Vec<(&'static str, f32)> = self
            .parsers()
            .map(|p| (p.name(), p.detect(text).clamp(0.0, 1.0)))
            .filter(|(_, c)| *c > 0.0)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out
    }

    /// Reads `text` as `format` (a parser's name), or with `auto` as the most confident
    /// parser; when that one reads nothing, the next most confident are tried and the result
    /// carries a warning saying so.
    pub fn parse(&self, format: &str, text: &str) -> Result<ParsedState> {
        if format != "auto" {
            let parser = self.get(format).ok_or_else(|| Error::UnknownFormat {
                given: format.to_string(),
                valid: self.names().join(", "),
            })?;
            return parser.parse(text);
        }
        let candidates = self.detect(text);
        let mut failures: Vec<String> = Vec::new();
        for (name, _) in &candidates {
            let Some(parser) = self.get(name) else {
                continue;
            };
            match parser.parse(text) {
                Ok(mut parsed) => {
                    if !failures.is_empty() {
                        let msg = format!("read as {name} after: {}", failures.join("; "));
                        parsed.warnings.insert(0, Warning::at_start(msg));
                    }
                    return Ok(parsed);
                }
                Err(e) => failures.push(e.to_string()),
            }
        }
        Err(Error::Unreadable {
            format: "auto".into(),
            message: if failures.is_empty() {
                "no format recognised the text".into()
            } else {
                failures.join("; ")
            },
        })
    }
}

impl Warning {
    /// A warning about the whole text (line 1, column 0).
    pub fn at_start(message: impl Into<String>) -> Warning {
        Warning {
            line: 1,
            column: 0,
            message: message.into(),
        }
    }
}
