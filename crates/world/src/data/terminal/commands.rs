//! Command templates: what the generator types, built only from our word lists and the names
//! that exist in the sandbox, and a validator that keeps every command inside it.

use crate::data::rng::Rng;

/// Words for file contents and arguments.
pub const WORDS: [&str; 24] = [
    "apple", "banana", "cherry", "delta", "echo", "falcon", "garden", "harbor", "island", "jungle", "kernel", "lemon", "meadow",
    "north", "orange", "pepper", "quartz", "river", "silver", "tiger", "umbrella", "violet", "window", "yellow",
];
/// Names of seeded and created files.
pub const FILE_NAMES: [&str; 14] = [
    "notes.txt", "todo.txt", "data.csv", "log.txt", "readme.md", "names.txt", "fruits.txt", "numbers.txt", "config.ini",
    "report.txt", "list.txt", "words.txt", "draft.md", "plan.txt",
];
/// Names of seeded and created directories.
pub const DIR_NAMES: [&str; 10] = ["docs", "src", "backup", "logs", "data", "tmp", "archive", "projects", "music", "photos"];
/// Mistyped commands for "command not found".
const TYPOS: [&str; 6] = ["sl", "gti status", "pyhton", "mkdri tmp", "grpe apple notes.txt", "cta notes.txt"];

/// Template ids held out of training by default (the test split ends with one of these).
pub const DEFAULT_HELD_OUT: [&str; 5] = ["tail", "sort_uniq_c", "grep_n", "tr_upper", "wc_c"];

/// What the generator knows about the shell's current directory.
pub struct Ctx<'a> {
    /// The RNG.
    pub rng: &'a mut Rng,
    /// Visible files, sorted.
    pub files: Vec<String>,
    /// Visible directories, sorted.
    pub dirs: Vec<String>,
    /// Whether the shell is at the sandbox root.
    pub at_root: bool,
    /// The current directory as the prompt shows it.
    pub dir: String,
    /// Reads a file of the current directory.
    pub read: &'a dyn Fn(&str) -> Option<String>,
}

impl Ctx<'_> {
    fn file(&mut self) -> Option<String> {
        self.rng.pick(&self.files).cloned()
    }
    fn dir(&mut self) -> Option<String> {
        self.rng.pick(&self.dirs).cloned()
    }
    fn fresh(&mut self, pool: &[&str]) -> String {
        let free: Vec<&str> = pool.iter().copied().filter(|n| !self.files.iter().chain(&self.dirs).any(|e| e == n)).collect();
        match self.rng.pick(&free) {
            Some(n) => n.to_string(),
            None => format!("new{}.txt", self.rng.below(1000)),
        }
    }
    fn words(&mut self, lo: usize, hi: usize) -> String {
        let n = lo + self.rng.below(hi - lo + 1);
        (0..n).map(|_| *self.rng.pick(&WORDS).unwrap_or(&"x")).collect::<Vec<_>>().join(" ")
    }
    /// A word in `file` (70%) or a random word.
    fn word_for(&mut self, file: &str) -> String {
        let content = (self.read)(file).unwrap_or_default();
        let inside: Vec<&str> = content.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| w.len() > 2).collect();
        if !inside.is_empty() && self.rng.chance(0.7) {
            return self.rng.pick(&inside).map(|w| w.to_string()).unwrap_or_default();
        }
        self.rng.pick(&WORDS).unwrap_or(&"x").to_string()
    }
}

/// A planned command and the first half of its thinking sentence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// The command line, without the Enter.
    pub command: String,
    /// What the command does, e.g. "cat shows notes.txt".
    pub hint: String,
}

/// A command template.
pub struct Template {
    /// Stable id (used for held-out lists).
    pub id: &'static str,
    /// Builds a command, or `None` when the directory lacks what it needs.
    pub build: fn(&mut Ctx) -> Option<Planned>,
}

fn p(command: String, hint: String) -> Option<Planned> {
    Some(Planned { command, hint })
}

/// Every template, in a fixed order.
pub const TEMPLATES: &[Template] = &[
    Template { id: "ls", build: |c| p("ls".into(), format!("ls lists the entries of {} in C-locale order", c.dir)) },
    Template { id: "ls_l", build: |c| p("ls -l".into(), format!("ls -l lists {} in long format", c.dir)) },
    Template { id: "ls_a", build: |c| p("ls -a".into(), format!("ls -a lists {} including . and ..", c.dir)) },
    Template { id: "ls_dir", build: |c| { let d = c.dir()?; p(format!("ls {d}"), format!("ls shows what is inside {d}")) } },
    Template { id: "ls_missing", build: |c| { let m = c.fresh(&FILE_NAMES); p(format!("ls {m}"), format!("{m} does not exist, so ls reports it cannot access it")) } },
    Template { id: "cat", build: |c| { let f = c.file()?; p(format!("cat {f}"), format!("cat prints the contents of {f}")) } },
    Template { id: "cat_missing", build: |c| { let m = c.fresh(&FILE_NAMES); p(format!("cat {m}"), format!("{m} does not exist, so cat prints an error")) } },
    Template { id: "cat_dir", build: |c| { let d = c.dir()?; p(format!("cat {d}"), format!("{d} is a directory, so cat refuses it")) } },
    Template { id: "echo", build: |c| { let w = c.words(1, 4); p(format!("echo {w}"), "echo prints its arguments".into()) } },
    Template { id: "echo_new", build: |c| { let w = c.words(1, 4); let f = c.fresh(&FILE_NAMES); p(format!("echo {w} > {f}"), format!("the redirect writes a line into a new file {f}")) } },
    Template { id: "echo_append", build: |c| { let w = c.words(1, 3); let f = c.file()?; p(format!("echo {w} >> {f}"), format!("the redirect appends a line to {f}")) } },
    Template { id: "mkdir", build: |c| { let d = c.fresh(&DIR_NAMES); p(format!("mkdir {d}"), format!("mkdir creates the directory {d}")) } },
    Template { id: "mkdir_exists", build: |c| { let d = c.dir()?; p(format!("mkdir {d}"), format!("{d} already exists, so mkdir fails")) } },
    Template { id: "cd_dir", build: |c| { let d = c.dir()?; p(format!("cd {d}"), format!("cd moves into {d}, so the prompt changes")) } },
    Template { id: "cd_up", build: |c| { if c.at_root { return None; } p("cd ..".into(), "cd .. moves up one level, so the prompt changes".into()) } },
    Template { id: "pwd", build: |c| p("pwd".into(), format!("pwd prints the absolute path of {}", c.dir)) },
    Template { id: "wc_l", build: |c| { let f = c.file()?; p(format!("wc -l {f}"), format!("wc -l counts the lines of {f}")) } },
    Template { id: "wc_w", build: |c| { let f = c.file()?; p(format!("wc -w {f}"), format!("wc -w counts the words of {f}")) } },
    Template { id: "head", build: |c| { let f = c.file()?; let k = 1 + c.rng.below(3); p(format!("head -n {k} {f}"), format!("head shows the first {k} line(s) of {f}")) } },
    Template { id: "grep", build: |c| { let f = c.file()?; let w = c.word_for(&f); p(format!("grep {w} {f}"), format!("grep prints the lines of {f} containing {w}")) } },
    Template { id: "grep_c", build: |c| { let f = c.file()?; let w = c.word_for(&f); p(format!("grep -c {w} {f}"), format!("grep -c counts the lines of {f} containing {w}")) } },
    Template { id: "touch", build: |c| { let f = c.fresh(&FILE_NAMES); p(format!("touch {f}"), format!("touch creates the empty file {f}")) } },
    Template { id: "rm", build: |c| { let f = c.file()?; p(format!("rm {f}"), format!("rm deletes {f}")) } },
    Template { id: "rm_missing", build: |c| { let m = c.fresh(&FILE_NAMES); p(format!("rm {m}"), format!("{m} does not exist, so rm fails")) } },
    Template { id: "mv", build: |c| { let f = c.file()?; let n = c.fresh(&FILE_NAMES); p(format!("mv {f} {n}"), format!("mv renames {f} to {n}")) } },
    Template { id: "cp", build: |c| { let f = c.file()?; let n = c.fresh(&FILE_NAMES); p(format!("cp {f} {n}"), format!("cp copies {f} to {n}")) } },
    Template { id: "sort", build: |c| { let f = c.file()?; p(format!("sort {f}"), format!("sort prints the lines of {f} in C-locale order")) } },
    Template { id: "find", build: |_| p("find .".into(), "find lists every path below the current directory".into()) },
    Template { id: "find_name", build: |_| p("find . -name '*.txt'".into(), "find lists the .txt files below the current directory".into()) },
    Template { id: "printf", build: |c| { let w = c.words(2, 3); p(format!("printf '%s\\n' {w}"), "printf prints each argument on its own line".into()) } },
    Template { id: "seq", build: |c| { let a = c.rng.range(1, 5); let b = a + c.rng.range(1, 6); p(format!("seq {a} {b}"), format!("seq counts from {a} to {b}")) } },
    Template { id: "expr", build: |c| { let a = c.rng.range(2, 60); let b = c.rng.range(1, 40); let op = if c.rng.chance(0.5) { "+" } else { "-" }; p(format!("expr {a} {op} {b}"), format!("expr evaluates {a} {op} {b}")) } },
    Template { id: "not_found", build: |c| { let t = c.rng.pick(&TYPOS)?.to_string(); let name = t.split(' ').next().unwrap_or("").to_string(); p(t, format!("{name} is not a command, so bash reports it was not found")) } },
    Template { id: "cat_wc", build: |c| { let f = c.file()?; p(format!("cat {f} | wc -l"), format!("the pipe counts the lines of {f}")) } },
    // held out by default
    Template { id: "tail", build: |c| { let f = c.file()?; let k = 1 + c.rng.below(3); p(format!("tail -n {k} {f}"), format!("tail shows the last {k} line(s) of {f}")) } },
    Template { id: "sort_uniq_c", build: |c| { let f = c.file()?; p(format!("sort {f} | uniq -c"), format!("sort | uniq -c counts each distinct line of {f}")) } },
    Template { id: "grep_n", build: |c| { let f = c.file()?; let w = c.word_for(&f); p(format!("grep -n {w} {f}"), format!("grep -n prints the numbered lines of {f} containing {w}")) } },
    Template { id: "tr_upper", build: |c| { let f = c.file()?; p(format!("tr a-z A-Z < {f}"), format!("tr prints {f} in upper case")) } },
    Template { id: "wc_c", build: |c| { let f = c.file()?; p(format!("wc -c {f}"), format!("wc -c counts the bytes of {f}")) } },
];

/// The template with this id.
pub fn template(id: &str) -> Option<&'static Template> {
    TEMPLATES.iter().find(|t| t.id == id)
}

/// Whether `command` stays inside the sandbox: no absolute paths, no `..` (except a plain
/// `cd ..` away from the root), no `~`, no expansions (`$`, backquotes).
pub fn is_safe(command: &str, at_root: bool) -> bool {
    if command.contains(['~', '$', '`']) {
        return false;
    }
    if command == "cd .." {
        return !at_root;
    }
    !command.split_whitespace().any(|w| {
        let w = w.trim_matches(['\'', '"']);
        w.starts_with('/') || w.contains("..")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_held_out_exist() {
        for (i, t) in TEMPLATES.iter().enumerate() {
            assert!(TEMPLATES[..i].iter().all(|u| u.id != t.id), "{}", t.id);
        }
        for id in DEFAULT_HELD_OUT {
            assert!(template(id).is_some(), "{id}");
        }
    }

    #[test]
    fn every_template_builds_safe_commands() {
        let read = |_: &str| Some("apple pie\nbanana split\n".to_string());
        for seed in 0..50 {
            let mut rng = Rng::new(seed);
            for t in TEMPLATES {
                for at_root in [true, false] {
                    let mut c = Ctx {
                        rng: &mut rng,
                        files: vec!["notes.txt".into(), "data.csv".into()],
                        dirs: vec!["docs".into()],
                        at_root,
                        dir: "~".into(),
                        read: &read,
                    };
                    if let Some(planned) = (t.build)(&mut c) {
                        assert!(is_safe(&planned.command, at_root), "{}: {}", t.id, planned.command);
                        assert!(!planned.hint.is_empty());
                    }
                }
            }
        }
    }

    #[test]
    fn validator() {
        for bad in ["cat /etc/passwd", "cd ../..", "ls ~", "echo $HOME", "cat `ls`", "cp a.txt ../b", "ls '/tmp'"] {
            assert!(!is_safe(bad, false), "{bad}");
        }
        assert!(!is_safe("cd ..", true));
        assert!(is_safe("cd ..", false));
        assert!(is_safe("printf '%s\\n' a b", true));
        assert!(is_safe("find . -name '*.txt'", true));
    }

    #[test]
    fn missing_names_are_really_missing() {
        let read = |_: &str| None;
        let mut rng = Rng::new(3);
        let files: Vec<String> = FILE_NAMES[..13].iter().map(|s| s.to_string()).collect();
        let mut c = Ctx { rng: &mut rng, files, dirs: vec![], at_root: true, dir: "~".into(), read: &read };
        assert_eq!(c.fresh(&FILE_NAMES), "plan.txt");
        assert!(template("cat_dir").map(|t| (t.build)(&mut c)).unwrap().is_none());
    }
}
