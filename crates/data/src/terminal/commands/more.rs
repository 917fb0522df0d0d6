//! Longer commands (pipelines, `&&`/`||` chains, `for` loops) and more errors (a script
//! without the execute bit, a missing script, `cd` into a file, `mkdir` under a missing
//! directory, `rmdir` of a non-empty one). Permission errors come from `./script.sh` on a file
//! without any execute bit, which bash refuses even for root.

use super::{DIR_NAMES, FILE_NAMES, Template, p};

/// Names of seeded shell scripts (seeded without the execute bit).
pub const SCRIPT_NAMES: [&str; 4] = ["run.sh", "build.sh", "hello.sh", "backup.sh"];

/// The longer and error templates, in a fixed order (appended to the base table).
pub const MORE: &[Template] = &[
    Template {
        id: "sort_head",
        build: |c| {
            let f = c.file()?;
            let k = 1 + c.rng.below(3);
            p(
                format!("sort {f} | head -n {k}"),
                format!("the pipe prints the first {k} line(s) of {f} in sorted order"),
            )
        },
    },
    Template {
        id: "grep_v_wc",
        build: |c| {
            let f = c.file()?;
            let w = c.word_for(&f);
            p(
                format!("grep -v {w} {f} | wc -l"),
                format!("the pipe counts the lines of {f} without {w}"),
            )
        },
    },
    Template {
        id: "ls_wc",
        build: |c| {
            p(
                "ls -1 | wc -l".into(),
                format!("the pipe counts the entries of {}", c.dir),
            )
        },
    },
    Template {
        id: "cat_sort_uniq",
        build: |c| {
            if c.files.len() < 2 {
                return None;
            }
            let a = c.file()?;
            let b = c.files.iter().find(|f| **f != a)?.clone();
            p(
                format!("cat {a} {b} | sort | uniq | head -n 5"),
                format!("the pipeline prints the first distinct sorted lines of {a} and {b}"),
            )
        },
    },
    Template {
        id: "mkdir_cd_touch",
        build: |c| {
            let d = c.fresh(&DIR_NAMES);
            let f = c.rng.pick(&FILE_NAMES)?.to_string();
            p(
                format!("mkdir {d} && cd {d} && touch {f} && ls"),
                format!("the chain creates {d}, moves into it, creates {f} and lists it"),
            )
        },
    },
    Template {
        id: "cd_ls",
        build: |c| {
            let d = c.dir()?;
            p(
                format!("cd {d} && ls -a"),
                format!("the chain moves into {d} and lists it with hidden entries"),
            )
        },
    },
    Template {
        id: "echo_cat",
        build: |c| {
            let w = c.words(1, 3);
            let f = c.fresh(&FILE_NAMES);
            p(
                format!("echo {w} > {f} && cat {f}"),
                format!("the chain writes a line into {f} and prints it"),
            )
        },
    },
    Template {
        id: "missing_and",
        build: |c| {
            let m = c.fresh(&FILE_NAMES);
            p(
                format!("cat {m} && echo done"),
                format!("{m} does not exist, so cat fails and && skips the echo"),
            )
        },
    },
    Template {
        id: "for_wc",
        build: |c| {
            c.files.iter().any(|f| f.ends_with(".txt")).then_some(())?;
            p(
                "for f in *.txt; do wc -l \"$f\"; done".into(),
                "the loop counts the lines of each .txt file".into(),
            )
        },
    },
    Template {
        id: "for_echo",
        build: |c| {
            let n = 2 + c.rng.below(3);
            let w = c.words(n, n);
            p(
                format!("for f in {w}; do echo \"item $f\"; done"),
                "the loop prints one line per word".into(),
            )
        },
    },
    Template {
        id: "run_noexec",
        build: |c| {
            let s = c.script(false)?;
            p(
                format!("./{s}"),
                format!("{s} lacks the execute bit, so bash refuses to run it"),
            )
        },
    },
    Template {
        id: "bash_script",
        build: |c| {
            let s = c.script(false)?;
            p(
                format!("bash {s}"),
                format!("bash runs {s} without needing the execute bit"),
            )
        },
    },
    Template {
        id: "chmod_run",
        build: |c| {
            let s = c.script(false)?;
            p(
                format!("chmod +x {s} && ./{s}"),
                format!("chmod +x makes {s} executable, so ./{s} runs it"),
            )
        },
    },
    Template {
        id: "run_missing",
        build: |c| {
            let s = c.fresh(&SCRIPT_NAMES);
            p(
                format!("./{s}"),
                format!("{s} does not exist, so bash cannot run it"),
            )
        },
    },
    Template {
        id: "cd_file",
        build: |c| {
            let f = c.file()?;
            p(
                format!("cd {f}"),
                format!("{f} is a file, not a directory, so cd fails"),
            )
        },
    },
    Template {
        id: "mkdir_nested",
        build: |c| {
            let d = c.fresh(&DIR_NAMES);
            let sub = c.rng.pick(&DIR_NAMES)?.to_string();
            p(
                format!("mkdir {d}/{sub}"),
                format!("{d} does not exist, so mkdir cannot create {d}/{sub}"),
            )
        },
    },
    Template {
        id: "rmdir_full",
        build: |c| {
            let d = c.dir()?;
            p(
                format!("rmdir {d}"),
                format!("rmdir removes {d} only if it is empty"),
            )
        },
    },
    // held out by default
    Template {
        id: "for_head",
        build: |c| {
            c.files.iter().any(|f| f.ends_with(".txt")).then_some(())?;
            p(
                "for f in *.txt; do echo \"== $f\"; head -n 1 \"$f\"; done".into(),
                "the loop prints each .txt file's name and first line".into(),
            )
        },
    },
    Template {
        id: "missing_or",
        build: |c| {
            let m = c.fresh(&FILE_NAMES);
            p(
                format!("cat {m} || echo 'no {m}'"),
                format!("{m} does not exist, so cat fails and || runs the echo"),
            )
        },
    },
];
