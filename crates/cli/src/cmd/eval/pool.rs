//! Bounded concurrency for endpoint calls, retries with backoff, and the options both `eval
//! infer` and `eval judge` take to reach an OpenAI-compatible server.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Result;

use crate::endpoint::{self, CallError, ChatReply, ChatRequest};

/// How to reach an OpenAI-compatible server, and how hard to try.
#[derive(clap::Args, Clone)]
pub struct HttpArgs {
    /// OpenAI-compatible server (vLLM, SGLang, OpenAI): `http://host:port` or `.../v1`.
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Model name on the server (default: the first one it lists at /v1/models).
    #[arg(long)]
    pub model_name: Option<String>,
    /// API key, sent as a bearer token.
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Seconds one request may take, reading the whole answer included.
    #[arg(long, default_value_t = 1800.0)]
    pub timeout: f64,
    /// Tries per request, the first included (eval.py's `--max-retries 3` is three tries).
    #[arg(long, default_value_t = 3)]
    pub attempts: usize,
    /// Seconds before the first retry; each further retry waits twice as long (at most 60 s).
    #[arg(long, default_value_t = 2.0)]
    pub retry_delay: f64,
    /// Sampling temperature (the benchmark's: 0.6).
    #[arg(long, default_value_t = 0.6)]
    pub temperature: f64,
    /// Most tokens per answer (the benchmark's: 32768).
    #[arg(long, default_value_t = 32768)]
    pub max_tokens: usize,
}

impl HttpArgs {
    /// The model name: `--model-name`, else the server's first model.
    pub fn resolve_model(&self, endpoint: &str) -> Result<String> {
        match &self.model_name {
            Some(m) => Ok(m.clone()),
            // `first_model` adds `/v1/models` itself.
            None => endpoint::first_model(endpoint.trim_end_matches('/').trim_end_matches("/v1")),
        }
    }

    /// The wait before try `attempt` (counting from 0; the first try does not wait).
    pub fn backoff(&self, attempt: usize) -> Duration {
        if attempt == 0 {
            return Duration::ZERO;
        }
        let factor = 2f64.powi(attempt.saturating_sub(1).min(30) as i32);
        Duration::from_secs_f64((self.retry_delay.max(0.0) * factor).min(60.0))
    }

    /// One chat call, tried up to `--attempts` times while the failure is retryable.
    pub fn chat_with_retries(
        &self,
        endpoint: &str,
        model: &str,
        messages: &serde_json::Value,
    ) -> std::result::Result<ChatReply, CallError> {
        self.with_retries(|| self.chat_once(endpoint, model, messages))
            .0
    }

    /// Runs `call` up to `--attempts` times while its failure is retryable, waiting
    /// [`Self::backoff`] before each retry. Returns the last result and the number of calls.
    pub fn with_retries<T>(
        &self,
        mut call: impl FnMut() -> std::result::Result<T, CallError>,
    ) -> (std::result::Result<T, CallError>, usize) {
        let mut attempt = 0;
        loop {
            std::thread::sleep(self.backoff(attempt));
            match call() {
                Err(e) if e.retryable && attempt + 1 < self.attempts.max(1) => attempt += 1,
                other => return (other, attempt + 1),
            }
        }
    }

    /// One chat call, no retry.
    pub fn chat_once(
        &self,
        endpoint: &str,
        model: &str,
        messages: &serde_json::Value,
    ) -> std::result::Result<ChatReply, CallError> {
        endpoint::chat(&ChatRequest {
            base: endpoint,
            model,
            messages,
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            timeout: Duration::from_secs_f64(self.timeout.max(0.001)),
            api_key: self.api_key.as_deref().filter(|k| !k.is_empty()),
        })
    }
}

/// Runs `work(job)` for jobs `0..jobs` on up to `concurrency` threads and hands each result to
/// `on_done(job, result)` on the calling thread, in completion order. An error from `on_done`
/// stops the workers from starting new jobs and is returned once the running ones finish.
pub fn run<T: Send>(
    jobs: usize,
    concurrency: usize,
    work: impl Fn(usize) -> T + Sync,
    mut on_done: impl FnMut(usize, T) -> Result<()>,
) -> Result<()> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, T)>();
    std::thread::scope(|scope| {
        for _ in 0..concurrency.clamp(1, jobs.max(1)) {
            let tx = tx.clone();
            let (next, stop, work) = (&next, &stop, &work);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let job = next.fetch_add(1, Ordering::Relaxed);
                    if job >= jobs || tx.send((job, work(job))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut result = Ok(());
        for (job, output) in rx {
            if result.is_ok() {
                result = on_done(job, output);
                if result.is_err() {
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_runs_once() {
        let mut seen = Vec::new();
        run(
            50,
            7,
            |j| j * 2,
            |j, out| {
                assert_eq!(out, j * 2);
                seen.push(j);
                Ok(())
            },
        )
        .unwrap();
        seen.sort_unstable();
        assert_eq!(seen, (0..50).collect::<Vec<_>>());
        run(0, 4, |j| j, |_, _| panic!("no jobs")).unwrap();
    }

    #[test]
    fn retries_stop_at_success_or_a_final_error() {
        let http = HttpArgs {
            endpoint: None,
            model_name: None,
            api_key: None,
            concurrency: 1,
            timeout: 1.0,
            attempts: 3,
            retry_delay: 0.0,
            temperature: 0.0,
            max_tokens: 1,
        };
        let fail = |retryable| CallError {
            message: "x".into(),
            retryable,
        };
        let mut calls = 0;
        let (r, n) = http.with_retries(|| {
            calls += 1;
            if calls < 2 {
                Err(fail(true))
            } else {
                Ok(calls)
            }
        });
        assert_eq!((r, n), (Ok(2), 2));
        let (r, n) = http.with_retries(|| Err::<(), _>(fail(true)));
        assert_eq!((r.is_err(), n), (true, 3));
        let (r, n) = http.with_retries(|| Err::<(), _>(fail(false)));
        assert_eq!((r.is_err(), n), (true, 1));
    }

    #[test]
    fn an_error_stops_new_jobs() {
        let started = AtomicUsize::new(0);
        let err = run(
            1000,
            2,
            |j| {
                started.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
                j
            },
            |_, _| anyhow::bail!("disk full"),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        // Each job takes 2 ms; the first result stops the rest long before 1000 have started.
        assert!(started.load(Ordering::Relaxed) < 100);
    }
}
