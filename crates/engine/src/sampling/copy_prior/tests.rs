use super::*;

#[test]
fn copy_prior_follows_the_copy_across_an_edit_without_looping() {
    // A state of three "lines" 10 11 | 20 21 | 30 31, each ending in 5.
    let prompt = [10, 11, 5, 20, 21, 5, 30, 31, 5];
    let mut p = CopyPrior::new(&prompt, &[]);
    p.push(10);
    assert_eq!(p.continuation(), None, "one token is not a span");
    p.push(11);
    assert_eq!(p.continuation(), Some(5));
    p.push(5);
    assert_eq!(p.continuation(), Some(20));
    // An edit: 99 in place of 20 21; the copy picks up again after it.
    p.push(99);
    assert_eq!(p.continuation(), None);
    p.push(5);
    assert_eq!(p.continuation(), None, "one token is not a span");
    p.push(30);
    assert_eq!(p.continuation(), Some(31));
    // A slip back to the first line does not send the copy round again.
    let mut p = CopyPrior::new(&prompt, &[]);
    [10, 11, 5, 20, 21, 5, 10, 11]
        .into_iter()
        .for_each(|t| p.push(t));
    assert_eq!(p.continuation(), None, "10 11 was copied already");
}

/// At the end of the copied turn the close tokens are asked for, in order and once; after
/// them the prior is off, so whatever follows the close is the model's alone.
#[test]
fn the_end_of_a_span_asks_for_the_close_tokens_once() {
    // prompt: 7 (stop) 10 11 12 7 (stop); closed by 40 7 (close tag, end of turn).
    let prompt = [7, 10, 11, 12, 7];
    let mut prior = CopyPrior::new(&prompt, &[7]).closed_by(&[40, 7]);
    for t in [10, 11] {
        prior.push(t);
    }
    assert_eq!(prior.continuation(), Some(12));
    prior.push(12);
    assert_eq!(prior.continuation(), Some(40), "the state ended: close");
    // A token off the sequence drops it.
    let mut off = prior.clone();
    off.push(99);
    assert_eq!(off.continuation(), None);
    prior.push(40);
    assert_eq!(prior.continuation(), Some(7), "then the end of the turn");
    prior.push(7);
    assert_eq!(prior.continuation(), None, "closed: the prior is off");
    for t in [10, 11] {
        prior.push(t);
        assert_eq!(prior.continuation(), None, "off after the close ({t})");
    }
    // Without closed_by the stop token is still never favoured.
    let mut plain = CopyPrior::new(&prompt, &[7]);
    for t in [10, 11, 12] {
        plain.push(t);
    }
    assert_eq!(plain.continuation(), None);
}

/// On a named line the bonus is the named one; elsewhere, and after the copy leaves the
/// line, the prior is as before. The gate holds everywhere.
#[test]
fn a_named_line_is_copied_under_its_own_bias() {
    // Lines 10 11 5 | 20 21 5 | 30 31 5; the middle line (positions 3..6) is named.
    let prompt = [10, 11, 5, 20, 21, 5, 30, 31, 5];
    let mut prior = CopyPrior::new(&prompt, &[])
        .outright_below(0.5)
        .named(&[3..6, 40..50], 0.5);
    // Unsure of 7 (p < 0.5), sure of nothing: off the named line, the copy is taken.
    let unsure = [0.0f32; 8];
    for t in [10, 11] {
        prior.push(t);
    }
    assert_eq!(prior.bias(15.0), 15.0);
    assert!(prior.takes_outright(&unsure, 5));
    prior.push(5);
    assert_eq!(prior.continuation(), Some(20));
    assert_eq!(prior.bias(15.0), 0.5, "the next token is on the named line");
    assert!(
        prior.takes_outright(&unsure, 20),
        "an unsure model still copies"
    );
    let mut sure = [0.0f32; 8];
    sure[7] = 10.0;
    assert!(!prior.takes_outright(&sure, 20), "a sure one is weighed");
    // An edit on the named line; the copy resumes on the next line at the usual bias.
    for t in [99, 5, 30] {
        prior.push(t);
    }
    assert_eq!(prior.continuation(), Some(31));
    assert_eq!(prior.bias(15.0), 15.0);
}

/// Left on a named line, the copy resumes at the next line once the output breaks its
/// own; on the state's last line, the close follows.
#[test]
fn an_edit_on_a_named_line_resumes_the_copy_after_that_line() {
    // 5 is the newline token; 7 the stop token; 40 the close tag.
    let prompt = [10, 11, 5, 20, 21, 5, 30, 31, 5, 50, 51, 7];
    let prior = |named: std::ops::Range<usize>| {
        CopyPrior::new(&prompt, &[7])
            .closed_by(&[40, 7])
            .named(&[named], 0.0)
            .line_breaks(&[5])
    };
    let mut p = prior(3..6);
    for t in [10, 11, 5, 99] {
        p.push(t);
    }
    assert_eq!(p.continuation(), None, "left the copy");
    p.push(98);
    assert_eq!(p.continuation(), None);
    p.push(5);
    assert_eq!(p.continuation(), Some(30), "the line after the named one");
    assert_eq!(p.bias(15.0), 15.0);
    // Without line breaks the lost copy never comes back (nothing matches 98 5).
    let mut plain = CopyPrior::new(&prompt, &[7]).named(std::slice::from_ref(&(3..6)), 0.0);
    for t in [10, 11, 5, 99, 98, 5] {
        plain.push(t);
    }
    assert_eq!(plain.continuation(), None);
    // The named line is the state's last: its end is the turn's, so the close follows.
    let mut last = prior(9..11);
    for t in [10, 11, 5, 20, 21, 5, 30, 31, 5, 50, 99, 5] {
        last.push(t);
    }
    assert_eq!(last.continuation(), Some(40));
    // Two named lines (a node and its child): the copy resumes at the end of the edited
    // line, not of the run, so the child is still there to copy or edit.
    let mut two = prior(3..9);
    for t in [10, 11, 5, 20, 99, 21, 5] {
        two.push(t);
    }
    assert_eq!(two.continuation(), Some(30));
    assert_eq!(two.bias(15.0), 0.0, "still named");
}

#[test]
fn a_patch_does_not_end_a_named_line_it_copied_unchanged() {
    // 5 is the newline token (6 another token that breaks a line); 7 the stop token.
    let prompt = [10, 11, 5, 20, 21, 22, 5, 30, 31, 5, 7];
    let prior = || {
        CopyPrior::new(&prompt, &[7])
            .named(std::slice::from_ref(&(3..7)), 2.0)
            .line_breaks(&[5, 6])
            .edits_named()
    };
    // Unsure logits over a vocabulary of 40: the breaks hold little of the probability.
    let unsure = vec![0.0f32; 40];
    let mut p = prior();
    for t in [5, 20, 21] {
        p.push(t);
        assert!(p.banned(&unsure).is_empty(), "mid-line: nothing banned");
    }
    p.push(22);
    assert_eq!(p.continuation(), None, "the break is not favoured");
    assert_eq!(
        p.banned(&unsure),
        [5, 6],
        "every token that breaks the line"
    );
    // The model sure of the break (a place to insert after): it may end the line.
    let mut sure = vec![0.0f32; 40];
    sure[5] = 10.0;
    assert!(p.banned(&sure).is_empty());
    // Once the line is edited, it may end.
    let mut edited = prior();
    for t in [5, 20, 23, 22] {
        edited.push(t);
    }
    assert!(edited.banned(&unsure).is_empty());
    // A line that is not named may be copied unchanged.
    let mut other = prior();
    for t in [30, 31] {
        other.push(t);
    }
    assert!(other.banned(&unsure).is_empty());
    assert_eq!(other.continuation(), Some(5));
    // Without `edits_named` (a whole-state model) the named line ends as copied.
    let mut full = CopyPrior::new(&prompt, &[7])
        .named(std::slice::from_ref(&(3..7)), 2.0)
        .line_breaks(&[5, 6]);
    for t in [5, 20, 21, 22] {
        full.push(t);
    }
    assert!(full.banned(&unsure).is_empty());
    assert_eq!(full.continuation(), Some(5));
}

/// A copy lost for a few tokens resumes near where it was, not at the latest match: a
/// tree repeats short token runs on many lines, and the latest one is near the state's end.
#[test]
fn a_lost_copy_resumes_near_its_last_place() {
    let prompt = [10, 11, 12, 13, 14, 15, 50, 12, 13, 16];
    let mut prior = CopyPrior::new(&prompt, &[]);
    for t in [10, 11] {
        prior.push(t);
    }
    assert_eq!(prior.continuation(), Some(12));
    for t in [99, 12] {
        prior.push(t);
        assert_eq!(prior.continuation(), None, "lost after {t}");
    }
    prior.push(13);
    assert_eq!(
        prior.continuation(),
        Some(14),
        "12 13 again at 2-3, not 7-8"
    );
}

/// With sources the copy starts at their top on their first token, never leaves them, and
/// ends where they end: the echo follows, then the prior is off.
#[test]
#[allow(clippy::single_range_in_vec_init)] // lists of spans, some of one
fn sources_bound_the_copy() {
    // An earlier screen 1 2 5 | 1 3 (positions 0..5), then the current one 1 2 5 | 1 3 5 | 1
    // (positions 6..13, the source), then a stop token 7.
    let prompt = [1, 2, 5, 1, 3, 9, 1, 2, 5, 1, 3, 5, 1, 7];
    let prior = || {
        CopyPrior::new(&prompt, &[7])
            .sources(&[6..13])
            .then(&[40, 41])
    };
    let mut p = prior();
    p.push(1);
    assert_eq!(p.continuation(), Some(2), "the top, on one token");
    for t in [2, 5, 1, 3, 5] {
        assert_eq!(p.continuation(), Some(t));
        p.push(t);
    }
    assert_eq!(p.continuation(), Some(1));
    p.push(1);
    assert_eq!(p.continuation(), Some(40), "the sources ended: the echo");
    p.push(40);
    assert_eq!(p.continuation(), Some(41));
    p.push(41);
    assert_eq!(p.continuation(), None, "off after the echo");
    for t in [1, 2] {
        p.push(t);
        assert_eq!(p.continuation(), None, "off ({t})");
    }
    // Off the echo, the prior is off too; without an echo it is off at the end.
    let mut off = prior();
    for t in [1, 2, 5, 1, 3, 5, 1, 99, 40] {
        off.push(t);
    }
    assert_eq!(off.continuation(), None);
    let mut plain = CopyPrior::new(&prompt, &[7]).sources(&[6..13]);
    for t in [1, 2, 5, 1, 3, 5, 1] {
        plain.push(t);
    }
    assert_eq!(plain.continuation(), None, "no echo");
    // A lost copy is placed again inside the sources only: once the source's 1 3 (9-10) is
    // copied, the earlier screen's 1 3 (3-4) still matches, but is not taken.
    let slip = [1, 2, 5, 1, 3, 99, 1, 3];
    let mut lost = prior();
    slip.into_iter().for_each(|t| lost.push(t));
    assert_eq!(lost.continuation(), None);
    let mut anywhere = CopyPrior::new(&prompt, &[7]);
    slip.into_iter().for_each(|t| anywhere.push(t));
    assert_eq!(
        anywhere.continuation(),
        Some(9),
        "the earlier screen, without sources"
    );
    // Gated, the echo is taken outright however sure the model is of something else.
    let mut gated = prior().outright_below(0.5);
    for t in [1, 2, 5, 1, 3, 5, 1] {
        gated.push(t);
    }
    let mut sure = [0.0f32; 64];
    sure[9] = 20.0;
    assert!(gated.takes_outright(&sure, 40), "the echo's first token");
    gated.push(40);
    assert!(gated.takes_outright(&sure, 41), "and the rest of it");
    // Opened by 50 51, the top is asked for at once; another first token is the model's.
    let mut opened = prior().opened_by(&[50, 51]);
    for t in [50, 51] {
        assert_eq!(opened.continuation(), None);
        opened.push(t);
    }
    assert_eq!(
        opened.continuation(),
        Some(1),
        "the top, once the block opens"
    );
    opened.push(1);
    assert_eq!(opened.continuation(), Some(2));
    let mut other = prior().opened_by(&[50, 51]);
    for t in [50, 51, 3] {
        other.push(t);
    }
    assert_eq!(
        other.continuation(),
        None,
        "not placed by a token off the top"
    );
    // Without sources the first token alone places nothing.
    let mut whole = CopyPrior::new(&prompt, &[7]);
    whole.push(1);
    assert_eq!(whole.continuation(), None);
}
