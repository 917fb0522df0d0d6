//! `android-compact`: our one-line-per-node Android form (grammar in the crate README), read by
//! [`parse_compact`] and converted losslessly with [`AndroidTree::to_state_tree`](crate::state::android::AndroidTree::to_state_tree).

use crate::state::android::parse_compact;
use crate::state::{ParsedState, StateParser};
use crate::{Error, Result};

/// The `android-compact` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct AndroidCompact;

/// `[x1,y1][x2,y2]` somewhere in the line.
fn has_bounds(line: &str) -> bool {
    line.split('[').skip(1).any(|part| {
        part.split_once(']').is_some_and(|(inside, _)| {
            inside.split_once(',').is_some_and(|(a, b)| {
                a.trim().parse::<i32>().is_ok() && b.trim().parse::<i32>().is_ok()
            })
        })
    })
}

impl StateParser for AndroidCompact {
    fn name(&self) -> &'static str {
        "android-compact"
    }

    fn description(&self) -> &'static str {
        "agentworld's compact Android form: `  Switch #wifi \"Wi-Fi\" checked clickable [900,200][1040,260]`"
    }

    /// 0.85 when the text (its first 200 lines) parses without warnings and most lines carry
    /// bounds.
    fn detect(&self, text: &str) -> f32 {
        let text = match text.match_indices('\n').nth(199) {
            Some((i, _)) => &text[..i],
            None => text,
        };
        let bounds = super::line_fraction(text, |_| false, has_bounds);
        let first_is_class = text
            .trim_start()
            .starts_with(|c: char| c.is_ascii_alphabetic() || c == '~');
        if bounds < 0.5 || !first_is_class {
            return 0.0;
        }
        // Read with warnings (a skipped indentation level, a cut last line: model output) it is
        // still this format, only less surely.
        match parse_compact(text) {
            Ok(p) if p.warnings.is_empty() => 0.85 * bounds.max(0.8),
            Ok(_) => 0.5 * bounds.max(0.8),
            Err(_) => 0.0,
        }
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let parsed = parse_compact(text).map_err(|e| Error::Unreadable {
            format: self.name().into(),
            message: e.to_string(),
        })?;
        ParsedState::new(
            parsed.tree.to_state_tree(),
            parsed.warnings,
            text,
            "no node line",
        )
    }
}
