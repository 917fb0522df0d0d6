//! Observation patches: a world model that writes only the lines of the next state that
//! differ from the current one, and the world layer that applies them to give the full next
//! state ([`apply_patch`]), so that the playground, the evaluation and the environments see
//! full states whichever form the model writes ([`ObservationForm`]).
//!
//! Qwen-AgentWorld writes every observation in full ([`ObservationForm::Full`]). The demo
//! model is too small to copy a long GUI state and change the one line an action names
//! (issue 34: 0% of changed Web and OS lines right as whole states, 44% and 34% of patches
//! right on drills as patches; docs/demo-model-2026-12-07-line-markers.md), and a patch cuts a
//! GUI step from hundreds of generated tokens to tens.
//!
//! A patch is written in the state's own line format (web accessibility tree, Android
//! hierarchy lines, the desktop's tab-separated rows), one instruction a line:
//!
//! - `(no change)` alone: the state is unchanged ([`NO_CHANGE`]);
//! - `(new state)` as the first line: the lines after it are the whole next state
//!   ([`WHOLE_STATE`]: a page the agent navigated to, or a change a patch cannot place);
//! - `- LINE`: the current line `LINE` is removed;
//! - `+ LINE`: `LINE` is inserted after the line the previous instruction placed (at the top
//!   when none did);
//! - `LINE`: an edited line, in full as it becomes; it replaces the current line it most
//!   resembles (the longest common start plus end, at least half the shorter line; ties go
//!   to the first line after the previous instruction's place). A line copied unchanged is a
//!   place to insert after.
//!
//! Lines are matched without their leading whitespace, and an edited line written without
//! any keeps the indentation of the line it replaces: the benchmark's observation parser
//! trims the block (`agentworld_text::observation::extract_observation`), which takes the
//! first line's indentation.
//!
//! Lines an instruction has placed are not placed again. [`write_patch`] writes a patch only
//! when applying it gives the next state back line for line and it edits fewer than half of
//! the current state's lines (more is another page: a link followed, a screen replaced);
//! otherwise the whole state. Inserted and removed lines do not count: a window opened or
//! closed is a patch, however large.

use serde::{Deserialize, Serialize};
use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};

/// The line a patch-form model writes when the action changes nothing.
pub const NO_CHANGE: &str = "(no change)";

/// The first line of an observation that is the whole next state, from a patch-form model.
pub const WHOLE_STATE: &str = "(new state)";

/// What a world model writes as its observation, per domain (the model card's
/// `observation_form_by_domain`, read by `agentworld_engine::ModelCard`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservationForm {
    /// The whole next state (Qwen-AgentWorld; every model unless its card says otherwise).
    #[default]
    Full,
    /// A patch on the current state ([`apply_patch`]).
    Patch,
}

impl ObservationForm {
    /// The full next state from an observation `written` in this form on `current` (the state
    /// the action acted on): `written` itself for [`Self::Full`], the patch applied for
    /// [`Self::Patch`].
    pub fn full_state(self, current: &str, written: &str) -> String {
        match self {
            ObservationForm::Full => written.to_string(),
            ObservationForm::Patch => apply_patch(current, written).state,
        }
    }

    /// What a model of this form is taught to write for the step from `current` to `next`:
    /// `next` for [`Self::Full`], [`write_patch`] for [`Self::Patch`].
    pub fn written(self, current: &str, next: &str) -> String {
        match self {
            ObservationForm::Full => next.to_string(),
            ObservationForm::Patch => write_patch(current, next),
        }
    }
}

/// Which of the patch forms an observation was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchKind {
    /// [`NO_CHANGE`], or nothing at all.
    Unchanged,
    /// Instructions on the current state.
    Patch,
    /// [`WHOLE_STATE`] and the whole next state.
    Whole,
}

/// A patch applied ([`apply_patch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patched {
    /// The full next state. It ends with a line break when the current state does (a whole
    /// state: as written).
    pub state: String,
    /// The form the patch was written in.
    pub kind: PatchKind,
    /// Instructions that found no line to act on (a removed or edited line like none of the
    /// current state's), 1-based line of the patch and the line; they change nothing.
    pub unplaced: Vec<(usize, String)>,
}

/// Applies the observation `written` (in any of the module's forms) to `current` and gives
/// the full next state. Never fails: an instruction that finds no place is skipped and
/// listed in [`Patched::unplaced`].
pub fn apply_patch(current: &str, written: &str) -> Patched {
    let body = written.trim_matches(|c| c == '\n' || c == '\r');
    let first = body.lines().next().unwrap_or("").trim();
    if body.trim().is_empty() || body.trim() == NO_CHANGE {
        return Patched {
            state: current.to_string(),
            kind: PatchKind::Unchanged,
            unplaced: Vec::new(),
        };
    }
    if first == WHOLE_STATE {
        let rest = body.split_once('\n').map_or("", |(_, rest)| rest);
        return Patched {
            state: rest.to_string(),
            kind: PatchKind::Whole,
            unplaced: Vec::new(),
        };
    }
    // Each line with whether an instruction has placed it.
    let mut lines: Vec<(String, bool)> = current.lines().map(|l| (l.to_string(), false)).collect();
    let mut cursor = 0;
    let mut unplaced = Vec::new();
    for (n, line) in body.lines().enumerate() {
        if line.trim().is_empty() || line.trim() == NO_CHANGE {
            continue;
        }
        if let Some(added) = line.strip_prefix("+ ") {
            lines.insert(cursor, (added.to_string(), true));
            cursor += 1;
        } else if let Some(removed) = line.strip_prefix("- ") {
            match best_line(&lines, removed, cursor) {
                Some(i) => {
                    lines.remove(i);
                    cursor = i;
                }
                None => unplaced.push((n + 1, line.to_string())),
            }
        } else {
            match best_line(&lines, line, cursor) {
                Some(i) => {
                    let edited = if line.starts_with(char::is_whitespace) {
                        line.to_string()
                    } else {
                        let old = &lines[i].0;
                        format!("{}{line}", &old[..old.len() - old.trim_start().len()])
                    };
                    lines[i] = (edited, true);
                    cursor = i + 1;
                }
                None => unplaced.push((n + 1, line.to_string())),
            }
        }
    }
    let mut state = lines
        .into_iter()
        .map(|(l, _)| l)
        .collect::<Vec<_>>()
        .join("\n");
    if current.ends_with('\n') && !state.is_empty() {
        state.push('\n');
    }
    Patched {
        state,
        kind: PatchKind::Patch,
        unplaced,
    }
}

/// The patch a patch-form model is taught to write for the step from `current` to `next`
/// (see the module docs): [`NO_CHANGE`] when their lines are equal; else the changed
/// stretches of a line alignment (Myers, the `similar` crate) as edited, inserted (after the
/// unchanged line before them, copied as the place) and removed lines; else, when that patch
/// does not apply back to `next` exactly or edits half of `current`'s lines or more,
/// [`WHOLE_STATE`] and `next`. No line break at the end.
pub fn write_patch(current: &str, next: &str) -> String {
    let a: Vec<&str> = current.lines().collect();
    let b: Vec<&str> = next.lines().collect();
    if a == b {
        return NO_CHANGE.to_string();
    }
    let whole = format!("{WHOLE_STATE}\n{}", b.join("\n"));
    let mut out: Vec<String> = Vec::new();
    // The boundary of `a` (lines before it) where the applier's next `+` line goes.
    let mut place = 0;
    let mut edits = 0;
    for op in capture_diff_slices_deadline(Algorithm::Myers, &a, &b, super::deadline()) {
        let (tag, ra, rb) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {}
            DiffTag::Delete => {
                out.extend(a[ra.clone()].iter().map(|l| format!("- {l}")));
                place = ra.end;
            }
            DiffTag::Insert => {
                if place != ra.start {
                    // Copy the line before as the place (ra.start > 0: the place starts at 0).
                    out.push(a[ra.start - 1].to_string());
                }
                out.extend(b[rb.clone()].iter().map(|l| format!("+ {l}")));
                place = ra.start;
            }
            DiffTag::Replace => {
                let edited = ra.len().min(rb.len());
                edits += edited;
                out.extend(b[rb.start..rb.start + edited].iter().map(|l| l.to_string()));
                out.extend(
                    b[rb.start + edited..rb.end]
                        .iter()
                        .map(|l| format!("+ {l}")),
                );
                out.extend(
                    a[ra.start + edited..ra.end]
                        .iter()
                        .map(|l| format!("- {l}")),
                );
                place = ra.end;
            }
        }
    }
    let patch = out.join("\n");
    // Checked as the benchmark's parser will hand it back: trimmed.
    let applied = apply_patch(current, patch.trim());
    let back: Vec<&str> = applied.state.lines().collect();
    if applied.unplaced.is_empty() && back == b && edits * 2 < a.len() {
        patch
    } else {
        whole
    }
}

/// The line of `lines` not yet placed that `target` most resembles (see the module docs), at
/// or after `cursor` on a tie; `None` when none resembles it enough.
fn best_line(lines: &[(String, bool)], target: &str, cursor: usize) -> Option<usize> {
    let target = target.trim_start();
    let mut best: Option<(usize, usize)> = None;
    for (i, (line, placed)) in lines.iter().enumerate() {
        if *placed {
            continue;
        }
        let line = line.trim_start();
        let score = if line == target {
            usize::MAX
        } else {
            resemblance(line, target)
        };
        let shorter = line.len().min(target.len());
        if score == 0 || score.saturating_mul(2) < shorter {
            continue;
        }
        let better = match best {
            None => true,
            Some((b, s)) => score > s || (score == s && b < cursor && i >= cursor),
        };
        if better {
            best = Some((i, score));
        }
    }
    best.map(|(i, _)| i)
}

/// Bytes `a` and `b` share at the start plus at the end, at most the shorter's length.
fn resemblance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let start = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let end = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (start + end).min(a.len().min(b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "RootWebArea 'Harbor Lights - Newsletter', focused\n\
\t[12] heading 'Join the newsletter'\n\
\t[13] textbox 'Full name'\n\
\t[14] textbox 'Email', value='ada@example.org'\n\
\t[19] checkbox 'Send me offers', checked='false'\n\
\t[20] button 'Subscribe'\n";

    fn round_trip(current: &str, next: &str) -> String {
        let patch = write_patch(current, next);
        let applied = apply_patch(current, &patch);
        assert_eq!(
            applied.state.lines().collect::<Vec<_>>(),
            next.lines().collect::<Vec<_>>(),
            "patch:\n{patch}"
        );
        assert!(applied.unplaced.is_empty());
        patch
    }

    #[test]
    fn an_edit_is_written_as_the_one_line_it_becomes() {
        let next = PAGE.replace(
            "[13] textbox 'Full name'",
            "[13] textbox 'Full name', value='Ada Lovelace', focused",
        );
        let patch = round_trip(PAGE, &next);
        assert_eq!(
            patch,
            "\t[13] textbox 'Full name', value='Ada Lovelace', focused"
        );
        // The state keeps its final line break, and the line its indentation when the
        // observation parser trims it away.
        assert_eq!(apply_patch(PAGE, &patch).state, next);
        assert_eq!(apply_patch(PAGE, patch.trim()).state, next);
    }

    #[test]
    fn an_unchanged_state_is_the_no_change_line_and_applies_to_itself() {
        assert_eq!(write_patch(PAGE, PAGE), NO_CHANGE);
        for written in [NO_CHANGE, "", "\n(no change)\n"] {
            let applied = apply_patch(PAGE, written);
            assert_eq!(applied.state, PAGE);
            assert_eq!(applied.kind, PatchKind::Unchanged);
        }
    }

    #[test]
    fn an_insert_is_placed_after_the_line_copied_before_it() {
        let current = "frame\tEditor\t\"\"\t\t\t(0, 0)\t(800, 600)\n\
push-button\tSave\t\"\"\t\t\t(10, 10)\t(60, 24)\n\
push-button\tQuit\t\"\"\t\t\t(80, 10)\t(60, 24)\n\
label\tStatus\t\"\"\tReady\t\t(10, 570)\t(200, 20)\n\
label\tLine 1, Column 1\t\"\"\t\t\t(600, 570)\t(180, 20)";
        let dialog = "frame\tSettings\t\"\"\t\t\t(177, 80)\t(360, 200)\n\
check-box\tDark Mode\t\"\"\t\tunchecked\t(193, 124)\t(200, 24)";
        let next = current.replace(
            "(60, 24)\npush-button\tQuit",
            &format!("(60, 24)\n{dialog}\npush-button\tQuit"),
        );
        let patch = round_trip(current, &next);
        assert_eq!(
            patch.lines().collect::<Vec<_>>(),
            [
                "push-button\tSave\t\"\"\t\t\t(10, 10)\t(60, 24)",
                "+ frame\tSettings\t\"\"\t\t\t(177, 80)\t(360, 200)",
                "+ check-box\tDark Mode\t\"\"\t\tunchecked\t(193, 124)\t(200, 24)",
            ]
        );
        // At the top, no line needs copying.
        let top = format!("{dialog}\n{current}");
        assert!(round_trip(current, &top).starts_with("+ frame\tSettings"));
    }

    #[test]
    fn removed_lines_are_named_and_go() {
        let next = PAGE.replace("\t[19] checkbox 'Send me offers', checked='false'\n", "");
        let patch = round_trip(PAGE, &next);
        assert_eq!(patch, "- \t[19] checkbox 'Send me offers', checked='false'");
    }

    #[test]
    fn an_edit_replaces_the_line_it_resembles_not_its_neighbour() {
        let current = "check-box\tDark Mode\t\"\"\t\tunchecked\t(193, 124)\t(200, 24)\n\
check-box\tNotifications\t\"\"\t\tchecked\t(193, 156)\t(200, 24)";
        let applied = apply_patch(
            current,
            "check-box\tDark Mode\t\"\"\t\tchecked\t(193, 124)\t(200, 24)",
        );
        assert_eq!(
            applied.state,
            "check-box\tDark Mode\t\"\"\t\tchecked\t(193, 124)\t(200, 24)\n\
check-box\tNotifications\t\"\"\t\tchecked\t(193, 156)\t(200, 24)"
        );
    }

    #[test]
    fn a_new_page_is_written_whole() {
        let next = "RootWebArea 'Ironwood - Products', focused\n\t[28] heading 'Products'\n\
\t[29] link 'Vintage Mug'\n";
        let patch = round_trip(PAGE, next);
        assert!(
            patch.starts_with("(new state)\nRootWebArea 'Ironwood"),
            "{patch}"
        );
        assert_eq!(apply_patch(PAGE, &patch).kind, PatchKind::Whole);
    }

    #[test]
    fn a_line_like_none_is_listed_and_changes_nothing() {
        let applied = apply_patch(PAGE, "\t[13] textbox 'Full name', value='A'\nzzz\n- qqq");
        assert_eq!(
            applied.unplaced,
            [(2, "zzz".to_string()), (3, "- qqq".to_string())]
        );
        assert_eq!(applied.state.lines().count(), PAGE.lines().count());
        assert!(
            applied
                .state
                .contains("[13] textbox 'Full name', value='A'\n")
        );
    }

    #[test]
    fn the_full_form_passes_the_observation_through() {
        assert_eq!(ObservationForm::Full.full_state(PAGE, "x"), "x");
        assert_eq!(ObservationForm::Full.written(PAGE, "x"), "x");
        let next = PAGE.replace("checked='false'", "checked='true'");
        let written = ObservationForm::Patch.written(PAGE, &next);
        assert_eq!(ObservationForm::Patch.full_state(PAGE, &written), next);
    }
}
