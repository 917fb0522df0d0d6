//! The seven AgentWorld domains and their benchmark names.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{Error, Result};

/// One of the seven environments a world model simulates.
///
/// The string form is the benchmark's `task` value (`terminal`, `search`, `mcp`, `swe`, `web`,
/// `android`, `os`). Parsing accepts a task written `a/b` and reads it as `b`, ignores ASCII case
/// and surrounding whitespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Domain {
    /// A shell in a terminal; actions are keystrokes.
    Terminal,
    /// Web search tools (web_search, web_extractor, dict_memory).
    Search,
    /// MCP tool servers; actions are JSON tool calls.
    Mcp,
    /// Software-engineering tools over a code repository.
    Swe,
    /// Web pages (accessibility tree / DOM text); BrowserGym-style actions.
    Web,
    /// Android screens (UI hierarchy); UI actions.
    Android,
    /// A desktop (accessibility tree); pyautogui code.
    Os,
}

/// The valid names, in benchmark order, for error messages.
const VALID: &str = "terminal, search, mcp, swe, web, android, os";

impl Domain {
    /// All domains, in the order the benchmark lists them.
    pub const ALL: [Domain; 7] = [
        Domain::Terminal,
        Domain::Search,
        Domain::Mcp,
        Domain::Swe,
        Domain::Web,
        Domain::Android,
        Domain::Os,
    ];

    /// The benchmark's `task` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Terminal => "terminal",
            Domain::Search => "search",
            Domain::Mcp => "mcp",
            Domain::Swe => "swe",
            Domain::Web => "web",
            Domain::Android => "android",
            Domain::Os => "os",
        }
    }

    /// The `X` in the system prompt's "You are a X World Model".
    pub fn world_model_name(self) -> &'static str {
        match self {
            Domain::Terminal => "Terminal",
            Domain::Search => "Search",
            Domain::Mcp => "Tool",
            Domain::Swe => "SWE",
            Domain::Web => "Web",
            Domain::Android => "Android",
            Domain::Os => "Desktop",
        }
    }

    /// The domain a system prompt is written for, from its "You are a X World Model" (the
    /// form every AgentWorld system prompt opens with; `X` as in [`Self::world_model_name`],
    /// ASCII case ignored), looked for in `text`'s first 4096 bytes. `None` where no such
    /// sentence is there, or its `X` is not a domain's.
    pub fn from_system_prompt(text: &str) -> Option<Domain> {
        let head = &text[..text.floor_char_boundary(4096)];
        let lower = head.to_ascii_lowercase();
        lower.match_indices(" world model").find_map(|(end, _)| {
            let before = lower[..end].trim_end();
            let name = before.rsplit(' ').next()?;
            let article = before[..before.len() - name.len()].trim_end();
            (article.ends_with("you are a") || article.ends_with("you are an"))
                .then(|| {
                    Domain::ALL
                        .into_iter()
                        .find(|d| d.world_model_name().eq_ignore_ascii_case(name))
                })
                .flatten()
        })
    }

    /// Whether the state is a GUI screen (web, android, os), for which the GUI rules apply.
    pub fn is_gui(self) -> bool {
        matches!(self, Domain::Web | Domain::Android | Domain::Os)
    }

    /// Whether the system prompt template has `{tool_definitions}` and `{demonstrations}`.
    pub fn has_tool_placeholders(self) -> bool {
        matches!(self, Domain::Mcp | Domain::Search | Domain::Swe)
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Domain {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let trimmed = s.trim();
        let name = trimmed.rsplit('/').next().unwrap_or(trimmed);
        Domain::ALL
            .into_iter()
            .find(|d| d.as_str().eq_ignore_ascii_case(name))
            .ok_or_else(|| Error::UnknownDomain {
                given: s.to_string(),
                valid: VALID,
            })
    }
}

impl Serialize for Domain {
    fn serialize<S: Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Domain {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Domain::ALL {
            assert_eq!(d.as_str().parse::<Domain>().unwrap(), d);
            assert_eq!(d.to_string(), d.as_str());
        }
    }

    #[test]
    fn slash_case_and_space() {
        assert_eq!(
            "agentworld/android".parse::<Domain>().unwrap(),
            Domain::Android
        );
        assert_eq!("a/b/OS ".parse::<Domain>().unwrap(), Domain::Os);
        assert_eq!(" Terminal".parse::<Domain>().unwrap(), Domain::Terminal);
    }

    #[test]
    fn error_lists_valid_names() {
        let err = "browser".parse::<Domain>().unwrap_err().to_string();
        assert!(err.contains("`browser`"), "{err}");
        assert!(
            err.contains("terminal, search, mcp, swe, web, android, os"),
            "{err}"
        );
        assert!("".parse::<Domain>().is_err());
        assert!("web/".parse::<Domain>().is_err());
    }

    #[test]
    fn world_model_names_and_groups() {
        assert_eq!(Domain::Mcp.world_model_name(), "Tool");
        assert_eq!(Domain::Os.world_model_name(), "Desktop");
        for d in Domain::ALL {
            let prompt = crate::prompts::builtin(d);
            assert_eq!(Domain::from_system_prompt(prompt), Some(d), "{d}");
            let templated = format!("<|im_start|>system\n{prompt}<|im_end|>");
            assert_eq!(Domain::from_system_prompt(&templated), Some(d), "{d}");
        }
        assert_eq!(
            Domain::from_system_prompt("You are an evaluator of a Web World Model."),
            None
        );
        assert_eq!(
            Domain::from_system_prompt("You are a Weather World Model."),
            None
        );
        assert_eq!(
            Domain::from_system_prompt("You are a helpful assistant."),
            None
        );
        assert_eq!(
            Domain::from_system_prompt("you are a desktop world model"),
            Some(Domain::Os)
        );
        let gui: Vec<_> = Domain::ALL.into_iter().filter(|d| d.is_gui()).collect();
        assert_eq!(gui, [Domain::Web, Domain::Android, Domain::Os]);
        let tools: Vec<_> = Domain::ALL
            .into_iter()
            .filter(|d| d.has_tool_placeholders())
            .collect();
        assert_eq!(tools, [Domain::Search, Domain::Mcp, Domain::Swe]);
    }

    #[test]
    fn serde_as_string() {
        let json = serde_json::to_string(&Domain::Swe).unwrap();
        assert_eq!(json, "\"swe\"");
        let d: Domain = serde_json::from_str("\"x/mcp\"").unwrap();
        assert_eq!(d, Domain::Mcp);
        assert!(serde_json::from_str::<Domain>("\"nope\"").is_err());
    }
}
