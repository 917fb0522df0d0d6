//! `agentworld simulate`: one world-model step. State + action in, thinking and the predicted
//! observation out (streamed), optionally parsed into structured state (`--json`).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::Instant;

use agentworld_engine::sampling::SamplingParams;
use agentworld_engine::{GenerateParams, ModelCard, NamedBias, encode_prompt_marks};
use agentworld_text::observation::{extract_observation, is_well_formed};
use agentworld_world::action::{Action, check_targets, parse_action};
use agentworld_world::diff::{ObservationForm, apply_patch};
use agentworld_world::messages::{strip_observation_marker, turn_prompt};
use agentworld_world::state::Registry;
use agentworld_world::state::android::{parse_compact, parse_xml};
use agentworld_world::state::terminal::TerminalScreen;
use agentworld_world::{Domain, History, Message, Row, TurnAction};
use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::backend::{BackendKind, OnBackend, dispatch};
use crate::display::Printer;
use crate::model_dir::{model_card, prepare_state, prompt_set};
use crate::{endpoint, paths, progress, values};

/// Arguments of `agentworld simulate`.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
agentworld simulate --domain terminal --state examples/terminal/screen1.txt --action '[{\"keystrokes\": \"ls -l\\n\", \"duration\": 0.5}]'\n  \
agentworld simulate --domain android --state examples/android/settings.xml --action examples/android/type_search.json --json\n  \
agentworld simulate --endpoint http://127.0.0.1:8000 --domain web --state page.txt --action \"click('12')\"")]
pub struct Args {
    /// Domain: terminal, search, mcp, swe, web, android or os.
    #[arg(long)]
    domain: Domain,
    /// The agent's action: JSON (keystroke list, tool call, Android action object) or text
    /// (`click('12')`, pyautogui code); a path to a file holding it also works.
    #[arg(long)]
    action: String,
    /// The current state (terminal screen, UI dump, accessibility tree, page), as a file.
    #[arg(long)]
    state: Option<PathBuf>,
    /// Earlier turns, as an AgentWorldBench row (JSON or one JSONL line): its prompt/response
    /// pairs become the history.
    #[arg(long)]
    history: Option<PathBuf>,
    /// Model directory (Hugging Face layout). Default: the demo model in public/models.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Send the request to an OpenAI-compatible server (vLLM, SGLang, `agentworld serve`)
    /// instead of running a local model, e.g. http://127.0.0.1:8000.
    #[arg(long)]
    endpoint: Option<String>,
    /// Model name on the endpoint (default: the first one it lists).
    #[arg(long)]
    model_name: Option<String>,
    /// A checkout of Qwen-AgentWorld's prompts/ folder (`<domain>/system_prompt.txt`) to use
    /// instead of our own system prompts.
    #[arg(long)]
    prompts_dir: Option<PathBuf>,
    /// Sampling temperature (0 = greedy). Default: greedy locally, 0.6 (the benchmark's) on an endpoint.
    #[arg(long, allow_negative_numbers = true, value_parser = values::temperature)]
    temperature: Option<f64>,
    /// Nucleus sampling mass, above 0 and at most 1 (1: off).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true, value_parser = values::top_p)]
    top_p: f64,
    /// Top-k cut-off (0 = off).
    #[arg(long, default_value_t = 0)]
    top_k: usize,
    /// Random seed.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Copy prior (local models): a logit bonus, in nats, for the token that continues the
    /// span of the prompt the observation is copying, as the next state is mostly the current
    /// one; 0 turns it off. Default: the model card's for the domain (`copy_bias_by_domain`,
    /// else `copy_bias`), else 0.
    #[arg(long, allow_negative_numbers = true, value_parser = values::copy_bias)]
    copy_bias: Option<f32>,
    /// Copy prior (local models, GUI domains) on the lines of the state the action names (the
    /// element it acts on), in place of `--copy-bias` there. Default: the model card's
    /// `named_copy_bias_by_domain` when `--copy-bias` is not given; unset, those lines are
    /// copied as firmly as the rest.
    #[arg(long, allow_negative_numbers = true, value_parser = values::copy_bias)]
    named_copy_bias: Option<f32>,
    /// Most tokens to generate (1 or more). Default: the model card's, else 4096.
    #[arg(long, allow_negative_numbers = true, value_parser = values::at_least_one)]
    max_tokens: Option<usize>,
    /// Print the parsed state as JSON on stdout (thinking and observation then go to stderr).
    #[arg(long)]
    json: bool,
    /// Where a local model runs.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    backend: BackendKind,
    #[command(flatten)]
    precision: crate::backend::Precision,
}

/// Reads `--action`: the text itself, or a file's content when it names a file.
///
/// # Errors
/// An empty action (or action file), and an argument that reads as a file name (one word
/// ending in `.json`, `.jsonl` or `.txt`) when no such file exists: sent as written, it would be an
/// action the model is asked to simulate.
fn action_text(arg: &str) -> Result<String> {
    let path = std::path::Path::new(arg);
    let text = if arg.len() < 4096 && !arg.contains('\n') && path.is_file() {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading action file {arg}"))?;
        if text.trim().is_empty() {
            bail!("action file {arg} is empty; give the agent's action in it");
        }
        text
    } else {
        arg.to_string()
    };
    let looks_like_a_file = !arg
        .chars()
        .any(|c| c.is_whitespace() || "([{'\"".contains(c))
        && [".json", ".txt", ".jsonl"].iter().any(|e| arg.ends_with(e));
    if looks_like_a_file && !path.exists() {
        bail!(
            "--action {arg}: no such file; give the action's text (e.g. \"click('12')\") or \
             the path of a file holding it"
        );
    }
    if text.trim().is_empty() {
        bail!("--action is empty; give the agent's action, e.g. \"click('12')\"");
    }
    Ok(text)
}

fn read_history(path: &std::path::Path) -> Result<Row> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let row: Row = serde_json::from_str(text.trim())
        .or_else(|_| serde_json::from_str(first))
        .with_context(|| {
            format!(
                "{}: not an AgentWorldBench row (task, id, prompt[], response[], turn_idx, ...)",
                path.display()
            )
        })?;
    if row.prompt.len() != row.response.len() {
        bail!(
            "{}: prompt has {} turns but response has {}",
            path.display(),
            row.prompt.len(),
            row.response.len()
        );
    }
    Ok(row)
}

/// Warnings on stderr for the elements `action` names that `state` lacks (the prompt is
/// unchanged: what such an action does is for the model to predict).
fn target_warnings(action: &Action, state: &str) {
    if let Ok(parsed) = Registry::standard().parse("auto", state) {
        for w in check_targets(action, &parsed.tree) {
            eprintln!("warning: action: {w}");
        }
    }
}

/// The observation parsed into structured state, for `--json`.
fn parse_state(domain: Domain, observation: &str) -> Value {
    match domain {
        Domain::Terminal => json!(TerminalScreen::parse(observation)),
        Domain::Android => {
            let parsed = if observation.trim_start().starts_with('<') {
                parse_xml(observation)
            } else {
                parse_compact(observation)
            };
            match parsed {
                Ok(p) => {
                    json!({"tree": p.tree, "warnings": p.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>()})
                }
                Err(e) => json!({"error": e.to_string()}),
            }
        }
        Domain::Web | Domain::Os => match Registry::standard().parse("auto", observation) {
            Ok(p) => json!({
                "format": p.tree.format,
                "tree": p.tree,
                "warnings": p.warnings.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
            }),
            Err(e) => json!({"error": e.to_string(), "text": observation}),
        },
        _ => json!({"text": observation}),
    }
}

struct Request {
    domain: Domain,
    messages: Vec<Message>,
    /// The state the action acts on, as the model reads it (a patch applies to it).
    current: String,
    /// What the model writes: the whole next state, or a patch on `current`.
    form: ObservationForm,
    args: Args,
    card: Option<ModelCard>,
    model_dir: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let domain = args.domain;
    let action_raw = action_text(&args.action)?;
    let action = TurnAction::parse(&action_raw);
    let parsed_action = parse_action(domain, &action_raw)
        .inspect_err(|e| eprintln!("note: action: {e} (sent to the model as written)"))
        .ok();
    let model_dir = args.model.clone().unwrap_or_else(paths::default_model);
    let card: Option<ModelCard> = if args.endpoint.is_some() {
        None
    } else {
        model_card(&model_dir)?
    };
    if let Some(c) = &card
        && !c.domains.is_empty()
        && !c.domains.iter().any(|d| d == domain.as_str())
    {
        eprintln!(
            "warning: {} was trained on {} only; its {} predictions will be poor",
            c.name,
            c.domains.join(", "),
            domain.as_str()
        );
    }
    let prompts = prompt_set(args.prompts_dir.as_deref(), card.as_ref(), &model_dir)?;
    let state_text = match &args.state {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("reading state {}", p.display()))?;
            if text.trim().is_empty() {
                eprintln!(
                    "note: state {} is empty: the model predicts from the action alone",
                    p.display()
                );
            }
            Some(text)
        }
        None => {
            if domain.is_gui() {
                eprintln!(
                    "note: no --state: the model is given no current {} state and predicts from the action alone",
                    domain.as_str()
                );
            }
            None
        }
    };
    let state = match &state_text {
        Some(text) => Some(
            prepare_state(domain, text.clone(), card.as_ref()).with_context(|| {
                let path = args.state.as_ref().map(|p| p.display().to_string());
                format!("--state {}", path.unwrap_or_default())
            })?,
        ),
        None => None,
    };
    if let (Some(a), Some(text)) = (&parsed_action, &state_text) {
        target_warnings(a, text);
    }
    let mut history = History::new(prompts.system_prompt(domain).to_string());
    if let Some(path) = &args.history {
        let row = read_history(path)?;
        for (p, r) in row.prompt.iter().zip(&row.response) {
            history.push(p.clone(), r.clone());
        }
    }
    // Without --state, the action acts on the history's last observation.
    let current = state.clone().unwrap_or_else(|| {
        history
            .exchanges
            .last()
            .map(|e| strip_observation_marker(&e.response))
            .unwrap_or_default()
    });
    let form = card.as_ref().map_or(ObservationForm::Full, |c| {
        c.observation_form_for(Some(domain.as_str()))
    });
    let prompt = turn_prompt(
        history.next_turn(),
        &action.to_block_text(),
        state.as_deref(),
    );
    let messages = history.messages(&prompt);
    let request = Request {
        domain,
        messages,
        current,
        form,
        card,
        model_dir,
        args,
    };
    let output = match request.args.endpoint.clone() {
        Some(url) => run_endpoint(&request, &url)?,
        None => dispatch(request.args.backend, &request)?,
    };
    finish(&request, &output)
}

/// Generated text plus stats.
struct Output {
    text: String,
    tokens: Option<usize>,
    secs: f64,
}

impl OnBackend for &Request {
    type Output = Output;
    fn run<B: burn::tensor::backend::Backend>(self, device: B::Device) -> Result<Output> {
        let engine = progress::load_engine::<B>(&self.model_dir, &device, self.args.precision)?;
        let text = engine.render_prompt(&self.messages, None)?;
        // The card's prior on the named lines goes with the card's copy prior.
        let named_bias = match (self.args.named_copy_bias, self.args.copy_bias) {
            (Some(b), _) => NamedBias::Nats(b),
            (None, None) => NamedBias::Card,
            (None, Some(_)) => NamedBias::Off,
        };
        let (ids, marks) = encode_prompt_marks(
            &engine.tokenizer,
            self.card.as_ref(),
            &text,
            Some(self.domain),
            named_bias,
        )?;
        if ids.len() >= engine.max_context() {
            bail!(
                "the prompt has {} tokens; this model's context is {} tokens \
                 (max_position_embeddings): give a shorter --state (a smaller part of the \
                 page or screen), fewer --history turns, or a model with a longer context",
                ids.len(),
                engine.max_context()
            );
        }
        let max_tokens = self
            .args
            .max_tokens
            .or(self.card.as_ref().and_then(|c| c.max_new_tokens))
            .unwrap_or(4096);
        let sampling = SamplingParams {
            temperature: self.args.temperature.unwrap_or(0.0) as f32,
            top_p: self.args.top_p as f32,
            top_k: self.args.top_k,
            seed: self.args.seed,
            copy_bias: self
                .args
                .copy_bias
                .or(self
                    .card
                    .as_ref()
                    .map(|c| c.copy_bias_for(Some(self.domain.as_str()))))
                .unwrap_or(0.0),
        };
        // The first screen a user reads: plain words; `--help` explains the knobs.
        let how = if sampling.temperature > 0.0 {
            format!("sampled at temperature {}", sampling.temperature)
        } else {
            "greedy".to_string()
        };
        let copy_prior = if marks.sources.as_ref().is_some_and(Vec::is_empty) {
            format!("; decoding: {how} (no current state found to copy)")
        } else if sampling.copy_bias > 0.0 || marks.named_bias.is_some_and(|b| b != 0.0) {
            format!("; decoding: {how}, favouring a copy of the current state (see --copy-bias)")
        } else {
            format!("; decoding: {how}")
        };
        eprintln!(
            "prompt: {} tokens; model: {}{copy_prior}",
            ids.len(),
            self.model_dir.display()
        );
        let mut printer = Printer::new(text.ends_with("<think>\n"), self.args.json);
        if self.form == ObservationForm::Patch {
            printer = printer.patch();
        }
        let started = Instant::now();
        let g = engine
            .generate_batch_marked(
                std::slice::from_ref(&ids),
                &[Some(marks)],
                &GenerateParams {
                    max_tokens,
                    sampling,
                },
                &mut |_, t| printer.push(t),
            )?
            .remove(0);
        printer.finish();
        if g.finish_reason == agentworld_engine::FinishReason::Length {
            eprintln!("note: stopped at --max-tokens {max_tokens}");
        }
        eprintln!(
            "{} tokens in {:.2}s (prefill {:.2}s, decode {:.1} tok/s)",
            g.token_ids.len(),
            started.elapsed().as_secs_f64(),
            g.prefill_secs,
            g.decode_tokens_per_sec()
        );
        Ok(Output {
            text: g.text,
            tokens: Some(g.token_ids.len()),
            secs: started.elapsed().as_secs_f64(),
        })
    }
}

fn run_endpoint(request: &Request, url: &str) -> Result<Output> {
    let model = match &request.args.model_name {
        Some(m) => m.clone(),
        None => endpoint::first_model(url)?,
    };
    let messages = serde_json::to_value(&request.messages)?;
    let mut printer = Printer::new(true, request.args.json);
    let started = Instant::now();
    let completion = endpoint::stream_chat(
        url,
        &model,
        &messages,
        request.args.max_tokens.unwrap_or(4096),
        request.args.temperature.unwrap_or(0.6) as f32,
        Some(request.args.seed),
        &mut |t| printer.push(t),
    )?;
    printer.finish();
    let secs = started.elapsed().as_secs_f64();
    match completion.completion_tokens {
        Some(n) => eprintln!(
            "{n} tokens in {secs:.2}s ({:.1} tok/s) from {model} at {url}",
            n as f64 / secs
        ),
        None => eprintln!("done in {secs:.2}s from {model} at {url}"),
    }
    Ok(Output {
        text: completion.text,
        tokens: completion.completion_tokens.map(|n| n as usize),
        secs,
    })
}

fn finish(request: &Request, output: &Output) -> Result<()> {
    let written = extract_observation(&output.text);
    let well_formed = is_well_formed(&output.text);
    if !well_formed {
        eprintln!(
            "note: the output is not one closed <predicted_observation> block; showing what could be extracted"
        );
    }
    // A patch-form model's patch, applied: the full next state.
    let (observation, patch) = match request.form {
        ObservationForm::Full => (written, None),
        ObservationForm::Patch => {
            let applied = apply_patch(&request.current, &written);
            for (line, text) in &applied.unplaced {
                eprintln!("note: patch line {line} matches no line of the state, left out: {text}");
            }
            if !request.args.json {
                let dim = std::io::stderr().is_terminal();
                let (on, off) = if dim {
                    ("\x1b[2m", "\x1b[0m")
                } else {
                    ("", "")
                };
                eprintln!("{on}── next state (the patch applied) ──{off}");
                let mut out = std::io::stdout().lock();
                write!(out, "{}", applied.state)?;
                if !applied.state.ends_with('\n') {
                    writeln!(out)?;
                }
                out.flush()?;
            }
            (applied.state, Some(written))
        }
    };
    if request.args.json {
        let value = json!({
            "domain": request.domain.as_str(),
            "observation": observation,
            "patch": patch,
            "state": parse_state(request.domain, &observation),
            "well_formed": well_formed,
            "tokens": output.tokens,
            "seconds": output.secs,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    }
    Ok(())
}
