//! Prints generated rows (development aid): `gen_preview terminal|android|web N [full]`.
use agentworld_data::{TerminalDataConfig, generate_terminal, row_tokens};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    let full = args.get(3).is_some();
    let rows = match args.get(1).map(String::as_str) {
        Some("terminal") | None => generate_terminal(&TerminalDataConfig {
            n,
            seed: 1,
            ..Default::default()
        })
        .unwrap(),
        Some("android") => {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/cases/android");
            let mut paths: Vec<_> = std::fs::read_dir(dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            paths.sort();
            let dumps = agentworld_data::android::Dump::load(&paths).unwrap();
            agentworld_data::generate_android(&agentworld_data::AndroidDataConfig {
                n,
                seed: 1,
                dumps,
                ..Default::default()
            })
            .unwrap()
        }
        Some("web") => {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/cases/web/browsergym");
            let pages = agentworld_data::WebPage::load_dir(dir).unwrap_or_default();
            agentworld_data::generate_web(&agentworld_data::WebDataConfig {
                n,
                seed: 1,
                pages,
                ..Default::default()
            })
            .unwrap()
        }
        Some(other) => panic!("unknown {other}"),
    };
    for r in &rows {
        if full {
            println!(
                "==== {} {:?} turn_idx={} tokens~{}",
                r.id,
                r.split,
                r.turn_idx,
                row_tokens(r)
            );
            for (p, o) in r.prompt.iter().zip(&r.response) {
                println!("--- prompt\n{p}\n--- response\n{o}");
            }
        }
        println!(
            "{:?} {} | {} | tok~{}",
            r.split.unwrap(),
            r.current_prompt.lines().nth(3).unwrap_or(""),
            r.thinking.as_deref().unwrap_or(""),
            row_tokens(r)
        );
    }
}
