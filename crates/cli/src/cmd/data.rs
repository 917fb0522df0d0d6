//! `agentworld data`: real transitions for training, as AgentWorldBench JSONL rows.

use std::path::PathBuf;

use agentworld_data::android::Dump;
use agentworld_data::{
    AndroidDataConfig, AtspiTree, OsDataConfig, TerminalDataConfig, WebDataConfig, WebPage,
    generate_android, generate_os, generate_terminal, generate_web,
};
use agentworld_data::{RenameConfig, rename_content};
use agentworld_train::recipe::{ANDROID_PROMPT, OS_PROMPT, TERMINAL_PROMPT, WEB_PROMPT};
use agentworld_world::row::write_jsonl_file;
use agentworld_world::{Domain, PromptSet, Split};
use anyhow::{Context, Result};

use crate::paths;

/// Which generator.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Kind {
    /// Commands run by real bash in throwaway sandbox directories.
    Terminal,
    /// Local edits on real Android UI dumps, computed exactly.
    Android,
    /// Edits, link clicks and go_back on real HTML pages and a built-in site, computed exactly.
    Web,
    /// Clicks, typing, opening and closing windows on real AT-SPI trees and a mini desktop.
    Os,
}

/// Arguments of `agentworld data`.
#[derive(clap::Args)]
pub struct Args {
    /// What to generate.
    #[arg(value_enum)]
    kind: Kind,
    /// Output JSONL file.
    #[arg(long)]
    out: PathBuf,
    /// Rows to generate (about one in ten is held out).
    #[arg(long, default_value_t = 200)]
    n: usize,
    /// Seed; the same seed gives the same rows.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Folder of uiautomator dumps (Android). Default: ../shared/cases/android.
    #[arg(long)]
    dumps: Option<PathBuf>,
    /// Folder of HTML pages (Web). Default: ../shared/cases/web/browsergym.
    #[arg(long)]
    pages: Option<PathBuf>,
    /// Folder of AT-SPI desktop trees (OS). Default: ../shared/cases/os.
    #[arg(long)]
    trees: Option<PathBuf>,
    /// Share of the training rows on made-up states instead of the real and built-in ones:
    /// Android screens, Web sites or OS desktops (held-out rows never change); not for
    /// terminal rows, which are real bash.
    #[arg(long, default_value_t = 0.0)]
    synthetic_share: f64,
    /// Share of the training rows (of those not on made-up states) that are drills: one edit
    /// on a short made-up form (Web) or window (OS); not for terminal or Android rows.
    #[arg(long, default_value_t = 0.0)]
    drill_share: f64,
    /// Share of the training rows (Web, Android, OS) whose content words are renamed to
    /// made-up ones, as `train demo` does (its default: 0.8); 0 keeps them.
    #[arg(long, default_value_t = 0.0)]
    rename_share: f64,
    /// System prompt style: `demo` (the short prompts the demo model is trained with) or
    /// `full` (our full domain prompts).
    #[arg(long, default_value = "demo")]
    prompts: String,
}

pub fn run(args: Args) -> Result<()> {
    if !(0.0..=1.0).contains(&args.rename_share) {
        anyhow::bail!(
            "--rename-share {} is not a share between 0 and 1",
            args.rename_share
        );
    }
    if args.synthetic_share > 0.0 && matches!(args.kind, Kind::Terminal) {
        anyhow::bail!(
            "--synthetic-share is for `data android|web|os` (made-up states); terminal rows are real bash"
        );
    }
    for (flag, share) in [
        ("--synthetic-share", args.synthetic_share),
        ("--drill-share", args.drill_share),
    ] {
        if !(0.0..=1.0).contains(&share) {
            anyhow::bail!("{flag} {share} is not a share between 0 and 1");
        }
    }
    if args.drill_share > 0.0 && matches!(args.kind, Kind::Terminal | Kind::Android) {
        anyhow::bail!("--drill-share is for `data web|os` (one edit on a made-up form or window)");
    }
    let full = args.prompts == "full";
    let prompt = |domain: Domain, demo: &str| -> String {
        if full {
            PromptSet::builtin().system_prompt(domain).into()
        } else {
            demo.into()
        }
    };
    let mut rows = match args.kind {
        Kind::Terminal => generate_terminal(&TerminalDataConfig {
            n: args.n,
            seed: args.seed,
            system_prompt: prompt(Domain::Terminal, TERMINAL_PROMPT),
            ..Default::default()
        })?,
        Kind::Android => {
            let dir = args.dumps.unwrap_or_else(paths::default_android_dumps);
            let dumps = Dump::load_dir(&dir)
                .with_context(|| format!("reading dumps from {}", dir.display()))?;
            generate_android(&AndroidDataConfig {
                n: args.n,
                seed: args.seed,
                dumps,
                synthetic_share: args.synthetic_share,
                system_prompt: prompt(Domain::Android, ANDROID_PROMPT),
                ..Default::default()
            })?
        }
        Kind::Web => {
            let dir = args
                .pages
                .unwrap_or_else(|| paths::default_cases().join("web/browsergym"));
            let pages = WebPage::load_dir(&dir)
                .with_context(|| format!("reading pages from {}", dir.display()))?;
            generate_web(&WebDataConfig {
                n: args.n,
                seed: args.seed,
                pages,
                held_out: Some(vec!["basic_iframe_site_inner-iframe".into()]),
                synthetic_share: args.synthetic_share,
                drill_share: args.drill_share,
                system_prompt: prompt(Domain::Web, WEB_PROMPT),
                ..Default::default()
            })?
        }
        Kind::Os => {
            let dir = args
                .trees
                .unwrap_or_else(|| paths::default_cases().join("os"));
            let trees = AtspiTree::load_dir(&dir)
                .with_context(|| format!("reading desktop trees from {}", dir.display()))?;
            generate_os(&OsDataConfig {
                n: args.n,
                seed: args.seed,
                trees,
                synthetic_share: args.synthetic_share,
                drill_share: args.drill_share,
                system_prompt: prompt(Domain::Os, OS_PROMPT),
                ..Default::default()
            })?
        }
    };
    if args.rename_share > 0.0 {
        // As the recipe: only training rows, seeded by the data seed.
        let (mut train, test): (Vec<_>, Vec<_>) =
            rows.into_iter().partition(|r| r.split != Some(Split::Test));
        let renamed = rename_content(
            &mut train,
            &RenameConfig {
                share: args.rename_share,
                seed: args.seed,
                ..Default::default()
            },
        );
        eprintln!("content words renamed in {renamed} training rows");
        rows = train.into_iter().chain(test).collect();
    }
    write_jsonl_file(&args.out, &rows)?;
    let held = rows.iter().filter(|r| r.split == Some(Split::Test)).count();
    eprintln!(
        "wrote {} rows ({} held out) to {}",
        rows.len(),
        held,
        args.out.display()
    );
    Ok(())
}
