//! Command templates: what the generator types, built only from our word lists and the names
//! that exist in the sandbox, and a validator that keeps every command inside it.
//!
//! Kinds: listing, reading, writing and moving files ([`table`]); pipelines, `&&`/`||` chains
//! and `for` loops ([`more`]); and errors with bash's real messages: missing files, a
//! directory where a file is expected, an existing directory, command not found, a script
//! without the execute bit (`Permission denied`, even for root), a missing script, `cd` into a
//! file, `mkdir` under a missing directory, `rmdir` of a non-empty directory.

pub mod more;
pub mod table;

pub use more::SCRIPT_NAMES;

use crate::rng::Rng;

/// Words for file contents and arguments.
pub const WORDS: [&str; 24] = [
    "apple", "banana", "cherry", "delta", "echo", "falcon", "garden", "harbor", "island", "jungle",
    "kernel", "lemon", "meadow", "north", "orange", "pepper", "quartz", "river", "silver", "tiger",
    "umbrella", "violet", "window", "yellow",
];
/// Names of seeded and created files.
pub const FILE_NAMES: [&str; 14] = [
    "notes.txt",
    "todo.txt",
    "data.csv",
    "log.txt",
    "readme.md",
    "names.txt",
    "fruits.txt",
    "numbers.txt",
    "config.ini",
    "report.txt",
    "list.txt",
    "words.txt",
    "draft.md",
    "plan.txt",
];
/// Names of seeded and created directories.
pub const DIR_NAMES: [&str; 10] = [
    "docs", "src", "backup", "logs", "data", "tmp", "archive", "projects", "music", "photos",
];
/// Mistyped commands for "command not found".
const TYPOS: [&str; 6] = [
    "sl",
    "gti status",
    "pyhton",
    "mkdri tmp",
    "grpe apple notes.txt",
    "cta notes.txt",
];

/// Template ids held out of training by default (the test split ends with one of these).
pub const DEFAULT_HELD_OUT: [&str; 7] = [
    "tail",
    "sort_uniq_c",
    "grep_n",
    "tr_upper",
    "wc_c",
    "for_head",
    "missing_or",
];

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
    /// The visible files that have an execute bit, sorted.
    pub executable: Vec<String>,
}

impl Ctx<'_> {
    fn file(&mut self) -> Option<String> {
        self.rng.pick(&self.files).cloned()
    }
    /// A `.sh` file of the current directory with (`executable`) or without an execute bit.
    fn script(&mut self, executable: bool) -> Option<String> {
        let found: Vec<String> = self
            .files
            .iter()
            .filter(|f| f.ends_with(".sh") && self.executable.contains(f) == executable)
            .cloned()
            .collect();
        self.rng.pick(&found).cloned()
    }
    fn dir(&mut self) -> Option<String> {
        self.rng.pick(&self.dirs).cloned()
    }
    fn fresh(&mut self, pool: &[&str]) -> String {
        let free: Vec<&str> = pool
            .iter()
            .copied()
            .filter(|n| !self.files.iter().chain(&self.dirs).any(|e| e == n))
            .collect();
        match self.rng.pick(&free) {
            Some(n) => n.to_string(),
            None => format!("new{}.txt", self.rng.below(1000)),
        }
    }
    fn words(&mut self, lo: usize, hi: usize) -> String {
        let n = lo + self.rng.below(hi - lo + 1);
        (0..n)
            .map(|_| *self.rng.pick(&WORDS).unwrap_or(&"x"))
            .collect::<Vec<_>>()
            .join(" ")
    }
    /// A word in `file` (70%) or a random word.
    fn word_for(&mut self, file: &str) -> String {
        let content = (self.read)(file).unwrap_or_default();
        let inside: Vec<&str> = content
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() > 2)
            .collect();
        if !inside.is_empty() && self.rng.chance(0.7) {
            return self
                .rng
                .pick(&inside)
                .map(|w| w.to_string())
                .unwrap_or_default();
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
#[derive(Clone, Copy)]
pub struct Template {
    /// Stable id (used for held-out lists).
    pub id: &'static str,
    /// Builds a command, or `None` when the directory lacks what it needs.
    pub build: fn(&mut Ctx) -> Option<Planned>,
}

fn p(command: String, hint: String) -> Option<Planned> {
    Some(Planned { command, hint })
}

/// Every template: [`table::BASE`] then [`more::MORE`].
pub const TEMPLATES: &[Template] =
    &join::<{ table::BASE.len() + more::MORE.len() }>(table::BASE, more::MORE);

const fn join<const N: usize>(a: &[Template], b: &[Template]) -> [Template; N] {
    let mut out = [a[0]; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

/// The template with this id.
pub fn template(id: &str) -> Option<&'static Template> {
    TEMPLATES.iter().find(|t| t.id == id)
}

/// Whether `command` stays inside the sandbox: no absolute paths, no `..` (except a plain
/// `cd ..` away from the root), no `~`, no expansions (`$`, backquotes) except the loop
/// variable `"$f"`/`"… $f"` of a command starting `for f in `.
pub fn is_safe(command: &str, at_root: bool) -> bool {
    let command = &if command.starts_with("for f in ") {
        command.replace("$f\"", "\"")
    } else {
        command.to_string()
    };
    if command.contains(['~', '$', '`']) {
        return false;
    }
    if command.as_str() == "cd .." {
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
                        files: vec!["notes.txt".into(), "data.csv".into(), "run.sh".into()],
                        dirs: vec!["docs".into()],
                        at_root,
                        dir: "~".into(),
                        read: &read,
                        executable: vec![],
                    };
                    if let Some(planned) = (t.build)(&mut c) {
                        assert!(
                            is_safe(&planned.command, at_root),
                            "{}: {}",
                            t.id,
                            planned.command
                        );
                        assert!(!planned.hint.is_empty());
                    }
                }
            }
        }
    }

    #[test]
    fn validator() {
        for bad in [
            "cat /etc/passwd",
            "cd ../..",
            "ls ~",
            "echo $HOME",
            "cat `ls`",
            "cp a.txt ../b",
            "ls '/tmp'",
        ] {
            assert!(!is_safe(bad, false), "{bad}");
        }
        assert!(!is_safe("cd ..", true));
        assert!(is_safe("cd ..", false));
        assert!(is_safe("printf '%s\\n' a b", true));
        assert!(is_safe("find . -name '*.txt'", true));
        assert!(is_safe("for f in *.txt; do wc -l \"$f\"; done", true));
        assert!(!is_safe("for f in *.txt; do cat $HOME; done", true));
        assert!(!is_safe("echo \"$f\"", true));
        assert!(!is_safe("for f in /etc/*; do cat \"$f\"; done", true));
    }

    #[test]
    fn missing_names_are_really_missing() {
        let read = |_: &str| None;
        let mut rng = Rng::new(3);
        let files: Vec<String> = FILE_NAMES[..13].iter().map(|s| s.to_string()).collect();
        let mut c = Ctx {
            rng: &mut rng,
            files,
            dirs: vec![],
            at_root: true,
            dir: "~".into(),
            read: &read,
            executable: vec![],
        };
        assert_eq!(c.fresh(&FILE_NAMES), "plan.txt");
        assert!(
            template("cat_dir")
                .map(|t| (t.build)(&mut c))
                .unwrap()
                .is_none()
        );
    }
}
