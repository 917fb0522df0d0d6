//! `agentworld`: run a language world model on real states, inspect checkpoints, make data,
//! train the demo model and measure it.

mod backend;
mod cmd;
mod display;
mod endpoint;
mod model_dir;
mod paths;
mod progress;
mod values;

use clap::{Parser, Subcommand};

// Tensors come and go by the hundred per forward pass; glibc's allocator hands large ones back to
// the kernel and faults them in again, mimalloc keeps them (measured with `agentworld bench`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A Rust engine for language world models (Qwen-AgentWorld and the built-in demo model).
#[derive(Parser)]
#[command(name = "agentworld", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Predict the next observation of a terminal, phone, browser or desktop after an action.
    Simulate(cmd::simulate::Args),
    /// Show a checkpoint's config, parameter counts and tensor layout without running it.
    Inspect(cmd::inspect::Args),
    /// Read a state file (UI dump, page, accessibility tree, screen, tool result) into a tree.
    Parse(cmd::parse::Args),
    /// What changed between two states of one format: nodes inserted, removed, moved, edited.
    Diff(cmd::diff::Args),
    /// Generate training transitions in the AgentWorldBench JSONL format.
    Data(cmd::data::Args),
    /// Train a world model (the demo recipe).
    Train(Box<cmd::train::Args>),
    /// Measure a model's fidelity on held-out transitions.
    Eval(cmd::eval::Args),
    /// Serve a model over an OpenAI-compatible HTTP API, with continuous batching.
    Serve(cmd::serve::Args),
    /// Run an agent policy against a world model in many environments at once (Sim RL).
    Rollout(cmd::rollout::Args),
    /// Measure prefill, decode and memory beside transformers/PyTorch on the same checkpoint.
    Bench(cmd::bench::Args),
    /// Compare a checkpoint's logits and greedy tokens with a reference run (device checks).
    Parity(cmd::parity::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Simulate(args) => cmd::simulate::run(args),
        Command::Inspect(args) => cmd::inspect::run(args),
        Command::Parity(args) => cmd::parity::run(args),
        Command::Parse(args) => cmd::parse::run(args),
        Command::Diff(args) => cmd::diff::run(args),
        Command::Data(args) => cmd::data::run(args),
        Command::Train(args) => cmd::train::run(*args),
        Command::Eval(args) => cmd::eval::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Rollout(args) => cmd::rollout::run(args),
        Command::Bench(args) => cmd::bench::run(args),
    };
    if let Err(e) = result {
        eprintln!("error: {}", error_chain(&e));
        std::process::exit(1);
    }
}

/// The error and its causes joined by `: `, leaving out a cause whose text the message already
/// ends with (our library errors print their source themselves).
fn error_chain(e: &anyhow::Error) -> String {
    let mut message = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if message.ends_with(&text) {
            continue;
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&text);
    }
    message
}
