//! Whether a world model's reasoning agrees with the state it predicts (issue 34's
//! `agreement=` figure): a model whose thinking says "the click unchecks [19]" and whose
//! observation checks it tells the agent two different worlds.
//!
//! The check reads three things from the reasoning, in the phrasing of the demo data's
//! reasoning (`agentworld_data`: web `Effect::thinking`, the desktop and Android
//! steps), which is the phrasing the demo model learns:
//! - whether it says nothing changes (`nothing changes`, `changes nothing`, `state is
//!   unchanged`, `returned unchanged`, `no effect`, `goes nowhere`);
//! - the element it names first: a web bid `[12]`, an Android `#resource-id`, a desktop
//!   toggle's `'name'` (other desktop reasoning quotes window titles and typed text);
//! - the direction of a toggle: on (`checks`, `becomes checked`, `turns it on`, `-> true`)
//!   or off (`unchecks`, `becomes unchecked`, `turns it off`, `-> false`).
//!
//! The reasoning agrees when it says nothing changes and the predicted state is the current
//! one; or it says something changes, the predicted state differs, the named element's line
//! or a line of its subtree is among the changed lines (when the element is on both screens:
//! a link followed leaves it behind), and a toggle's direction is the predicted line's
//! checked state.

use agentworld_world::diff::{LineOp, line_diff};

/// What a reasoning text says about a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// It says the state stays as it is.
    pub unchanged: bool,
    /// The element it names first, as it appears on a state line (`[12]`, `#wifi`,
    /// `\tDark Mode\t`), if any.
    pub element: Option<String>,
    /// A toggle's direction: `Some(true)` on, `Some(false)` off.
    pub checked: Option<bool>,
}

/// Reads `thinking` for `domain` (`web`, `android`, `os`; other domains name no element).
pub fn claim(domain: &str, thinking: &str) -> Claim {
    let t = thinking.to_lowercase();
    // "The screen beneath is unchanged" (a dialog closed) is not one.
    let unchanged = [
        "nothing changes",
        "changes nothing",
        "state is unchanged",
        "returned unchanged",
        "no effect",
        "goes nowhere",
    ]
    .iter()
    .any(|p| t.contains(p));
    let off = ["unchecks", "becomes unchecked", "turns it off", "-> false"]
        .iter()
        .any(|p| t.contains(p));
    let on = [" checks", "becomes checked", "turns it on", "-> true"]
        .iter()
        .any(|p| t.contains(p));
    let checked = match (on, off) {
        (true, false) => Some(true),
        (false, true) => Some(false),
        _ => None,
    };
    let element = match domain {
        "web" => between(thinking, '[', ']').map(|id| format!("[{id}]")),
        "android" => thinking
            .split_whitespace()
            .find_map(|w| w.strip_prefix('#'))
            .map(|id| {
                let id: String = id
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || "_:/.".contains(*c))
                    .collect();
                format!("#{}", id.trim_end_matches('.'))
            })
            .filter(|id| id.len() > 1),
        // A desktop reasoning quotes window titles and typed text too: only a toggle's
        // quoted name is the element that changes.
        "os" if checked.is_some() => {
            between(thinking, '\'', '\'').map(|name| format!("\t{name}\t"))
        }
        _ => None,
    };
    Claim {
        unchanged,
        element,
        checked,
    }
}

/// The text between the first `open` and the next `close` in `text`, when not empty.
fn between(text: &str, open: char, close: char) -> Option<&str> {
    let start = text.find(open)? + open.len_utf8();
    let len = text[start..].find(close)?;
    Some(&text[start..start + len]).filter(|s| !s.is_empty())
}

/// Whether `line` shows a checked box in `domain`'s state format; `None` when it says
/// neither.
fn line_checked(domain: &str, line: &str) -> Option<bool> {
    match domain {
        "web" => {
            if line.contains("checked='true'") || line.contains("checked=True") {
                Some(true)
            } else if line.contains("checked='false'") || line.contains("checked=False") {
                Some(false)
            } else {
                None
            }
        }
        "android" => {
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.contains(&"checked") {
                Some(true)
            } else if words.contains(&"checkable") {
                Some(false)
            } else {
                None
            }
        }
        "os" => {
            let fields: Vec<&str> = line.split('\t').collect();
            if fields.contains(&"unchecked") {
                Some(false)
            } else if fields.contains(&"checked") {
                Some(true)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Whether the reasoning `thinking` agrees with the predicted state `predicted` for the step
/// from `current` (see the module docs).
pub fn agrees(domain: &str, thinking: &str, current: &str, predicted: &str) -> bool {
    let claim = claim(domain, thinking);
    let changes = line_diff(current, predicted);
    if claim.unchanged {
        return changes.is_empty();
    }
    if changes.is_empty() {
        return false;
    }
    let Some(element) = &claim.element else {
        return true;
    };
    let on = |text: &str| text.lines().any(|l| l.contains(element.as_str()));
    if !(on(current) && on(predicted)) {
        return true;
    }
    // The element's lines in the prediction, each with its subtree (the lines after it that
    // are indented deeper: a list scrolled changes its items, not its own line).
    let lines: Vec<&str> = predicted.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut subtree = std::collections::HashSet::new();
    for (i, line) in lines.iter().enumerate() {
        if line.contains(element.as_str()) {
            subtree.insert(*line);
            for below in &lines[i + 1..] {
                if indent(below) <= indent(line) {
                    break;
                }
                subtree.insert(*below);
            }
        }
    }
    let changed: Vec<&str> = changes
        .iter()
        .filter(|c| c.op == LineOp::Added && subtree.contains(c.text.as_str()))
        .map(|c| c.text.as_str())
        .collect();
    if changed.is_empty() {
        return false;
    }
    match claim.checked {
        Some(want) => changed
            .iter()
            .filter(|l| l.contains(element.as_str()))
            .any(|l| line_checked(domain, l) == Some(want)),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "RootWebArea 'Newsletter', focused\n\t[13] textbox 'Full name'\n\t[19] checkbox 'Offers', checked='true'\n";

    #[test]
    fn a_toggle_agrees_only_in_the_direction_it_names() {
        let unchecked = PAGE.replace("checked='true'", "checked='false'");
        let said = "[19] is a checkbox, so the click unchecks it.";
        assert!(agrees("web", said, PAGE, &unchecked));
        let wrong = "[19] is a checkbox, so the click checks it.";
        assert!(!agrees("web", wrong, PAGE, &unchecked));
        // The right direction on the wrong element is no agreement either.
        let other = unchecked.replace("'Full name'", "'Full name', focused");
        let elsewhere = PAGE.replace("'Full name'", "'Full name', focused");
        assert!(!agrees("web", said, PAGE, &elsewhere));
        assert!(agrees("web", said, PAGE, &other));
    }

    #[test]
    fn nothing_changes_agrees_with_the_state_copied() {
        let said = "[13] is disabled, so nothing changes.";
        assert!(agrees("web", said, PAGE, PAGE));
        assert!(!agrees("web", said, PAGE, &PAGE.replace("Full", "Fool")));
        // A change claimed but nothing written.
        assert!(!agrees(
            "web",
            "[13] is a textbox, so fill replaces its value with 'A'.",
            PAGE,
            PAGE
        ));
    }

    #[test]
    fn a_page_left_behind_is_no_contradiction() {
        let next = "RootWebArea 'Products', focused\n\t[28] heading 'Products'\n";
        let said = "[13] is a link to 'Products', so the browser shows that page.";
        assert!(agrees("web", said, PAGE, next));
    }

    #[test]
    fn android_and_desktop_reasoning_name_their_elements() {
        let c = claim(
            "android",
            "Local edit: #wifi is checkable, so the tap turns it off (checked true -> false); every other node stays as it was.",
        );
        assert_eq!(c.element.as_deref(), Some("#wifi"));
        assert_eq!(c.checked, Some(false));
        let before = "FrameLayout\n  Switch #wifi checkable checked\n";
        let after = "FrameLayout\n  Switch #wifi checkable\n";
        let said =
            "Local edit: #wifi is checkable, so the tap turns it off (checked true -> false).";
        assert!(agrees("android", said, before, after));
        assert!(!agrees("android", said, before, before));
        let os = claim(
            "os",
            "The click lands on the 'Dark Mode' check box, so it becomes checked.",
        );
        assert_eq!(os.element.as_deref(), Some("\tDark Mode\t"));
        assert_eq!(os.checked, Some(true));
        let before = "check-box\tDark Mode\t\"\"\t\tunchecked\t(1, 2)\t(3, 4)";
        let after = "check-box\tDark Mode\t\"\"\t\tchecked\t(1, 2)\t(3, 4)";
        assert!(agrees(
            "os",
            "The click lands on the 'Dark Mode' check box, so it becomes checked.",
            before,
            after
        ));
        assert!(!agrees(
            "os",
            "The click lands on the 'Dark Mode' check box, so it becomes unchecked.",
            before,
            after
        ));
    }

    #[test]
    fn the_data_reasoning_agrees_with_its_own_next_state() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../public/models/agentworld-demo/heldout.jsonl");
        let rows = agentworld_world::row::read_jsonl_file(path).unwrap();
        for domain in ["web", "os", "android"] {
            let (mut n, mut agreed, mut named) = (0, 0, 0);
            for row in rows.iter().filter(|r| r.task == domain) {
                let (current, truth) = (row.current_state(), row.target_observation().unwrap());
                if current.trim() == truth.trim() {
                    continue;
                }
                let thinking = row.thinking.as_deref().unwrap_or("");
                n += 1;
                agreed += usize::from(agrees(domain, thinking, &current, &truth));
                named += usize::from(claim(domain, thinking).element.is_some());
            }
            assert!(n >= 40, "{domain}: {n}");
            assert!(agreed * 100 >= n * 97, "{domain}: {agreed} of {n}");
            assert!(named * 10 >= n, "{domain}: {named} of {n} name an element");
        }
    }
}
