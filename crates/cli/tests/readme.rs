//! Every example command in README.md that runs on the demo model is run here, and the claims
//! written under it are checked, so the README cannot drift from what the command does
//! (issue 37). A command block is a fenced `sh` block; its claims are the
//! `<!-- check: … -->` comments right after it:
//!
//! - `stdout contains "TEXT"` / `stdout lacks "TEXT"` (and the same for `stderr`), TEXT in
//!   JSON string syntax (`\n`, `\t`, `\"`);
//! - `stdout equals FILE`: the output is that file's text (both trimmed).
//!
//! Commands that need what a test cannot have (a GPU build, a server, a model download, a
//! long run) are the README's `serve`, `rollout`, `train`, `bench` and `--endpoint` examples;
//! every other `agentworld-cli` command must carry at least one claim.

mod common;

use common::{agentworld, repo, text};

/// One command of the README and the claims under it.
struct Example {
    line: usize,
    /// The whole command, its continuation lines joined.
    command: String,
    args: Vec<String>,
    checks: Vec<String>,
}

/// The `cargo run -p agentworld-cli -- …` commands of README.md's `sh` blocks, with the
/// check comments after each block (a block's checks belong to its commands).
fn examples(readme: &str) -> Vec<Example> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "```sh" {
            i += 1;
            continue;
        }
        let mut commands = Vec::new();
        let mut j = i + 1;
        let mut joined = String::new();
        let mut start = j;
        while j < lines.len() && lines[j].trim() != "```" {
            let l = lines[j];
            if joined.is_empty() {
                start = j;
            }
            match l.strip_suffix('\\') {
                Some(head) => joined.push_str(head),
                None => {
                    joined.push_str(l);
                    commands.push((start + 1, std::mem::take(&mut joined)));
                }
            }
            j += 1;
        }
        let mut checks = Vec::new();
        let mut k = j + 1;
        while let Some(c) = lines
            .get(k)
            .and_then(|l| l.trim().strip_prefix("<!-- check: "))
            .and_then(|l| l.strip_suffix(" -->"))
        {
            checks.push(c.to_string());
            k += 1;
        }
        for (line, command) in commands {
            // `(cd web && …)` and comments are not agentworld runs.
            let command = command.split(" #").next().unwrap_or("").trim().to_string();
            let Some(rest) = command
                .strip_prefix("cargo run")
                .filter(|r| r.contains("-p agentworld-cli"))
                .and_then(|r| r.split_once(" -- ").map(|(_, a)| a.to_string()))
            else {
                continue;
            };
            let args = shlex::split(&rest)
                .unwrap_or_else(|| panic!("README.md:{line}: the command does not split: {rest}"));
            out.push(Example {
                line,
                command: command.clone(),
                args,
                checks: checks.clone(),
            });
        }
        i = k;
    }
    out
}

/// Whether an example needs more than this test has (see the module docs).
fn documentation_only(e: &Example) -> bool {
    let first = e.args.first().map(String::as_str).unwrap_or("");
    matches!(first, "serve" | "rollout" | "train" | "bench")
        || e.args.iter().any(|a| a == "--endpoint")
        || e.command.contains("--features")
}

/// A claim's quoted text, read as a JSON string.
fn quoted(check: &str, rest: &str, line: usize) -> String {
    serde_json::from_str(rest.trim())
        .unwrap_or_else(|e| panic!("README.md:{line}: bad check {check:?}: {e}"))
}

#[test]
fn every_readme_example_does_what_the_readme_says() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let all = examples(&readme);
    let mut run = 0;
    for e in &all {
        if documentation_only(e) {
            continue;
        }
        assert!(
            !e.checks.is_empty(),
            "README.md:{}: `{}` has no <!-- check: … --> under its block",
            e.line,
            e.args.join(" ")
        );
        let args: Vec<&str> = e.args.iter().map(String::as_str).collect();
        let output = agentworld(&args);
        assert!(
            output.status.success(),
            "README.md:{}: `{}` failed: {}",
            e.line,
            e.args.join(" "),
            text(&output.stderr)
        );
        let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
        for check in &e.checks {
            let (stream, rest) = check.split_once(' ').unwrap_or((check, ""));
            let body = match stream {
                "stdout" => &stdout,
                "stderr" => &stderr,
                _ => panic!("README.md:{}: unknown stream in {check:?}", e.line),
            };
            let (verb, rest) = rest.split_once(' ').unwrap_or((rest, ""));
            match verb {
                "contains" => {
                    let want = quoted(check, rest, e.line);
                    assert!(
                        body.contains(&want),
                        "README.md:{}: {stream} of `{}` lacks {want:?}:\n{body}",
                        e.line,
                        e.args.join(" ")
                    );
                }
                "lacks" => {
                    let want = quoted(check, rest, e.line);
                    assert!(
                        !body.contains(&want),
                        "README.md:{}: {stream} of `{}` holds {want:?}:\n{body}",
                        e.line,
                        e.args.join(" ")
                    );
                }
                "equals" => {
                    let file = std::fs::read_to_string(repo().join(rest.trim()))
                        .unwrap_or_else(|e2| panic!("README.md:{}: {rest}: {e2}", e.line));
                    assert_eq!(
                        body.trim(),
                        file.trim(),
                        "README.md:{}: {stream} of `{}` is not {rest}",
                        e.line,
                        e.args.join(" ")
                    );
                }
                _ => panic!("README.md:{}: unknown check {check:?}", e.line),
            }
        }
        run += 1;
    }
    assert!(
        run >= 4,
        "only {run} README examples ran: one a GUI domain and terminal at least"
    );
}

#[test]
fn the_readme_parser_reads_commands_and_their_checks() {
    let readme = "intro\n```sh\ncargo run -p agentworld-cli -- simulate --domain web \\\n    --action \"fill('1', 'a b')\"\n```\n<!-- check: stdout contains \"x\" -->\n<!-- check: stderr lacks \"y\" -->\n\n```sh\ncargo run -p agentworld-cli -- serve      # open it\n(cd web && trunk build)\n```\n";
    let all = examples(readme);
    assert_eq!(all.len(), 2);
    assert_eq!(
        all[0].args,
        [
            "simulate",
            "--domain",
            "web",
            "--action",
            "fill('1', 'a b')"
        ]
    );
    assert_eq!(all[0].line, 3);
    assert_eq!(
        all[0].checks,
        ["stdout contains \"x\"", "stderr lacks \"y\""]
    );
    assert_eq!(all[1].args, ["serve"]);
    assert!(all[1].checks.is_empty());
    assert!(documentation_only(&all[1]));
    assert!(!documentation_only(&all[0]));
}
