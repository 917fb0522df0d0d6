//! The order training batches are drawn in: curriculum stages, then the mixed phase, with the
//! optional length ramp ([`TrainConfig::length_ramp`]). Deterministic for a seed, so a
//! resumed run replays it.

use rand::{Rng, SeedableRng, rngs::StdRng};

use super::{LengthRamp, TrainConfig};
use crate::dataset::{Example, batches};

/// The order batches are drawn in: first each [`TrainConfig::curriculum`] stage's batches,
/// from its domain's examples alone (their own epochs); then length-bucketed batches of every
/// other example, reshuffled every epoch ([`batches`]). Deterministic for a seed, so a resumed
/// run replays it.
pub(crate) struct BatchOrder<'a> {
    examples: &'a [Example],
    config: &'a TrainConfig,
    /// Per stage: the step it ends before, and its example indices.
    stages: Vec<(usize, Vec<usize>)>,
    /// Example indices of the mixed phase.
    mixed: Vec<usize>,
    /// The mixed examples by length (shortest first), for the length ramp.
    by_length: Vec<usize>,
    /// The step the mixed phase starts at.
    mixed_start: usize,
    /// Which pool the queue holds (`stages.len()` for the mixed phase), and its epoch.
    pool: usize,
    epoch: u64,
    queue: Vec<Vec<usize>>,
}

impl<'a> BatchOrder<'a> {
    pub(crate) fn new(examples: &'a [Example], config: &'a TrainConfig) -> Self {
        let staged = |d: &str| config.curriculum.iter().any(|s| s.domain == d);
        let mut stages = Vec::new();
        let mut end = 0;
        for stage in &config.curriculum {
            let members: Vec<usize> = (0..examples.len())
                .filter(|&i| examples[i].domain == stage.domain)
                .collect();
            if !members.is_empty() && stage.steps > 0 {
                end += stage.steps;
                stages.push((end, members));
            }
        }
        let mixed: Vec<usize> = (0..examples.len())
            .filter(|&i| !staged(&examples[i].domain))
            .collect();
        let mut by_length = mixed.clone();
        by_length.sort_by_key(|&i| (examples[i].ids.len(), i));
        Self {
            examples,
            config,
            stages,
            mixed,
            by_length,
            mixed_start: end,
            pool: usize::MAX,
            epoch: 0,
            queue: Vec::new(),
        }
    }

    /// Indices into the examples of step `step`'s batch (steps are drawn in order).
    pub(crate) fn next(&mut self, step: usize) -> Vec<usize> {
        let pool = self
            .stages
            .iter()
            .position(|(end, _)| step < *end)
            .unwrap_or(self.stages.len());
        if pool != self.pool {
            self.pool = pool;
            self.epoch = 0;
            self.queue.clear();
        }
        if pool == self.stages.len()
            && let Some(ramp) = self.config.length_ramp
            && step - self.mixed_start < ramp.steps
        {
            return self.ramp_batch(step, ramp);
        }
        if self.queue.is_empty() {
            let members = self.stages.get(pool).map_or(&self.mixed, |(_, m)| m);
            let subset: Vec<Example> = members.iter().map(|&i| self.examples[i].clone()).collect();
            let seed =
                self.config.seed.wrapping_add(self.epoch) ^ (pool as u64).wrapping_mul(0x5eed);
            self.queue = batches(&subset, self.config.tokens_per_batch, seed)
                .into_iter()
                .map(|b| b.into_iter().map(|j| members[j]).collect())
                .collect();
            self.queue.reverse();
            self.epoch += 1;
        }
        self.queue.pop().unwrap_or_default()
    }

    /// A batch of the length ramp: examples of similar length around a random one among
    /// those within the step's limit. Depends only on the seed and the step, so a resumed run
    /// draws it again.
    fn ramp_batch(&self, step: usize, ramp: LengthRamp) -> Vec<usize> {
        let Some(&longest) = self.by_length.last() else {
            return Vec::new();
        };
        let longest = self.examples[longest].ids.len();
        let progress = (step - self.mixed_start) as f64 / ramp.steps.max(1) as f64;
        let limit =
            ramp.start_tokens as f64 + (longest as f64 - ramp.start_tokens as f64) * progress;
        let len = |i: usize| self.examples[self.by_length[i]].ids.len();
        // Eligible: a prefix of the examples sorted by length (at least one).
        let eligible = self
            .by_length
            .partition_point(|&i| self.examples[i].ids.len() as f64 <= limit);
        let eligible = eligible.max(1);
        let mut rng =
            StdRng::seed_from_u64(self.config.seed ^ (step as u64).wrapping_mul(0x9E37_79B9));
        let anchor = rng.random_range(0..eligible);
        // Grow a window of neighbours in length order while the padded size fits.
        let (mut lo, mut hi) = (anchor, anchor + 1);
        loop {
            let can_up = hi < eligible && (hi - lo + 1) * len(hi) <= self.config.tokens_per_batch;
            let can_down = lo > 0 && (hi - lo + 1) * len(hi - 1) <= self.config.tokens_per_batch;
            match (can_up, can_down) {
                (true, true) if rng.random_bool(0.5) => hi += 1,
                (true, _) => hi += 1,
                (_, true) => lo -= 1,
                _ => break,
            }
        }
        self.by_length[lo..hi].to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trainer::CurriculumStage;

    #[test]
    fn the_length_ramp_starts_short_and_grows_to_every_length() {
        let examples: Vec<Example> = (0..200)
            .map(|k| Example {
                ids: vec![1; 10 + k * 5],
                completion_start: 2,
                domain: if k % 10 == 0 { "copy-a" } else { "web" }.into(),
                row_id: k.to_string(),
            })
            .collect();
        let cfg = TrainConfig {
            tokens_per_batch: 2000,
            curriculum: vec![CurriculumStage {
                domain: "copy-a".into(),
                steps: 3,
            }],
            length_ramp: Some(LengthRamp {
                steps: 100,
                start_tokens: 50,
            }),
            ..Default::default()
        };
        let longest = examples.iter().map(|e| e.ids.len()).max().unwrap();
        let mut order = BatchOrder::new(&examples, &cfg);
        for step in 0..3 {
            assert!(
                order
                    .next(step)
                    .iter()
                    .all(|&i| examples[i].domain == "copy-a")
            );
        }
        let mut seen_long = false;
        for step in 3..103 {
            let batch = order.next(step);
            assert!(!batch.is_empty());
            let limit = 50.0 + (longest - 50) as f64 * (step - 3) as f64 / 100.0;
            let lens: Vec<usize> = batch.iter().map(|&i| examples[i].ids.len()).collect();
            assert!(
                lens.iter().all(|&l| l as f64 <= limit.max(15.0)),
                "step {step}: {lens:?} over {limit}"
            );
            assert!(batch.len() * lens.iter().max().unwrap() <= 2000 || batch.len() == 1);
            assert!(batch.iter().all(|&i| examples[i].domain == "web"));
            seen_long |= lens.iter().any(|&l| l > 500);
        }
        assert!(seen_long, "the limit grows");
        // A ramp batch depends on the step alone (a resumed run draws it again).
        let again = BatchOrder::new(&examples, &cfg).ramp_batch(40, cfg.length_ramp.unwrap());
        assert_eq!(again, order.ramp_batch(40, cfg.length_ramp.unwrap()));
        // After the ramp: the usual epochs over every mixed example.
        let after: std::collections::HashSet<usize> =
            (103..400).flat_map(|s| order.next(s)).collect();
        assert_eq!(after.len(), 180);
    }

    #[test]
    fn curriculum_stages_draw_their_domain_alone_then_never_again() {
        let domains = ["copy-a", "copy-b", "web", "web", "copy"];
        let examples: Vec<Example> = (0..50)
            .map(|k| Example {
                ids: vec![1; 5 + k % 7],
                completion_start: 2,
                domain: domains[k % 5].into(),
                row_id: k.to_string(),
            })
            .collect();
        let stage = |d: &str, steps| CurriculumStage {
            domain: d.into(),
            steps,
        };
        let cfg = TrainConfig {
            tokens_per_batch: 24,
            curriculum: vec![stage("copy-a", 4), stage("missing", 9), stage("copy-b", 3)],
            ..Default::default()
        };
        let mut order = BatchOrder::new(&examples, &cfg);
        let of =
            |b: &[usize]| -> Vec<&str> { b.iter().map(|&i| examples[i].domain.as_str()).collect() };
        for step in 0..7 {
            let want = if step < 4 { "copy-a" } else { "copy-b" };
            let b = order.next(step);
            assert!(
                !b.is_empty() && of(&b).iter().all(|d| *d == want),
                "step {step}: {:?}",
                of(&b)
            );
        }
        let later: Vec<usize> = (7..60).flat_map(|s| order.next(s)).collect();
        let later = of(&later);
        assert!(later.contains(&"web") && later.contains(&"copy"));
        assert!(!later.contains(&"copy-a") && !later.contains(&"copy-b"));
        // Without stages (or without their examples) the run is mixed from the first step.
        let plain: Vec<Example> = examples
            .iter()
            .filter(|e| e.domain == "web")
            .cloned()
            .collect();
        assert!(!BatchOrder::new(&plain, &cfg).next(0).is_empty());
    }
}
