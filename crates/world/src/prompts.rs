//! System prompts: our own built-in prompt per domain, the placeholder fill, and a [`PromptSet`]
//! that can take the official prompts from a directory.
//!
//! The built-in texts live in `src/prompts/<domain>.md`. They follow the structure the benchmark's
//! prompts use ("You are a X World Model", GUI rules for web/android/os, one closed
//! `<predicted_observation>` block) in our own words. The mcp, search and swe templates contain
//! the `{tool_definitions}` and `{demonstrations}` placeholders, filled by [`fill_template`].

mod set;

pub use set::{PromptSet, PromptSource};

use crate::Domain;

/// Placeholder for the tool schemas in mcp/search/swe templates.
pub const TOOL_DEFINITIONS: &str = "{tool_definitions}";
/// Placeholder for the example calls in mcp/search/swe templates.
pub const DEMONSTRATIONS: &str = "{demonstrations}";

/// Our built-in system prompt (template) for a domain.
pub fn builtin(domain: Domain) -> &'static str {
    match domain {
        Domain::Terminal => include_str!("prompts/terminal.md"),
        Domain::Search => include_str!("prompts/search.md"),
        Domain::Mcp => include_str!("prompts/mcp.md"),
        Domain::Swe => include_str!("prompts/swe.md"),
        Domain::Web => include_str!("prompts/web.md"),
        Domain::Android => include_str!("prompts/android.md"),
        Domain::Os => include_str!("prompts/os.md"),
    }
}

/// Replaces `{tool_definitions}` and `{demonstrations}` in one left-to-right pass.
///
/// Text inserted for one placeholder is never scanned again, so tool schemas that happen to
/// contain `{demonstrations}` stay as they are. Other braces (JSON examples) are left alone.
pub fn fill_template(template: &str, tool_definitions: &str, demonstrations: &str) -> String {
    let mut out =
        String::with_capacity(template.len() + tool_definitions.len() + demonstrations.len());
    let mut rest = template;
    loop {
        let next_tools = rest.find(TOOL_DEFINITIONS);
        let next_demos = rest.find(DEMONSTRATIONS);
        let (at, placeholder, value) = match (next_tools, next_demos) {
            (Some(t), Some(d)) if d < t => (d, DEMONSTRATIONS, demonstrations),
            (Some(t), _) => (t, TOOL_DEFINITIONS, tool_definitions),
            (None, Some(d)) => (d, DEMONSTRATIONS, demonstrations),
            (None, None) => break,
        };
        out.push_str(&rest[..at]);
        out.push_str(value);
        rest = &rest[at + placeholder.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_names_its_world_model() {
        for d in Domain::ALL {
            let p = builtin(d);
            let head = format!(
                "You are a{} {} World Model.",
                if d == Domain::Android { "n" } else { "" },
                d.world_model_name()
            );
            assert!(p.starts_with(&head), "{d}: {}", &p[..60]);
            assert!(
                p.contains("<predicted_observation>...</predicted_observation>"),
                "{d}"
            );
        }
    }

    #[test]
    fn placeholders_exactly_in_tool_domains() {
        for d in Domain::ALL {
            let p = builtin(d);
            assert_eq!(
                p.contains(TOOL_DEFINITIONS),
                d.has_tool_placeholders(),
                "{d}"
            );
            assert_eq!(p.contains(DEMONSTRATIONS), d.has_tool_placeholders(), "{d}");
        }
    }

    #[test]
    fn gui_prompts_carry_the_gui_rules() {
        for d in [Domain::Web, Domain::Android, Domain::Os] {
            let p = builtin(d).to_lowercase();
            for needle in [
                "screen change",
                "local edit",
                "unchanged",
                "never switch formats",
                "disabled",
            ] {
                assert!(p.contains(needle), "{d} lacks {needle:?}");
            }
            assert!(
                p.contains("exactly one closed <predicted_observation>"),
                "{d}"
            );
        }
    }

    #[test]
    fn fill_is_single_pass() {
        let t = "A {tool_definitions} B {demonstrations} C {tool_definitions} {other}";
        let out = fill_template(t, "[tools with {demonstrations}]", "DEMO");
        assert_eq!(
            out,
            "A [tools with {demonstrations}] B DEMO C [tools with {demonstrations}] {other}"
        );
        assert_eq!(fill_template("none", "x", "y"), "none");
        assert_eq!(
            fill_template("{demonstrations}{tool_definitions}", "T", "D"),
            "DT"
        );
    }

    #[test]
    fn filled_builtin_has_no_placeholder_left() {
        let out = fill_template(
            builtin(Domain::Mcp),
            "{\"name\":\"get_weather\"}",
            "call -> 21C",
        );
        assert!(!out.contains(TOOL_DEFINITIONS) && !out.contains(DEMONSTRATIONS));
        assert!(out.contains("{\"name\":\"get_weather\"}") && out.contains("call -> 21C"));
    }
}
