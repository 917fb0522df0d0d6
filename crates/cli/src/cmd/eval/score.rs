//! `agentworld eval score`: the per-domain table and both overall figures from judged rows.

use std::path::PathBuf;

use agentworld_world::Row;
use agentworld_world::bench::{
    Dimension, Report, aggregate, parse_judged_jsonl, sample_from_value,
};
use anyhow::{Context, Result};

/// Arguments of `agentworld eval score`.
#[derive(clap::Args)]
pub struct ScoreArgs {
    /// Judged rows (JSONL): the output of `eval judge`, or `eval.py judge`'s judged.jsonl.
    #[arg(long)]
    data: PathBuf,
    /// Print the figures as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `eval score`.
pub fn run(args: ScoreArgs) -> Result<()> {
    let text = std::fs::read_to_string(&args.data)
        .with_context(|| format!("reading {}", args.data.display()))?;
    let samples =
        parse_judged_jsonl(&text).with_context(|| format!("reading {}", args.data.display()))?;
    let report = aggregate(&samples);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(())
}

/// The score table of judged rows held in memory.
pub fn report_of_rows<'a>(rows: impl Iterator<Item = &'a Row>) -> Result<Report> {
    let samples = rows
        .enumerate()
        .map(|(i, row)| Ok(sample_from_value(i + 1, &serde_json::to_value(row)?)?))
        .collect::<Result<Vec<_>>>()?;
    Ok(aggregate(&samples))
}

fn figure(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |v| format!("{v:.2}"))
}

/// Prints the per-domain table (normalised 0–100) and both overall figures.
pub fn print_report(report: &Report) {
    let dims: Vec<&str> = Dimension::ALL.iter().map(|d| d.as_str()).collect();
    println!(
        "| domain | samples | valid | {} | score |",
        dims.join(" | ")
    );
    println!("|---|---|---|{}---|", "---|".repeat(dims.len()));
    for d in &report.domains {
        let cells: Vec<String> = d.dimensions.iter().map(|v| figure(*v)).collect();
        println!(
            "| {} | {} | {} | {} | {} |",
            d.domain,
            d.samples,
            d.valid,
            cells.join(" | "),
            figure(d.total)
        );
    }
    let scored_domains = report.domains.iter().filter(|d| d.total.is_some()).count();
    println!(
        "Overall (mean of {scored_domains} domain scores, as the README table): {}",
        figure(report.overall_domain_mean)
    );
    println!(
        "Overall (mean of {} scored samples, as eval.py): {}",
        report.scored,
        figure(report.overall_sample_weighted)
    );
    println!(
        "samples {}, scored {}, not scored {} (failed, or no score above 0)",
        report.samples, report.scored, report.unscored
    );
}
