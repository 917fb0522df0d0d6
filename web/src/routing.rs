//! The data behind the MoE view: which experts each layer's router chose for each generated
//! token (reported by the in-browser engine, `web/worker`), how often each domain uses each
//! expert (`routing.json` beside the demo model, written by `agentworld eval routing`), and
//! the same counted live over this session's steps.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One generated token's routing, as the worker reports it (`{"kind":"routing",…}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenRoute {
    /// The token's text.
    pub text: String,
    /// Per layer, the chosen expert ids, highest router probability first: `[layers][top_k]`.
    pub experts: Vec<Vec<u32>>,
    /// Per layer, their renormalised weights: `[layers][top_k]`.
    pub weights: Vec<Vec<f32>>,
}

/// The heatmap of `tokens`: `[layer][expert][token]`, the router weight of the expert for
/// the token (0 where it was not chosen). Expert ids at or past `experts` are ignored.
pub fn heatmap(tokens: &[TokenRoute], layers: usize, experts: usize) -> Vec<Vec<Vec<f32>>> {
    let mut grid = vec![vec![vec![0.0; tokens.len()]; experts]; layers];
    for (t, route) in tokens.iter().enumerate() {
        for (layer, (ids, weights)) in route.experts.iter().zip(&route.weights).enumerate() {
            for (&e, &w) in ids.iter().zip(weights) {
                if let Some(cell) = grid
                    .get_mut(layer)
                    .and_then(|l| l.get_mut(e as usize))
                    .and_then(|row| row.get_mut(t))
                {
                    *cell = w;
                }
            }
        }
    }
    grid
}

/// Expert use of one domain (as `agentworld_train::routing::DomainExperts` writes it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DomainExperts {
    /// Domain.
    pub domain: String,
    /// Rows run.
    pub rows: usize,
    /// Completion tokens counted.
    pub tokens: usize,
    /// Share of each layer's top-k choices per expert: `[layers][num_experts]`.
    pub share: Vec<Vec<f64>>,
}

/// `routing.json`: a model's expert use per domain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExpertUse {
    /// Routed experts per layer.
    pub num_experts: usize,
    /// Experts chosen per token.
    pub top_k: usize,
    /// The layers' mixers.
    pub layer_types: Vec<String>,
    /// Per domain.
    pub domains: Vec<DomainExperts>,
}

impl ExpertUse {
    /// Reads `routing.json`, checking every share table is `[layers][num_experts]`.
    ///
    /// # Errors
    /// Malformed JSON, or a domain whose table has the wrong shape (named).
    pub fn parse(text: &str) -> Result<ExpertUse, String> {
        let u: ExpertUse = serde_json::from_str(text).map_err(|e| format!("routing.json: {e}"))?;
        for d in &u.domains {
            if d.share.len() != u.layer_types.len()
                || d.share.iter().any(|l| l.len() != u.num_experts)
            {
                return Err(format!(
                    "routing.json: domain `{}` has a share table that is not [{} layers][{} experts]",
                    d.domain,
                    u.layer_types.len(),
                    u.num_experts
                ));
            }
        }
        Ok(u)
    }
}

/// Total-variation distance between two share rows (0: same use; 1: disjoint experts).
pub fn distance(a: &[f64], b: &[f64]) -> f64 {
    0.5 * a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum::<f64>()
}

/// Expert choices counted live per domain over this session's generated tokens.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    /// Per domain: `[layer][expert]` counts.
    counts: BTreeMap<String, Vec<Vec<u64>>>,
    /// Per domain: tokens counted.
    tokens: BTreeMap<String, usize>,
}

impl Usage {
    /// Counts one token's choices under `domain`. `experts` sizes the table; a larger expert id
    /// (the model's config not known yet) widens it.
    pub fn add(&mut self, domain: &str, route: &TokenRoute, experts: usize) {
        let table = self.counts.entry(domain.to_string()).or_default();
        if table.len() < route.experts.len() {
            table.resize(route.experts.len(), Vec::new());
        }
        for (row, ids) in table.iter_mut().zip(&route.experts) {
            let wide = ids.iter().map(|&e| e as usize + 1).max().unwrap_or(0);
            if row.len() < experts.max(wide) {
                row.resize(experts.max(wide), 0);
            }
            for &e in ids {
                row[e as usize] += 1;
            }
        }
        *self.tokens.entry(domain.to_string()).or_default() += 1;
    }

    /// The counted domains as share tables, like `routing.json`'s.
    pub fn domains(&self) -> Vec<DomainExperts> {
        self.counts
            .iter()
            .map(|(domain, table)| DomainExperts {
                domain: domain.clone(),
                rows: 0,
                tokens: self.tokens.get(domain).copied().unwrap_or(0),
                share: table
                    .iter()
                    .map(|l| {
                        let total = l.iter().sum::<u64>().max(1) as f64;
                        l.iter().map(|&n| n as f64 / total).collect()
                    })
                    .collect(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(text: &str, experts: Vec<Vec<u32>>) -> TokenRoute {
        let weights = experts
            .iter()
            .map(|l| vec![1.0 / l.len() as f32; l.len()])
            .collect();
        TokenRoute {
            text: text.into(),
            experts,
            weights,
        }
    }

    #[test]
    fn heatmap_puts_each_weight_at_its_layer_expert_and_token() {
        let tokens = [
            route("a", vec![vec![0, 3], vec![1, 2]]),
            route("b", vec![vec![3, 9], vec![2, 1]]),
        ];
        let g = heatmap(&tokens, 2, 4);
        assert_eq!(g[0][0], vec![0.5, 0.0]);
        assert_eq!(g[0][3], vec![0.5, 0.5]);
        assert_eq!(g[1][2], vec![0.5, 0.5]);
        assert_eq!(g[0][1], vec![0.0, 0.0]);
        // Expert 9 is out of range: ignored, nothing else moved.
        let on: usize = g.iter().flatten().flatten().filter(|w| **w > 0.0).count();
        assert_eq!(on, 7);
    }

    #[test]
    fn usage_counts_shares_per_domain() {
        let mut u = Usage::default();
        u.add("web", &route("a", vec![vec![0, 1]]), 4);
        u.add("web", &route("b", vec![vec![0, 2]]), 4);
        u.add("os", &route("c", vec![vec![3, 2]]), 4);
        let d = u.domains();
        assert_eq!(d[0].domain, "os");
        assert_eq!(d[1].tokens, 2);
        assert_eq!(d[1].share[0], vec![0.5, 0.25, 0.25, 0.0]);
        assert_eq!(distance(&d[0].share[0], &d[1].share[0]), 0.75);
        // Before the config is known (0 experts), the table grows to the ids seen.
        let mut early = Usage::default();
        early.add("web", &route("a", vec![vec![2, 0]]), 0);
        assert_eq!(early.domains()[0].share[0], vec![0.5, 0.0, 0.5]);
    }

    #[test]
    fn the_demo_models_routing_json_reads_and_matches_its_config() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../public/models/agentworld-demo");
        let text = std::fs::read_to_string(dir.join("routing.json")).unwrap();
        let u = ExpertUse::parse(&text).unwrap();
        let config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap())
                .unwrap();
        assert_eq!(
            u.num_experts as u64,
            config["num_experts"].as_u64().unwrap()
        );
        assert_eq!(
            u.layer_types.len() as u64,
            config["num_hidden_layers"].as_u64().unwrap()
        );
        assert!(u.domains.len() >= 2);
        for d in &u.domains {
            for layer in &d.share {
                assert!((layer.iter().sum::<f64>() - 1.0).abs() < 1e-6);
            }
        }
        let mut bad: serde_json::Value = serde_json::from_str(&text).unwrap();
        bad["num_experts"] = (u.num_experts + 1).into();
        let err = ExpertUse::parse(&bad.to_string()).unwrap_err();
        assert!(
            err.contains("not [") && err.contains(&u.domains[0].domain),
            "{err}"
        );
    }
}
