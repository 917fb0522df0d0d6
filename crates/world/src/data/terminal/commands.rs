//! Command templates: what the generator types, built only from our word lists and the names
//! that exist in the sandbox, and a validator that keeps every command inside it.

mod table;

use crate::data::rng::Rng;

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
pub struct Template {
    /// Stable id (used for held-out lists).
    pub id: &'static str,
    /// Builds a command, or `None` when the directory lacks what it needs.
    pub build: fn(&mut Ctx) -> Option<Planned>,
}

fn p(command: String, hint: String) -> Option<Planned> {
    Some(Planned { command, hint })
}

pub use table::TEMPLATES;

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
