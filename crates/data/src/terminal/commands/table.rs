//! The base template table: short commands and their common errors.

use super::{DIR_NAMES, FILE_NAMES, TYPOS, Template, p};

/// The base templates, in a fixed order.
pub const BASE: &[Template] = &[
    Template {
        id: "ls",
        build: |c| {
            p(
                "ls".into(),
                format!("ls lists the entries of {} in C-locale order", c.dir),
            )
        },
    },
    Template {
        id: "ls_l",
        build: |c| {
            p(
                "ls -l".into(),
                format!("ls -l lists {} in long format", c.dir),
            )
        },
    },
    Template {
        id: "ls_a",
        build: |c| {
            p(
                "ls -a".into(),
                format!("ls -a lists {} including . and ..", c.dir),
            )
        },
    },
    Template {
        id: "ls_dir",
        build: |c| {
            let d = c.dir()?;
            p(format!("ls {d}"), format!("ls shows what is inside {d}"))
        },
    },
    Template {
        id: "ls_missing",
        build: |c| {
            let m = c.fresh(&FILE_NAMES);
            p(
                format!("ls {m}"),
                format!("{m} does not exist, so ls reports it cannot access it"),
            )
        },
    },
    Template {
        id: "cat",
        build: |c| {
            let f = c.file()?;
            p(
                format!("cat {f}"),
                format!("cat prints the contents of {f}"),
            )
        },
    },
    Template {
        id: "cat_missing",
        build: |c| {
            let m = c.fresh(&FILE_NAMES);
            p(
                format!("cat {m}"),
                format!("{m} does not exist, so cat prints an error"),
            )
        },
    },
    Template {
        id: "cat_dir",
        build: |c| {
            let d = c.dir()?;
            p(
                format!("cat {d}"),
                format!("{d} is a directory, so cat refuses it"),
            )
        },
    },
    Template {
        id: "echo",
        build: |c| {
            let w = c.words(1, 4);
            p(format!("echo {w}"), "echo prints its arguments".into())
        },
    },
    Template {
        id: "echo_new",
        build: |c| {
            let w = c.words(1, 4);
            let f = c.fresh(&FILE_NAMES);
            p(
                format!("echo {w} > {f}"),
                format!("the redirect writes a line into a new file {f}"),
            )
        },
    },
    Template {
        id: "echo_append",
        build: |c| {
            let w = c.words(1, 3);
            let f = c.file()?;
            p(
                format!("echo {w} >> {f}"),
                format!("the redirect appends a line to {f}"),
            )
        },
    },
    Template {
        id: "mkdir",
        build: |c| {
            let d = c.fresh(&DIR_NAMES);
            p(
                format!("mkdir {d}"),
                format!("mkdir creates the directory {d}"),
            )
        },
    },
    Template {
        id: "mkdir_exists",
        build: |c| {
            let d = c.dir()?;
            p(
                format!("mkdir {d}"),
                format!("{d} already exists, so mkdir fails"),
            )
        },
    },
    Template {
        id: "cd_dir",
        build: |c| {
            let d = c.dir()?;
            p(
                format!("cd {d}"),
                format!("cd moves into {d}, so the prompt changes"),
            )
        },
    },
    Template {
        id: "cd_up",
        build: |c| {
            if c.at_root {
                return None;
            }
            p(
                "cd ..".into(),
                "cd .. moves up one level, so the prompt changes".into(),
            )
        },
    },
    Template {
        id: "pwd",
        build: |c| {
            p(
                "pwd".into(),
                format!("pwd prints the absolute path of {}", c.dir),
            )
        },
    },
    Template {
        id: "wc_l",
        build: |c| {
            let f = c.file()?;
            p(
                format!("wc -l {f}"),
                format!("wc -l counts the lines of {f}"),
            )
        },
    },
    Template {
        id: "wc_w",
        build: |c| {
            let f = c.file()?;
            p(
                format!("wc -w {f}"),
                format!("wc -w counts the words of {f}"),
            )
        },
    },
    Template {
        id: "head",
        build: |c| {
            let f = c.file()?;
            let k = 1 + c.rng.below(3);
            p(
                format!("head -n {k} {f}"),
                format!("head shows the first {k} line(s) of {f}"),
            )
        },
    },
    Template {
        id: "grep",
        build: |c| {
            let f = c.file()?;
            let w = c.word_for(&f);
            p(
                format!("grep {w} {f}"),
                format!("grep prints the lines of {f} containing {w}"),
            )
        },
    },
    Template {
        id: "grep_c",
        build: |c| {
            let f = c.file()?;
            let w = c.word_for(&f);
            p(
                format!("grep -c {w} {f}"),
                format!("grep -c counts the lines of {f} containing {w}"),
            )
        },
    },
    Template {
        id: "touch",
        build: |c| {
            let f = c.fresh(&FILE_NAMES);
            p(
                format!("touch {f}"),
                format!("touch creates the empty file {f}"),
            )
        },
    },
    Template {
        id: "rm",
        build: |c| {
            let f = c.file()?;
            p(format!("rm {f}"), format!("rm deletes {f}"))
        },
    },
    Template {
        id: "rm_missing",
        build: |c| {
            let m = c.fresh(&FILE_NAMES);
            p(
                format!("rm {m}"),
                format!("{m} does not exist, so rm fails"),
            )
        },
    },
    Template {
        id: "mv",
        build: |c| {
            let f = c.file()?;
            let n = c.fresh(&FILE_NAMES);
            p(format!("mv {f} {n}"), format!("mv renames {f} to {n}"))
        },
    },
    Template {
        id: "cp",
        build: |c| {
            let f = c.file()?;
            let n = c.fresh(&FILE_NAMES);
            p(format!("cp {f} {n}"), format!("cp copies {f} to {n}"))
        },
    },
    Template {
        id: "sort",
        build: |c| {
            let f = c.file()?;
            p(
                format!("sort {f}"),
                format!("sort prints the lines of {f} in C-locale order"),
            )
        },
    },
    Template {
        id: "find",
        build: |_| {
            p(
                "find .".into(),
                "find lists every path below the current directory".into(),
            )
        },
    },
    Template {
        id: "find_name",
        build: |_| {
            p(
                "find . -name '*.txt'".into(),
                "find lists the .txt files below the current directory".into(),
            )
        },
    },
    Template {
        id: "printf",
        build: |c| {
            let w = c.words(2, 3);
            p(
                format!("printf '%s\\n' {w}"),
                "printf prints each argument on its own line".into(),
            )
        },
    },
    Template {
        id: "seq",
        build: |c| {
            let a = c.rng.range(1, 5);
            let b = a + c.rng.range(1, 6);
            p(
                format!("seq {a} {b}"),
                format!("seq counts from {a} to {b}"),
            )
        },
    },
    Template {
        id: "expr",
        build: |c| {
            let a = c.rng.range(2, 60);
            let b = c.rng.range(1, 40);
            let op = if c.rng.chance(0.5) { "+" } else { "-" };
            p(
                format!("expr {a} {op} {b}"),
                format!("expr evaluates {a} {op} {b}"),
            )
        },
    },
    Template {
        id: "not_found",
        build: |c| {
            let t = c.rng.pick(&TYPOS)?.to_string();
            let name = t.split(' ').next().unwrap_or("").to_string();
            p(
                t,
                format!("{name} is not a command, so bash reports it was not found"),
            )
        },
    },
    Template {
        id: "cat_wc",
        build: |c| {
            let f = c.file()?;
            p(
                format!("cat {f} | wc -l"),
                format!("the pipe counts the lines of {f}"),
            )
        },
    },
    // held out by default
    Template {
        id: "tail",
        build: |c| {
            let f = c.file()?;
            let k = 1 + c.rng.below(3);
            p(
                format!("tail -n {k} {f}"),
                format!("tail shows the last {k} line(s) of {f}"),
            )
        },
    },
    Template {
        id: "sort_uniq_c",
        build: |c| {
            let f = c.file()?;
            p(
                format!("sort {f} | uniq -c"),
                format!("sort | uniq -c counts each distinct line of {f}"),
            )
        },
    },
    Template {
        id: "grep_n",
        build: |c| {
            let f = c.file()?;
            let w = c.word_for(&f);
            p(
                format!("grep -n {w} {f}"),
                format!("grep -n prints the numbered lines of {f} containing {w}"),
            )
        },
    },
    Template {
        id: "tr_upper",
        build: |c| {
            let f = c.file()?;
            p(
                format!("tr a-z A-Z < {f}"),
                format!("tr prints {f} in upper case"),
            )
        },
    },
    Template {
        id: "wc_c",
        build: |c| {
            let f = c.file()?;
            p(
                format!("wc -c {f}"),
                format!("wc -c counts the bytes of {f}"),
            )
        },
    },
];
