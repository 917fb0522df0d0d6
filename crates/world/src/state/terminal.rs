//! A terminal screen: its lines, the shell prompt on the last line, and the cwd it shows.

use serde::{Deserialize, Serialize};

/// A shell prompt found on a screen line, e.g. `user@host:~/dir$ ls`.
///
/// Recognised forms: `user@host:cwd$ ` / `user@host:cwd# ` (Debian, Ubuntu), `[user@host dir]$ `
/// (Fedora), each optionally preceded by a `(venv) ` style prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptLine {
    /// A `(name) ` prefix such as a virtualenv, without parentheses.
    pub prefix: Option<String>,
    /// The user name.
    pub user: String,
    /// The host name.
    pub host: String,
    /// The directory as the prompt shows it (`~`, `~/src`, `/app`; a basename in the Fedora form).
    pub cwd: String,
    /// `$` or `#`.
    pub symbol: char,
    /// What was typed after the prompt (empty when the shell waits for input).
    pub input: String,
}

impl PromptLine {
    /// Parses one line; `None` when it is not a prompt.
    pub fn parse(line: &str) -> Option<PromptLine> {
        let line = line.trim_end_matches('\r');
        let (prefix, rest) = match line.strip_prefix('(') {
            Some(r) => {
                let close = r.find(") ")?;
                (Some(r[..close].to_string()), &r[close + 2..])
            }
            None => (None, line),
        };
        let mut p = if let Some(inner) = rest.strip_prefix('[') {
            parse_bracketed(inner)?
        } else {
            parse_debian(rest)?
        };
        p.prefix = prefix;
        Some(p)
    }

    /// The prompt text without the typed input, e.g. `user@host:~$ `.
    pub fn render_prompt(&self) -> String {
        let prefix = self
            .prefix
            .as_ref()
            .map(|p| format!("({p}) "))
            .unwrap_or_default();
        format!(
            "{prefix}{}@{}:{}{} ",
            self.user, self.host, self.cwd, self.symbol
        )
    }
}

fn is_name(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c == '@' || c == ':')
}

/// `user@host:cwd$ input`
fn parse_debian(s: &str) -> Option<PromptLine> {
    let at = s.find('@')?;
    let user = &s[..at];
    let after = &s[at + 1..];
    let colon = after.find(':')?;
    let host = &after[..colon];
    let tail = &after[colon + 1..];
    if !is_name(user) || !is_name(host) || !(tail.starts_with('~') || tail.starts_with('/')) {
        return None;
    }
    let (end, symbol) = find_symbol(tail)?;
    let cwd = &tail[..end];
    if cwd.chars().any(|c| c == '\n') {
        return None;
    }
    let input = tail[end + 1..]
        .strip_prefix(' ')
        .unwrap_or(&tail[end + 1..]);
    Some(PromptLine {
        prefix: None,
        user: user.into(),
        host: host.into(),
        cwd: cwd.into(),
        symbol,
        input: input.into(),
    })
}

/// `user@host dir]$ input` (after the opening bracket)
fn parse_bracketed(s: &str) -> Option<PromptLine> {
    let close = s.find(']')?;
    let (inside, after) = (&s[..close], &s[close + 1..]);
    let (who, cwd) = inside.split_once(' ')?;
    let (user, host) = who.split_once('@')?;
    let symbol = after.chars().next().filter(|c| *c == '$' || *c == '#')?;
    if !is_name(user) || !is_name(host) || cwd.is_empty() {
        return None;
    }
    let input = after[1..].strip_prefix(' ').unwrap_or(&after[1..]);
    Some(PromptLine {
        prefix: None,
        user: user.into(),
        host: host.into(),
        cwd: cwd.into(),
        symbol,
        input: input.into(),
    })
}

/// The first `$`/`#` followed by a space or the end of the line.
fn find_symbol(tail: &str) -> Option<(usize, char)> {
    let bytes = tail.as_bytes();
    (0..bytes.len()).find_map(|i| {
        let c = bytes[i];
        let ends = i + 1 == bytes.len() || bytes[i + 1] == b' ';
        ((c == b'$' || c == b'#') && ends).then_some((i, c as char))
    })
}

/// The text of a terminal screen, line by line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TerminalScreen {
    /// The lines, without their `\n` (a `\r` before it is dropped).
    pub lines: Vec<String>,
}

impl TerminalScreen {
    /// Splits a screen into lines. `render(parse(t)) == t` for texts without `\r`.
    pub fn parse(text: &str) -> Self {
        TerminalScreen {
            lines: text
                .split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
                .collect(),
        }
    }

    /// The screen as text (lines joined by `\n`).
    pub fn render(&self) -> String {
        self.lines.join("\n")
    }

    /// The last non-blank line, when it is a shell prompt.
    pub fn prompt(&self) -> Option<PromptLine> {
        self.lines
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| PromptLine::parse(l))
    }

    /// Whether the shell waits at an empty prompt (the last command finished).
    pub fn is_idle(&self) -> bool {
        self.prompt().is_some_and(|p| p.input.is_empty())
    }

    /// The working directory the last prompt shows.
    pub fn cwd(&self) -> Option<String> {
        self.prompt().map(|p| p.cwd)
    }

    /// The last `n` lines.
    pub fn tail(&self, n: usize) -> TerminalScreen {
        let start = self.lines.len().saturating_sub(n);
        TerminalScreen {
            lines: self.lines[start..].to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debian_prompts() {
        let p = PromptLine::parse("user@sandbox:~/work$ ls -l").unwrap();
        assert_eq!(
            (
                p.user.as_str(),
                p.host.as_str(),
                p.cwd.as_str(),
                p.symbol,
                p.input.as_str()
            ),
            ("user", "sandbox", "~/work", '$', "ls -l")
        );
        assert_eq!(p.render_prompt(), "user@sandbox:~/work$ ");
        let root = PromptLine::parse("root@4f2a9c:/app# ").unwrap();
        assert_eq!(
            (root.cwd.as_str(), root.symbol, root.input.as_str()),
            ("/app", '#', "")
        );
        let bare = PromptLine::parse("root@4f2a9c:/app#").unwrap();
        assert_eq!(bare.input, "");
        let venv = PromptLine::parse("(venv) me@box:/srv/my app$ echo $HOME").unwrap();
        assert_eq!(
            (
                venv.prefix.as_deref(),
                venv.cwd.as_str(),
                venv.input.as_str()
            ),
            (Some("venv"), "/srv/my app", "echo $HOME")
        );
        assert_eq!(venv.render_prompt(), "(venv) me@box:/srv/my app$ ");
    }

    #[test]
    fn fedora_prompt() {
        let p = PromptLine::parse("[alice@fedora src]$ make").unwrap();
        assert_eq!(
            (
                p.user.as_str(),
                p.host.as_str(),
                p.cwd.as_str(),
                p.input.as_str()
            ),
            ("alice", "fedora", "src", "make")
        );
    }

    #[test]
    fn non_prompts() {
        for line in [
            "",
            "total 12",
            "email me@host.com: now",
            "a@b:c$ ",
            "user@host:~",
            "@h:~$ ",
            "drwxr-xr-x 2 user user 4096 Jan  1 12:00 d",
        ] {
            assert_eq!(PromptLine::parse(line), None, "{line:?}");
        }
    }

    #[test]
    fn screen_prompt_and_cwd() {
        let s = TerminalScreen::parse("user@sandbox:~$ cd docs\nuser@sandbox:~/docs$ \n\n");
        assert_eq!(s.lines.len(), 4);
        assert_eq!(s.cwd().as_deref(), Some("~/docs"));
        assert!(s.is_idle());
        assert_eq!(
            s.render(),
            "user@sandbox:~$ cd docs\nuser@sandbox:~/docs$ \n\n"
        );
        let busy = TerminalScreen::parse("user@sandbox:~$ sleep 10");
        assert!(!busy.is_idle());
        let out = TerminalScreen::parse("some output\nmore");
        assert_eq!(out.prompt(), None);
        assert_eq!(out.tail(1).lines, ["more"]);
        assert_eq!(out.tail(9).lines.len(), 2);
        assert_eq!(TerminalScreen::parse("a\r\nb").lines, ["a", "b"]);
    }
}
