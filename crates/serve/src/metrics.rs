//! Counters and gauges for `GET /metrics`, in the Prometheus text format.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The window over which `agentworld_generation_tokens_per_second` is averaged.
const RATE_WINDOW: Duration = Duration::from_secs(10);

/// Server-wide statistics, shared by the HTTP handlers and the engine thread.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
    prompt_tokens: AtomicU64,
    generation_tokens: AtomicU64,
    cancelled: AtomicU64,
    decode_steps: AtomicU64,
    /// Requests accepted but not yet running.
    pub queue_depth: AtomicUsize,
    /// Sequences in the running decode batch.
    pub running: AtomicUsize,
    recent: Mutex<VecDeque<(Instant, u64)>>,
}

impl Metrics {
    /// Counts a finished (or refused) request by endpoint and HTTP status.
    pub fn request(&self, endpoint: &'static str, status: u16) {
        if let Ok(mut map) = self.requests.lock() {
            *map.entry((endpoint, status)).or_default() += 1;
        }
    }

    /// Counts the tokens of an accepted prompt.
    pub fn prompt(&self, tokens: usize) {
        self.prompt_tokens
            .fetch_add(tokens as u64, Ordering::Relaxed);
    }

    /// Counts a sequence dropped because its client went away.
    pub fn cancelled(&self) {
        self.cancelled.fetch_add(1, Ordering::Relaxed);
    }

    /// Records one decode step (or prefill) that generated `tokens` tokens.
    pub fn generated(&self, tokens: usize) {
        self.generation_tokens
            .fetch_add(tokens as u64, Ordering::Relaxed);
        self.decode_steps.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut recent) = self.recent.lock() {
            let now = Instant::now();
            recent.push_back((now, tokens as u64));
            while recent
                .front()
                .is_some_and(|(t, _)| now.duration_since(*t) > RATE_WINDOW)
            {
                recent.pop_front();
            }
        }
    }

    /// Generated tokens per second over the last ten seconds.
    pub fn tokens_per_second(&self) -> f64 {
        let Ok(recent) = self.recent.lock() else {
            return 0.0;
        };
        let now = Instant::now();
        let tokens: u64 = recent
            .iter()
            .filter(|(t, _)| now.duration_since(*t) <= RATE_WINDOW)
            .map(|(_, n)| n)
            .sum();
        tokens as f64 / RATE_WINDOW.as_secs_f64()
    }

    /// The Prometheus text exposition of everything.
    pub fn render(&self, model: &str) -> String {
        let mut out = String::new();
        let label = format!("model_name=\"{}\"", model.replace(['"', '\\', '\n'], "_"));
        let mut metric = |name: &str, kind: &str, help: &str, samples: Vec<(String, String)>| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for (labels, value) in samples {
                let _ = writeln!(out, "{name}{{{label}{labels}}} {value}");
            }
        };
        let requests: Vec<(String, String)> = self
            .requests
            .lock()
            .map(|m| {
                m.iter()
                    .map(|((endpoint, status), n)| {
                        (
                            format!(",endpoint=\"{endpoint}\",status=\"{status}\""),
                            n.to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        metric(
            "agentworld_requests_total",
            "counter",
            "HTTP requests answered, by endpoint and status.",
            requests,
        );
        let one = |v: String| vec![(String::new(), v)];
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed).to_string();
        metric(
            "agentworld_prompt_tokens_total",
            "counter",
            "Prompt tokens of accepted requests.",
            one(load(&self.prompt_tokens)),
        );
        metric(
            "agentworld_generation_tokens_total",
            "counter",
            "Tokens generated.",
            one(load(&self.generation_tokens)),
        );
        metric(
            "agentworld_requests_cancelled_total",
            "counter",
            "Generations stopped because the client disconnected.",
            one(load(&self.cancelled)),
        );
        metric(
            "agentworld_decode_steps_total",
            "counter",
            "Forward passes of the running batch (prefills included).",
            one(load(&self.decode_steps)),
        );
        metric(
            "agentworld_queue_depth",
            "gauge",
            "Requests waiting to join the running batch.",
            one(self.queue_depth.load(Ordering::Relaxed).to_string()),
        );
        metric(
            "agentworld_running_batch_size",
            "gauge",
            "Sequences in the running decode batch.",
            one(self.running.load(Ordering::Relaxed).to_string()),
        );
        metric(
            "agentworld_generation_tokens_per_second",
            "gauge",
            "Generated tokens per second over the last 10 seconds.",
            one(format!("{:.3}", self.tokens_per_second())),
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_prometheus_text() {
        let m = Metrics::default();
        m.request("chat", 200);
        m.request("chat", 200);
        m.request("chat", 400);
        m.prompt(12);
        m.generated(3);
        let text = m.render("demo");
        assert!(text.contains(
            "agentworld_requests_total{model_name=\"demo\",endpoint=\"chat\",status=\"200\"} 2"
        ));
        assert!(text.contains("agentworld_prompt_tokens_total{model_name=\"demo\"} 12"));
        assert!(text.contains("# TYPE agentworld_queue_depth gauge"));
        assert!(m.tokens_per_second() > 0.0);
    }
}
