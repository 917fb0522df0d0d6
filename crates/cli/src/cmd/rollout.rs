//! `agentworld rollout`: an agent policy (any OpenAI-compatible model, or actions scripted in
//! the tasks) acting in environments simulated by a world model, N environments at a time.
//!
//! Each environment is an [`agentworld_world::WorldEnv`] on its own thread: ask the policy for
//! an action (from the policy's messages, [`WorldEnv::policy_messages`]), send the env's
//! world-model request ([`WorldEnv::act`]) to the world model ([`world::WorldModel`]: a local
//! model on one continuously batched engine thread, or an endpoint), and hand the raw output to
//! [`WorldEnv::observe`]; until the agent finishes, the step limit is reached or a call fails
//! after its retries. Each trajectory is written as one AgentWorldBench row as soon as it ends
//! (see `agentworld_world::env::record` for the fields), failed steps included with their
//! error, so no step is lost.

mod policy;
mod world;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentworld_serve::ServeConfig;
use agentworld_world::env::{Act, CallStats, DoneReason, EnvConfig, RewardRules, read_tasks_file};
use agentworld_world::{Row, Task, WorldEnv};
use anyhow::{Context, Result, bail};

use super::eval::pool::{self, HttpArgs};
use crate::backend::{BackendKind, dispatch};
use crate::model_dir::{model_card, prepare_state, prompt_set};
use crate::{paths, progress};
use policy::{EndpointPolicy, Next, next_action};
use world::{EndpointWorld, LocalWorld, WorldModel};

/// Arguments of `agentworld rollout`.
#[derive(clap::Args)]
#[command(
    after_help = "Tasks are JSONL, one a line: {\"id\": \"t1\", \"domain\": \"terminal\", \
\"instruction\": \"count the TODO lines\", \"state\": \"user@sandbox:~$ \", \"max_steps\": 4}; \
optional: \"system\" (world system prompt), \"format\" (state format), \"actions\" (scripted \
actions, replayed instead of asking the policy).\n\nExamples:\n  \
agentworld rollout --policy-endpoint http://127.0.0.1:8001 --tasks tasks.jsonl --concurrency 32 --out trajectories.jsonl\n  \
agentworld rollout --policy-endpoint https://api.openai.com/v1 --policy-model gpt-5-mini \
--world-endpoint http://127.0.0.1:8000 --tasks tasks.jsonl --out trajectories.jsonl"
)]
pub struct Args {
    /// Tasks file (JSONL, see below).
    #[arg(long)]
    tasks: PathBuf,
    /// Where the trajectories go (the file is replaced): one AgentWorldBench row per task,
    /// written as each ends.
    #[arg(long)]
    out: PathBuf,
    /// The agent: an OpenAI-compatible server (`http://host:port` or `.../v1`). Needed unless
    /// every task scripts its `actions`.
    #[arg(long)]
    policy_endpoint: Option<String>,
    /// Policy model name (default: the first one the server lists).
    #[arg(long)]
    policy_model: Option<String>,
    /// Policy API key, sent as a bearer token.
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true)]
    policy_api_key: Option<String>,
    /// A file holding the policy's system prompt (default: ours, per domain).
    #[arg(long)]
    policy_system: Option<PathBuf>,
    /// Policy sampling temperature.
    #[arg(long, default_value_t = 0.6, allow_negative_numbers = true, value_parser = crate::values::temperature)]
    policy_temperature: f64,
    /// Most tokens per policy reply.
    #[arg(long, default_value_t = 2048, allow_negative_numbers = true, value_parser = crate::values::at_least_one)]
    policy_max_tokens: usize,
    /// The world model on an OpenAI-compatible server (vLLM, SGLang, `agentworld serve`)
    /// instead of a local model.
    #[arg(long, conflicts_with_all = ["model", "backend"])]
    world_endpoint: Option<String>,
    /// World model name on --world-endpoint (default: the first one it lists).
    #[arg(long)]
    world_model_name: Option<String>,
    /// World API key, sent as a bearer token.
    #[arg(long)]
    world_api_key: Option<String>,
    /// Local world model directory (default: the demo model).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Where a local world model runs.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    backend: BackendKind,
    #[command(flatten)]
    precision: crate::backend::Precision,
    /// A checkout of Qwen-AgentWorld's prompts/ folder for the world model's system prompts.
    #[arg(long)]
    prompts_dir: Option<PathBuf>,
    /// Environments run at once (a local model decodes them in one batch).
    #[arg(long, default_value_t = 8, value_parser = crate::values::at_least_one)]
    concurrency: usize,
    /// Most steps per episode (a task's `max_steps` overrides it).
    #[arg(long, default_value_t = 8)]
    max_steps: usize,
    /// Most world-model tokens per step. Default: the model card's, else 4096.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::values::at_least_one)]
    max_tokens: Option<usize>,
    /// World sampling temperature. Default: greedy locally, 0.6 (the benchmark's) on an endpoint.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::values::temperature)]
    temperature: Option<f64>,
    /// Seed of a local world model (environment i, turn t samples with seed + 1000 i + t).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Seconds one call (policy or world) may take before it is abandoned and retried.
    #[arg(long, default_value_t = 600.0)]
    timeout: f64,
    /// Tries per call, the first included.
    #[arg(long, default_value_t = 3)]
    attempts: usize,
    /// Seconds before the first retry; each further retry waits twice as long (at most 60 s).
    #[arg(long, default_value_t = 2.0)]
    retry_delay: f64,
    /// Reward rules (JSON: {"valid_action", "invalid_action", "rules": [{"name", "when":
    /// [{"observation_contains": "..."}], "reward"}]}); default: -1 for an action that does
    /// not parse.
    #[arg(long)]
    rewards: Option<PathBuf>,
}

impl Args {
    /// The call settings of one side (retries, timeout) with its own server and sampling.
    fn http(&self, url: Option<&String>, model: Option<&String>, key: Option<&String>) -> HttpArgs {
        HttpArgs {
            endpoint: url.cloned(),
            model_name: model.cloned(),
            api_key: key.cloned(),
            concurrency: self.concurrency,
            timeout: self.timeout,
            attempts: self.attempts,
            retry_delay: self.retry_delay,
            temperature: 0.6,
            max_tokens: 4096,
        }
    }
}

/// Everything the environment threads share.
struct Shared<'a> {
    tasks: &'a [Task],
    env: EnvConfig,
    policy: Option<EndpointPolicy>,
    world: &'a dyn WorldModel,
    retry: HttpArgs,
    seed: u64,
}

/// Runs `agentworld rollout`.
pub fn run(args: Args) -> Result<()> {
    let mut tasks = read_tasks_file(&args.tasks)?;
    if tasks.is_empty() {
        bail!("{} holds no tasks", args.tasks.display());
    }
    if args.policy_endpoint.is_none()
        && let Some(t) = tasks.iter().find(|t| t.actions.is_none())
    {
        bail!(
            "task `{}` has no scripted actions: pass --policy-endpoint URL (an OpenAI-compatible agent)",
            t.id
        );
    }
    let rewards = match &args.rewards {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("reading reward rules {}", p.display()))?;
            RewardRules::from_json(&text).with_context(|| p.display().to_string())?
        }
        None => RewardRules::default(),
    };
    let policy = match &args.policy_endpoint {
        Some(url) => {
            let mut http = args.http(
                Some(url),
                args.policy_model.as_ref(),
                args.policy_api_key.as_ref(),
            );
            http.temperature = args.policy_temperature;
            http.max_tokens = args.policy_max_tokens;
            let system = match &args.policy_system {
                Some(p) => Some(
                    std::fs::read_to_string(p)
                        .with_context(|| format!("reading {}", p.display()))?,
                ),
                None => None,
            };
            Some(EndpointPolicy {
                model: http
                    .resolve_model(url)
                    .context("asking the policy server")?,
                url: url.clone(),
                http,
                system,
            })
        }
        None => None,
    };
    let retry = args.http(None, None, None);
    let concurrency = args.concurrency.clamp(1, tasks.len());
    let started = Instant::now();
    let mut observation_forms = std::collections::BTreeMap::new();
    let (world, prompts): (Box<dyn WorldModel>, _) = match &args.world_endpoint {
        Some(url) => {
            let mut http = args.http(
                Some(url),
                args.world_model_name.as_ref(),
                args.world_api_key.as_ref(),
            );
            http.temperature = args.temperature.unwrap_or(0.6);
            http.max_tokens = args.max_tokens.unwrap_or(4096);
            let model = http
                .resolve_model(url)
                .context("asking the world-model server")?;
            eprintln!("rollout: world model {model} at {url}");
            let prompts = prompt_set(args.prompts_dir.as_deref(), None, std::path::Path::new(""))?;
            let world = EndpointWorld {
                http,
                url: url.clone(),
                model,
            };
            (Box::new(world), prompts)
        }
        None => {
            let dir = args.model.clone().unwrap_or_else(paths::default_model);
            let card = model_card(&dir)?;
            let prompts = prompt_set(args.prompts_dir.as_deref(), card.as_ref(), &dir)?;
            // A model that writes patches: the env applies them to the current state.
            for (domain, form) in card.iter().flat_map(|c| &c.observation_form_by_domain) {
                if let Ok(d) = domain.parse::<agentworld_world::Domain>() {
                    observation_forms.insert(d, *form);
                }
            }
            for t in &mut tasks {
                if let Some(state) = t.state.take() {
                    t.state = Some(
                        prepare_state(t.domain, state, card.as_ref())
                            .with_context(|| format!("task `{}`", t.id))?,
                    );
                }
            }
            let config = ServeConfig {
                model_name: "rollout".into(),
                max_batch: concurrency,
                max_queue: (4 * concurrency).max(256),
                max_model_len: None,
            };
            let handle = dispatch(
                args.backend,
                super::serve::Load {
                    dir: dir.clone(),
                    config,
                    precision: args.precision,
                    memory: None,
                },
            )?;
            eprintln!(
                "rollout: world model {} (local, {concurrency} decoded together)",
                dir.display()
            );
            let world = LocalWorld {
                handle,
                runtime: tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .enable_time()
                    .build()
                    .context("starting the timer thread")?,
                max_tokens: args
                    .max_tokens
                    .or(card.as_ref().and_then(|c| c.max_new_tokens))
                    .unwrap_or(4096),
                temperature: args.temperature.unwrap_or(0.0) as f32,
                timeout: Duration::from_secs_f64(args.timeout.max(0.001)),
                peak_batch: Default::default(),
            };
            (Box::new(world), prompts)
        }
    };
    let shared = Shared {
        tasks: &tasks,
        env: EnvConfig {
            prompts,
            rewards: Arc::new(rewards),
            max_steps: args.max_steps.max(1),
            observation_forms,
        },
        policy,
        world: world.as_ref(),
        retry,
        seed: args.seed,
    };
    let file = std::fs::File::create(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let bar = progress::bar(tasks.len() as u64, "rollout");
    let mut totals = Totals::default();
    let loop_started = Instant::now();
    pool::run(
        tasks.len(),
        concurrency,
        |i| episode(&shared, i),
        |_, row| {
            totals.add(&row);
            agentworld_world::row::write_jsonl([&row], &mut out)?;
            out.flush()
                .with_context(|| format!("writing {}", args.out.display()))?;
            bar.inc(1);
            Ok(())
        },
    )?;
    bar.finish_and_clear();
    let secs = loop_started.elapsed().as_secs_f64();
    eprintln!(
        "rollout: {} trajectories, {} steps ({} answered by the world model, {} failed) in {secs:.2}s \
         ({:.2} world-model steps/s, {:.2}s with loading); mean reward {:.3}; wrote {}",
        totals.trajectories,
        totals.steps,
        totals.world_steps,
        totals.failed,
        totals.world_steps as f64 / secs.max(1e-9),
        started.elapsed().as_secs_f64(),
        totals.reward / totals.trajectories.max(1) as f64,
        args.out.display()
    );
    if let Some(line) = world.report() {
        eprintln!("rollout: world model: {line}");
    }
    if totals.failed > 0 {
        bail!(
            "{} trajectories ended on a call that failed after its retries; their steps and \
             errors are in {}",
            totals.failed,
            args.out.display()
        );
    }
    Ok(())
}

/// One episode of task `i`, start to end; never fails (a failed call ends the episode and is
/// recorded in the row).
fn episode(shared: &Shared<'_>, i: usize) -> Row {
    let mut env = WorldEnv::new(shared.env.clone());
    env.reset(shared.tasks[i].clone());
    while env.done().is_none() {
        let asked = Instant::now();
        let (next, policy_attempts) = next_action(shared.policy.as_ref(), &env);
        let mut calls = CallStats {
            policy_attempts,
            policy_secs: asked.elapsed().as_secs_f64(),
            ..CallStats::default()
        };
        let (action, policy_output) = match next {
            Next::Action(a, raw) => (a, raw),
            Next::ScriptEnded => {
                env.end(DoneReason::ScriptEnded);
                break;
            }
            Next::Failed(e) => {
                env.fail(format!("policy: {e} ({policy_attempts} attempts)"));
                annotate(&mut env, calls, None);
                break;
            }
        };
        let messages = match env.act(&action) {
            Ok(Act::Query(m)) => m,
            Ok(Act::Finished(_)) => {
                annotate(&mut env, calls, policy_output);
                break;
            }
            Err(e) => {
                env.fail(e.to_string());
                annotate(&mut env, calls, policy_output);
                break;
            }
        };
        let seed = shared.seed + 1000 * i as u64 + env.history().next_turn() as u64;
        let sent = Instant::now();
        let (reply, attempts) = shared
            .retry
            .with_retries(|| shared.world.complete(env.task().domain, &messages, seed));
        calls.world_attempts = attempts;
        calls.world_secs = sent.elapsed().as_secs_f64();
        match reply {
            Ok(text) => {
                if let Err(e) = env.observe(&text) {
                    env.fail(e.to_string());
                }
            }
            Err(e) => {
                env.fail(format!("world model: {e} ({attempts} attempts)"));
            }
        }
        annotate(&mut env, calls, policy_output);
    }
    env.to_row()
}

/// Adds what the caller measured to the last step's record.
fn annotate(env: &mut WorldEnv, calls: CallStats, policy_output: Option<String>) {
    if let Some(r) = env.last_record_mut() {
        r.calls = calls;
        r.policy_output = policy_output;
    }
}

/// Counts over the written trajectories.
#[derive(Default)]
struct Totals {
    trajectories: usize,
    steps: usize,
    world_steps: usize,
    failed: usize,
    reward: f64,
}

impl Totals {
    fn add(&mut self, row: &Row) {
        self.trajectories += 1;
        let field = |name: &str| row.extra.get(name).unwrap_or(&serde_json::Value::Null);
        let steps = field("steps").as_array().map_or(&[][..], Vec::as_slice);
        self.steps += steps.len();
        self.world_steps += steps.iter().filter(|s| !s["generation"].is_null()).count();
        self.failed += usize::from(field("done_reason") == "failed");
        self.reward += field("reward").as_f64().unwrap_or(0.0);
    }
}
