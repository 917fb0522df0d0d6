//! Reasoning that restates the edited lines: the thinking of a Web or OS row whose next state
//! changes one or two lines of the current one (a local edit: the same number of lines) ends
//! with those lines as they become (`… It becomes: [13] textbox 'Name', value='Grace'.`).
//!
//! Why: the demo model copies a state well, and writing the edit is where it gives way to the
//! copy (teacher-forced at the first edit of Web and OS rows it puts about 0.9 on the copied
//! token and 0.03–0.2 on the true one). Written first in the reasoning, where nothing is
//! copied, the edited line is then itself a span the observation copies, which is what this
//! model does best. A chain-of-thought step, as in Wei et al. (2022), made to hold the part of
//! the answer that cannot be copied from the prompt.
//!
//! [`ground_thinking`] does the same for the other half of the problem, which element the
//! action hits: the thinking opens with that element's line (`Target: …`), which the world
//! layer finds exactly and the engine writes at decoding for a card that asks for it.
//!
//! Both are options of the demo recipe (`train demo --restate-edits true --target-in-thinking
//! web,os`), off by default; docs/demo-model-research-log.md, (k), has what they measured. Run after
//! renaming ([`super::rename_content`]): the renamer keeps the words of a thinking sentence
//! outside its quotes as wording, and these lines are content.

use agentworld_world::{Domain, Row};

/// What a restated thinking adds before the changed lines.
pub const RESTATE_LEAD: &str = " It becomes: ";

/// Appends the changed lines to the thinking of each Web and OS row (see the module docs)
/// whose target state differs from its current one in one or two lines, the line count
/// unchanged; other rows are left as they are. Returns how many rows were restated.
pub fn restate_edits(rows: &mut [Row]) -> usize {
    rows.iter_mut()
        .map(restate_row)
        .filter(|&done| done)
        .count()
}

fn restate_row(row: &mut Row) -> bool {
    if !matches!(row.domain(), Ok(Domain::Web | Domain::Os)) {
        return false;
    }
    let (before, Ok(after)) = (row.current_state(), row.target_observation()) else {
        return false;
    };
    let Some(thinking) = row.thinking.as_mut() else {
        return false;
    };
    let (old, new): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    if old.len() != new.len() {
        return false;
    }
    let changed: Vec<&str> = old
        .iter()
        .zip(&new)
        .filter(|(a, b)| a != b)
        .map(|(_, b)| b.trim())
        .collect();
    if !(1..=2).contains(&changed.len()) || thinking.contains(RESTATE_LEAD) {
        return false;
    }
    thinking.push_str(RESTATE_LEAD);
    thinking.push_str(&changed.join(" and "));
    thinking.push('.');
    true
}

/// Opens the thinking of each Web and OS row with the line of the element its action names
/// ([`agentworld_world::action::target_lead`]: `Target: <line>\n`, or `Target: none\n`), as a card's
/// `target_in_thinking` has the engine write it at decoding. `formats` gives each domain's
/// state format (`axtree`, `osworld-tsv`); a domain it does not list is left alone. Returns
/// how many rows were grounded. Run after renaming, so the line is the one the row shows.
pub fn ground_thinking(rows: &mut [Row], formats: &[(Domain, &str)]) -> usize {
    rows.iter_mut()
        .map(|r| ground_row(r, formats))
        .filter(|&done| done)
        .count()
}

fn ground_row(row: &mut Row, formats: &[(Domain, &str)]) -> bool {
    let Ok(domain) = row.domain() else {
        return false;
    };
    let Some(&(_, format)) = formats.iter().find(|(d, _)| *d == domain) else {
        return false;
    };
    let Some(turn) = row.turn_idx.checked_sub(1) else {
        return false;
    };
    // The target turn with the observation it acts on before it, as a prompt shows them.
    let mut text = turn
        .checked_sub(1)
        .and_then(|i| row.response.get(i))
        .map(|r| format!("{r}\n\n"))
        .unwrap_or_default();
    let Some(prompt) = row.prompt.get(turn) else {
        return false;
    };
    text.push_str(prompt);
    let (Some(lead), Some(thinking)) = (
        agentworld_world::action::target_lead(&text, domain, format),
        row.thinking.as_mut(),
    ) else {
        return false;
    };
    if thinking.starts_with(agentworld_world::action::TARGET_LEAD) {
        return false;
    }
    thinking.insert_str(0, &lead);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentworld_world::messages::{observation_response, turn_prompt};

    fn row(domain: Domain, turns: &[(&str, Option<&str>, &str)], thinking: &str) -> Row {
        let turns = turns
            .iter()
            .enumerate()
            .map(|(t, (action, state, next))| {
                (
                    turn_prompt(t + 1, action, *state),
                    observation_response(next),
                )
            })
            .collect();
        let mut r = Row::from_turns(domain, "r", "system", turns);
        r.thinking = Some(thinking.into());
        r
    }

    const PAGE: &str = "RootWebArea 'Shop'\n\t[13] textbox 'Name'\n\t[14] button 'Go'";

    #[test]
    fn a_fill_restates_its_line() {
        let next = "RootWebArea 'Shop'\n\t[13] textbox 'Name', value='Ada'\n\t[14] button 'Go'";
        let mut rows = vec![row(
            Domain::Web,
            &[("fill('13', 'Ada')", Some(PAGE), next)],
            "[13] is a textbox.",
        )];
        assert_eq!(restate_edits(&mut rows), 1);
        assert_eq!(
            rows[0].thinking.as_deref(),
            Some("[13] is a textbox. It becomes: [13] textbox 'Name', value='Ada'.")
        );
        // twice is once
        assert_eq!(restate_edits(&mut rows), 0);
    }

    #[test]
    fn the_state_of_a_later_turn_is_the_previous_observation() {
        let one = "RootWebArea 'Shop'\n\t[13] textbox 'Name', value='A'\n\t[14] button 'Go'";
        let two = "RootWebArea 'Shop'\n\t[13] textbox 'Name', value='AB'\n\t[14] button 'Go'";
        let mut rows = vec![row(
            Domain::Web,
            &[
                ("fill('13', 'A')", Some(PAGE), one),
                ("fill('13', 'AB')", None, two),
            ],
            "t.",
        )];
        assert_eq!(restate_edits(&mut rows), 1);
        assert!(
            rows[0]
                .thinking
                .as_deref()
                .unwrap()
                .ends_with("value='AB'.")
        );
    }

    #[test]
    fn the_thinking_opens_with_the_named_element() {
        let next = "RootWebArea 'Shop'\n\t[13] textbox 'Name', value='Ada'\n\t[14] button 'Go'";
        let mut rows = vec![
            row(
                Domain::Web,
                &[("fill('13', 'Ada')", Some(PAGE), next)],
                "a.",
            ),
            row(Domain::Web, &[("click('99')", Some(PAGE), PAGE)], "b."),
            row(
                Domain::Web,
                &[
                    ("fill('13', 'Ada')", Some(PAGE), next),
                    ("click('14')", None, next),
                ],
                "c.",
            ),
            row(Domain::Android, &[("{}", Some("a\nb"), "a\nc")], "d."),
        ];
        let formats = [(Domain::Web, "axtree")];
        assert_eq!(ground_thinking(&mut rows, &formats), 3);
        let thinking: Vec<&str> = rows
            .iter()
            .map(|r| r.thinking.as_deref().unwrap())
            .collect();
        assert_eq!(
            thinking,
            [
                "Target: [13] textbox 'Name'\na.",
                "Target: none\nb.",
                "Target: [14] button 'Go'\nc.",
                "d."
            ]
        );
        assert_eq!(ground_thinking(&mut rows, &formats), 0, "once");
    }

    #[test]
    fn navigation_noops_and_other_domains_are_left_alone() {
        let other = "RootWebArea 'Cart'\n\t[20] heading 'Cart'";
        let three =
            "RootWebArea 'Shop'\n\t[13] textbox 'Name', value='x'\n\t[14] button 'Go', focused";
        let three = three.replace("'Shop'", "'Shop', focused");
        let mut rows = vec![
            row(Domain::Web, &[("click('14')", Some(PAGE), other)], "a."),
            row(Domain::Web, &[("click('99')", Some(PAGE), PAGE)], "b."),
            row(
                Domain::Web,
                &[("fill('13', 'x')", Some(PAGE), &three)],
                "c.",
            ),
            row(Domain::Android, &[("{}", Some("a\nb"), "a\nc")], "d."),
        ];
        assert_eq!(restate_edits(&mut rows), 0);
        for (r, t) in rows.iter().zip(["a.", "b.", "c.", "d."]) {
            assert_eq!(r.thinking.as_deref(), Some(t));
        }
    }
}
