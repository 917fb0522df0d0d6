use super::*;

#[test]
fn copy_bias_flips_a_close_call_but_not_a_confident_edit() {
    let params = SamplingParams {
        copy_bias: 2.0,
        ..SamplingParams::greedy()
    };
    // vocab 4; prompt 0 1 2 3 with 3 a stop token; picked 0 1 so far: 2 continues.
    let mut s = Sampler::new(params).with_copy_prior(CopyPrior::new(&[0, 1, 2, 3], &[3]));
    assert!(!s.is_greedy(), "the prior needs the logits");
    s.sample(&[9.0, 0.0, 0.0, 0.0]);
    s.sample(&[0.0, 9.0, 0.0, 0.0]);
    let mut close = s.clone();
    assert_eq!(close.sample(&[0.0, 0.0, 1.0, 2.5]), 2);
    assert_eq!(s.sample(&[0.0, 0.0, 1.0, 4.0]), 3);
    // After 2 the prompt holds the stop token 3: it is not favoured.
    assert_eq!(
        close.sample(&[0.0, 0.0, 1.0, 0.5]),
        2,
        "3 would win with a bonus"
    );
    // Without the prompt, or with a zero bias, sampling is unchanged.
    let mut plain = Sampler::new(params);
    plain.sample(&[9.0, 0.0, 0.0, 0.0]);
    plain.sample(&[0.0, 9.0, 0.0, 0.0]);
    assert_eq!(plain.sample(&[0.0, 0.0, 1.0, 2.5]), 3);
    assert!(
        Sampler::new(SamplingParams::greedy())
            .with_copy_prior(CopyPrior::new(&[0, 1, 2], &[]))
            .is_greedy()
    );
}

/// Gated, an unsure model's top token no longer outweighs the copy however little the
/// copy's token gets; a sure one is still weighed with the bonus and writes its edit.
#[test]
fn an_unsure_model_keeps_the_copy_and_a_sure_one_writes_its_edit() {
    let params = SamplingParams {
        copy_bias: 2.0,
        ..SamplingParams::greedy()
    };
    // The prompt's state is 0 1 2 0, followed by the stop token 3; 0 1 is copied so far.
    let prior = |state: &[u32]| {
        let mut p = CopyPrior::new(state, &[3]);
        p.push(0);
        p.push(1);
        p
    };
    let long = || prior(&[0, 1, 2, 0, 3]);
    // Unsure (top 5 at p 0.37) and far from the copy's 2 (-6): the plain bonus loses.
    let unsure = [0.0, 0.0, -6.0, 0.0, 1.0, 1.2];
    let mut plain = Sampler::new(params).with_copy_prior(long());
    assert_eq!(plain.sample(&unsure), 5);
    let gated = Sampler::new(params).with_copy_prior(long().outright_below(0.5));
    assert_eq!(
        gated.clone().sample(&unsure),
        2,
        "the copy is taken outright"
    );
    // Sure of 4 (p 0.9), by more than the bonus: the edit is written.
    assert_eq!(gated.clone().sample(&[0.0, 0.0, 1.0, 0.0, 5.0, 0.0]), 4);
    // Sure, but by less than the bonus: the copy still wins.
    assert_eq!(gated.clone().sample(&[0.0, 0.0, 3.5, 0.0, 5.0, 0.0]), 2);
    // In a state 0 1 2, its last token (2) and the close (4) are taken outright, however
    // sure the model is of something else (5: a merged `]\n`).
    let mut end = Sampler::new(params)
        .with_copy_prior(prior(&[0, 1, 2, 3]).closed_by(&[4]).outright_below(0.5));
    assert_eq!(end.sample(&[0.0, 0.0, 0.0, 0.0, 0.0, 9.0]), 2);
    assert_eq!(end.sample(&[0.0, 0.0, 0.0, 0.0, 0.0, 9.0]), 4);
}

/// A repeat is banned once the output holds a span as often as the prompt does, and not
/// before: copying the prompt's repeats stays allowed.
#[test]
#[allow(clippy::single_range_in_vec_init)] // lists of spans, some of one
fn the_loop_guard_bans_a_repeat_beyond_the_prompts() {
    // The prompt holds 1 2 3 twice; the model would write 1 2 3 for ever (vocab 5, 4 ends).
    let mut s = Sampler::new(SamplingParams::greedy())
        .with_loop_guard(LoopGuard::new(&[1, 2, 3, 9, 1, 2, 3], 3).after(0));
    assert!(!s.is_greedy(), "the guard must see every token");
    let next = |last: u32| {
        let mut l = [0.0f32; 5];
        l[(last % 3 + 1) as usize] = 9.0;
        l[4] = 1.0;
        l
    };
    assert_eq!(s.sample(&[9.0, 0.0, 0.0, 0.0, 0.0]), 0, "the gate");
    let mut last = 0;
    let mut picked = Vec::new();
    for _ in 0..10 {
        last = s.sample(&next(last));
        picked.push(last);
        if last == 4 {
            break;
        }
    }
    // 1 2 3 is written twice, as often as the prompt has it; 2 3 1, which the prompt
    // never has, once: its repeat is banned and the model's next choice (4) is taken.
    assert_eq!(picked, [1, 2, 3, 1, 2, 3, 4]);
    // With the block's end after 4, the turn ends there (5), outside the reasoning only.
    let mut s = Sampler::new(SamplingParams::greedy()).with_end_after(Some(0), 4, 5);
    let four = [0.0, 0.0, 0.0, 0.0, 9.0, 0.0];
    assert_eq!(s.sample(&four), 4, "in the reasoning");
    assert_eq!(s.sample(&four), 4, "in the reasoning still");
    assert_eq!(s.sample(&[9.0, 0.0, 0.0, 0.0, 0.0, 0.0]), 0);
    assert_eq!(s.sample(&four), 4);
    assert_eq!(s.sample(&four), 5, "the end follows the block");
    // With a copy prior the guard counts only the model's own tokens: copying 1 2 3 twice
    // more than the prompt holds it is no loop, writing 2 3 1 twice is.
    let params = SamplingParams {
        copy_bias: 20.0,
        ..SamplingParams::greedy()
    };
    let mut s = Sampler::new(params)
        .with_copy_prior(CopyPrior::new(&[1, 2, 3, 1, 2, 3], &[]).sources(&[0..6]))
        .with_loop_guard(LoopGuard::new(&[1, 2, 3, 1, 2, 3], 3));
    let picked: Vec<u32> = (0..13)
        .scan(0, |last, _| {
            *last = s.sample(&next(*last));
            Some(*last)
        })
        .take_while(|&t| t != 4)
        .collect();
    assert_eq!(
        picked,
        [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3],
        "the copy, then the model's own spans as often as the prompt has them"
    );
    // The turn ending inside the block (opened by 3) closes the block first.
    let end = [0.0, 0.0, 0.0, 0.0, 0.0, 9.0];
    let mut s = Sampler::new(SamplingParams::greedy())
        .with_end_after(Some(0), 4, 5)
        .closing_open_block(3);
    assert_eq!(s.sample(&end), 5, "in the reasoning, not touched");
    let mut s = Sampler::new(SamplingParams::greedy())
        .with_end_after(Some(0), 4, 5)
        .closing_open_block(3);
    assert_eq!(s.sample(&[9.0, 0.0, 0.0, 0.0, 0.0, 0.0]), 0);
    assert_eq!(s.sample(&end), 5, "no block open yet");
    let mut s = Sampler::new(SamplingParams::greedy())
        .with_end_after(Some(0), 4, 5)
        .closing_open_block(3);
    assert_eq!(s.sample(&[9.0, 0.0, 0.0, 0.0, 0.0, 0.0]), 0);
    assert_eq!(s.sample(&[0.0, 0.0, 0.0, 9.0, 0.0, 0.0]), 3, "opens");
    assert_eq!(s.sample(&end), 4, "closed first");
    assert_eq!(s.sample(&[0.0, 9.0, 0.0, 0.0, 0.0, 0.0]), 5, "then the end");
    // A guard bans nothing inside the reasoning (before the gate).
    let mut g = LoopGuard::new(&[], 2).after(0);
    [1, 1, 1].into_iter().for_each(|t| g.push(t));
    assert!(g.banned().is_empty());
}

/// The reasoning is closed after its budget, once; a reasoning closed in time is not
/// touched, and neither is anything after the close.
#[test]
fn a_thinking_budget_closes_a_looping_reasoning() {
    // vocab 4; 3 closes the reasoning, 2 opens the answer; the model would loop on 1.
    let looping = [0.0, 9.0, 0.0, 0.0];
    let mut s = Sampler::new(SamplingParams::greedy()).with_thinking_budget(&[3, 2], 2);
    assert!(!s.is_greedy(), "the budget must see every token");
    let picked: Vec<u32> = (0..6).map(|_| s.sample(&looping)).collect();
    assert_eq!(picked, [1, 1, 3, 2, 1, 1]);
    assert!(s.is_greedy(), "closed: plain greedy again");
    // Closed by the model within budget: nothing forced.
    let mut s = Sampler::new(SamplingParams::greedy()).with_thinking_budget(&[3, 2], 2);
    s.sample(&[0.0, 0.0, 0.0, 9.0]);
    assert_eq!(s.sample(&looping), 1);
    assert_eq!(s.sample(&looping), 1);
    assert_eq!(s.sample(&looping), 1);
    // Closed by the model with its last token of budget: not closed twice.
    let mut s = Sampler::new(SamplingParams::greedy()).with_thinking_budget(&[3, 2], 1);
    assert_eq!(s.sample(&[0.0, 0.0, 0.0, 9.0]), 3);
    assert_eq!(s.sample(&looping), 1);
}

/// An answer opened inside the reasoning closes the reasoning first, then the budget's
/// tail is written; after the close, the same token is the model's as usual.
#[test]
fn an_answer_opened_inside_the_reasoning_closes_it_first() {
    // vocab 5; 3 closes the reasoning, 2 opens the answer, 4 is a stop token.
    let opens = [0.0, 0.0, 9.0, 0.0, 0.0];
    let mut s = Sampler::new(SamplingParams::greedy())
        .with_thinking_budget(&[3, 2], 100)
        .closing_before(&[2, 4]);
    assert_eq!(s.sample(&[0.0, 9.0, 0.0, 0.0, 0.0]), 1, "reasoning");
    assert_eq!(s.sample(&opens), 3, "closed first");
    assert_eq!(
        s.sample(&[0.0, 9.0, 0.0, 0.0, 0.0]),
        2,
        "then the opening tag, forced"
    );
    assert!(s.is_greedy(), "the budget is spent");
    assert_eq!(s.sample(&opens), 2, "after the close, the model's own");
    // A stop token inside the reasoning does the same; without a budget, nothing changes.
    let mut s = Sampler::new(SamplingParams::greedy())
        .with_thinking_budget(&[3, 2], 100)
        .closing_before(&[2, 4]);
    assert_eq!(s.sample(&[0.0, 0.0, 0.0, 0.0, 9.0]), 3);
    let mut plain = Sampler::new(SamplingParams::greedy()).closing_before(&[2, 4]);
    assert_eq!(plain.sample(&opens), 2);
}

#[test]
fn a_token_allowed_once_is_not_picked_again() {
    let mut s = Sampler::new(SamplingParams::greedy()).at_most_once(2);
    assert!(!s.is_greedy(), "it must see every token");
    assert_eq!(s.sample(&[0.0, 0.0, 9.0]), 2);
    assert_eq!(s.sample(&[0.0, 1.0, 9.0]), 1, "the next best");
    assert_eq!(s.sample(&[5.0, 1.0, 9.0]), 0);
}

#[test]
fn greedy_picks_argmax_lowest_on_ties() {
    let mut s = Sampler::new(SamplingParams::greedy());
    assert_eq!(s.sample(&[0.1, 3.0, 3.0, -1.0]), 1);
}

#[test]
fn top_k_one_is_greedy_even_when_hot() {
    let mut s = Sampler::new(SamplingParams {
        temperature: 5.0,
        top_k: 1,
        ..Default::default()
    });
    for _ in 0..20 {
        assert_eq!(s.sample(&[0.0, 1.0, 0.5]), 1);
    }
}

#[test]
fn top_p_keeps_only_the_nucleus() {
    // probabilities ~ [0.64, 0.24, 0.09, 0.03]: top_p 0.8 keeps the first two.
    let logits = [3.0f32, 2.0, 1.0, 0.0];
    let mut s = Sampler::new(SamplingParams {
        temperature: 1.0,
        top_p: 0.8,
        seed: 7,
        ..Default::default()
    });
    let mut seen = [0usize; 4];
    for _ in 0..2000 {
        seen[s.sample(&logits) as usize] += 1;
    }
    assert_eq!(seen[2] + seen[3], 0, "{seen:?}");
    assert!(seen[1] > 300 && seen[0] > seen[1], "{seen:?}");
}

#[test]
fn same_seed_same_draws() {
    let logits: Vec<f32> = (0..50).map(|i| (i as f32 * 0.37).sin()).collect();
    let p = SamplingParams {
        temperature: 1.0,
        seed: 42,
        ..Default::default()
    };
    let (mut a, mut b) = (Sampler::new(p), Sampler::new(p));
    let xs: Vec<u32> = (0..30).map(|_| a.sample(&logits)).collect();
    let ys: Vec<u32> = (0..30).map(|_| b.sample(&logits)).collect();
    assert_eq!(xs, ys);
    assert!(xs.iter().collect::<std::collections::BTreeSet<_>>().len() > 5);
}

#[test]
fn a_prior_on_the_named_lines_alone_runs_with_no_copy_bias() {
    // vocab 6; prompt 0 1 2 | 3 4 5 with positions 3..6 named (the line an action edits).
    let prompt = [0, 1, 2, 3, 4, 5];
    let prior = || CopyPrior::new(&prompt, &[]).named(std::slice::from_ref(&(3..6)), 2.0);
    let mut s = Sampler::new(SamplingParams::greedy()).with_copy_prior(prior());
    assert!(!s.is_greedy(), "the named bias keeps the prior");
    // Copying 0 then 1 (off the named line): 2 continues, but gets no bonus.
    s.sample(&[9.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    s.sample(&[0.0, 9.0, 0.0, 0.0, 0.0, 0.0]);
    let mut off = s.clone();
    assert_eq!(off.sample(&[0.0, 0.0, 1.0, 1.5, 0.0, 0.0]), 3);
    // On the named line: 2 then 3 picked, 4 continues it with 2 nats.
    let mut on = s;
    on.sample(&[0.0, 0.0, 9.0, 0.0, 0.0, 0.0]);
    on.sample(&[0.0, 0.0, 0.0, 9.0, 0.0, 0.0]);
    assert_eq!(on.sample(&[0.0, 0.0, 0.0, 0.0, 1.0, 2.5]), 4);
    // A zero named bias and no copy bias: no prior at all.
    assert!(
        Sampler::new(SamplingParams::greedy())
            .with_copy_prior(CopyPrior::new(&prompt, &[]).named(std::slice::from_ref(&(3..6)), 0.0))
            .is_greedy()
    );
}
