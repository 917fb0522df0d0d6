//! [`PromptSet`]: the system prompt for each domain, ours or loaded from a directory.

#[cfg(feature = "native")]
use std::path::Path;

use crate::Domain;
use crate::prompts::{builtin, fill_template};
#[cfg(feature = "native")]
use crate::{Error, Result};

/// Where a domain's prompt came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptSource {
    /// Our built-in text ([`builtin`]).
    Builtin,
    /// A file (`<dir>/<domain>/system_prompt.txt`), with its path.
    File(String),
    /// Text given in code through [`PromptSet::with_system_prompt`].
    Given,
}

#[derive(Debug, Clone)]
struct Entry {
    system: String,
    source: PromptSource,
    judge: Option<String>,
}

/// One system prompt (template) per domain, with optional judge prompts.
///
/// [`PromptSet::builtin`] uses our own prompts. [`PromptSet::from_dir`] reads a directory laid out
/// like the official repository's `prompts/` folder (`<domain>/system_prompt.txt`, optionally
/// `<domain>/judge_system_prompt.txt`) and falls back to ours for each domain it lacks.
#[derive(Debug, Clone)]
pub struct PromptSet {
    entries: Vec<Entry>,
}

impl Default for PromptSet {
    fn default() -> Self {
        Self::builtin()
    }
}

impl PromptSet {
    /// Our built-in prompts for all seven domains.
    pub fn builtin() -> Self {
        let entries = Domain::ALL
            .into_iter()
            .map(|d| Entry {
                system: builtin(d).to_string(),
                source: PromptSource::Builtin,
                judge: None,
            })
            .collect();
        PromptSet { entries }
    }

    /// Loads overrides from `dir` (a `--prompts-dir`), falling back to ours per domain.
    ///
    /// If `dir` holds none of the domain folders but has a `prompts/` folder that does (the
    /// repository root was given), that folder is used. Errors: `dir` is missing or unreadable,
    /// a prompt file exists but cannot be read as UTF-8, or no domain's `system_prompt.txt` is
    /// found at all (almost always a wrong path).
    #[cfg(feature = "native")]
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        std::fs::read_dir(dir)
            .map_err(|e| Error::io(format!("cannot read prompts dir {}", dir.display()), e))?;
        let found = |d: &Path| {
            Domain::ALL
                .iter()
                .any(|x| d.join(x.as_str()).join("system_prompt.txt").is_file())
        };
        let nested = dir.join("prompts");
        let root = if !found(dir) && found(&nested) {
            nested
        } else {
            dir.to_path_buf()
        };
        let mut set = Self::builtin();
        let mut loaded = 0;
        for (i, domain) in Domain::ALL.into_iter().enumerate() {
            let folder = root.join(domain.as_str());
            let system = folder.join("system_prompt.txt");
            if let Some(text) = read_if_present(&system)? {
                set.entries[i].system = text;
                set.entries[i].source = PromptSource::File(system.display().to_string());
                loaded += 1;
            }
            set.entries[i].judge = read_if_present(&folder.join("judge_system_prompt.txt"))?;
        }
        if loaded == 0 {
            return Err(Error::io(
                format!(
                    "prompts dir {} has no <domain>/system_prompt.txt (expected e.g. {}/android/system_prompt.txt)",
                    dir.display(),
                    dir.display()
                ),
                std::io::Error::from(std::io::ErrorKind::NotFound),
            ));
        }
        Ok(set)
    }

    /// Replaces one domain's system prompt with `text` (for callers without a file system).
    pub fn with_system_prompt(mut self, domain: Domain, text: impl Into<String>) -> Self {
        let e = &mut self.entries[index(domain)];
        e.system = text.into();
        e.source = PromptSource::Given;
        self
    }

    /// The system prompt (template) for `domain`, placeholders not filled.
    pub fn system_prompt(&self, domain: Domain) -> &str {
        &self.entries[index(domain)].system
    }

    /// Where `domain`'s system prompt came from.
    pub fn source(&self, domain: Domain) -> &PromptSource {
        &self.entries[index(domain)].source
    }

    /// The judge system prompt for `domain`, when the directory had one.
    pub fn judge_prompt(&self, domain: Domain) -> Option<&str> {
        self.entries[index(domain)].judge.as_deref()
    }

    /// The system prompt for `domain` with its placeholders filled (see [`fill_template`]).
    pub fn render(&self, domain: Domain, tool_definitions: &str, demonstrations: &str) -> String {
        fill_template(self.system_prompt(domain), tool_definitions, demonstrations)
    }
}

fn index(domain: Domain) -> usize {
    Domain::ALL.iter().position(|d| *d == domain).unwrap_or(0)
}

#[cfg(feature = "native")]
fn read_if_present(path: &Path) -> Result<Option<String>> {
    if !path.exists() {
        return Ok(None);
    }
    std::fs::read_to_string(path)
        .map(Some)
        .map_err(|e| Error::io(format!("cannot read prompt file {}", path.display()), e))
}

#[cfg(all(test, feature = "native"))]
mod tests {
    use super::*;

    fn write(dir: &Path, domain: &str, file: &str, text: &str) {
        std::fs::create_dir_all(dir.join(domain)).unwrap();
        std::fs::write(dir.join(domain).join(file), text).unwrap();
    }

    #[test]
    fn overrides_and_falls_back_per_domain() {
        let tmp = tempfile::tempdir().unwrap();
        write(
            tmp.path(),
            "android",
            "system_prompt.txt",
            "OFFICIAL ANDROID",
        );
        write(
            tmp.path(),
            "android",
            "judge_system_prompt.txt",
            "JUDGE ANDROID",
        );
        let set = PromptSet::from_dir(tmp.path()).unwrap();
        assert_eq!(set.system_prompt(Domain::Android), "OFFICIAL ANDROID");
        assert_eq!(set.judge_prompt(Domain::Android), Some("JUDGE ANDROID"));
        assert!(
            matches!(set.source(Domain::Android), PromptSource::File(p) if p.ends_with("android/system_prompt.txt"))
        );
        assert_eq!(set.system_prompt(Domain::Web), builtin(Domain::Web));
        assert_eq!(set.source(Domain::Web), &PromptSource::Builtin);
        assert_eq!(set.judge_prompt(Domain::Web), None);
    }

    #[test]
    fn repository_root_is_accepted() {
        let tmp = tempfile::tempdir().unwrap();
        write(
            &tmp.path().join("prompts"),
            "mcp",
            "system_prompt.txt",
            "T={tool_definitions} D={demonstrations}",
        );
        let set = PromptSet::from_dir(tmp.path()).unwrap();
        assert_eq!(set.render(Domain::Mcp, "a", "b"), "T=a D=b");
    }

    #[test]
    fn unreadable_or_empty_dirs_are_clear_errors() {
        let err = PromptSet::from_dir("/definitely/not/here")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("cannot read prompts dir /definitely/not/here"),
            "{err}"
        );
        let tmp = tempfile::tempdir().unwrap();
        let err = PromptSet::from_dir(tmp.path()).unwrap_err().to_string();
        assert!(err.contains("no <domain>/system_prompt.txt"), "{err}");
        let file = tmp.path().join("f.txt");
        std::fs::write(&file, "x").unwrap();
        assert!(PromptSet::from_dir(&file).is_err());
    }

    #[test]
    fn non_utf8_prompt_file_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("os")).unwrap();
        std::fs::write(tmp.path().join("os/system_prompt.txt"), [0xff, 0xfe, 0x00]).unwrap();
        let err = PromptSet::from_dir(tmp.path()).unwrap_err().to_string();
        assert!(err.contains("cannot read prompt file"), "{err}");
    }

    #[test]
    fn given_text_overrides() {
        let set = PromptSet::builtin().with_system_prompt(Domain::Os, "mine");
        assert_eq!(set.system_prompt(Domain::Os), "mine");
        assert_eq!(set.source(Domain::Os), &PromptSource::Given);
    }
}
