//! A throwaway home directory in which real bash runs our template commands.
//!
//! Layout: `<tempdir>/home/user` is the sandbox root and `$HOME`; every path bash prints has
//! `<tempdir>` removed, so the root reads as `/home/user`. Each command runs in a fresh
//! `bash --noprofile --norc -c` with a cleared environment (`HOME`, `PATH=/usr/bin:/bin`,
//! `LC_ALL=C`, `TERM=dumb`, `USER=user`, `COLUMNS=80`; `ls` is wrapped to write columns as on a
//! terminal), stdin from /dev/null, stderr merged into stdout, in its
//! own process group (killed whole on timeout), with output capped, inside a network namespace
//! when `unshare -n` works (else `unshare -rn`, else none: see [`Network`]). The working
//! directory is carried between commands by reading `$PWD` back after each one; a command that
//! ends outside the root is an error and the sandbox refuses further commands.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentworld_world::{Error, Result};

/// How commands are cut off from the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// `unshare -n`: a new, empty network namespace (needs root or CAP_SYS_ADMIN).
    Namespace,
    /// `unshare -rn`: a user namespace plus a network namespace (unprivileged).
    UserNamespace,
    /// No isolation available; safe only because commands come from our templates alone,
    /// none of which touches the network.
    None,
}

impl Network {
    /// Probes once which isolation this machine allows.
    pub fn detect() -> Network {
        let works = |args: &[&str]| {
            Command::new("unshare")
                .args(args)
                .arg("true")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if works(&["-n"]) {
            Network::Namespace
        } else if works(&["-rn"]) {
            Network::UserNamespace
        } else {
            Network::None
        }
    }

    fn prefix(self) -> &'static [&'static str] {
        match self {
            Network::Namespace => &["unshare", "-n"],
            Network::UserNamespace => &["unshare", "-rn"],
            Network::None => &[],
        }
    }
}

/// Limits for one command.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Wall-clock limit; the whole process group is killed after it.
    pub timeout: Duration,
    /// Output bytes kept; the rest is read and dropped.
    pub max_output: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            timeout: Duration::from_secs(2),
            max_output: 8 * 1024,
        }
    }
}

/// What one command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunResult {
    /// stdout and stderr interleaved, sandbox paths shown as `/home/user/...`.
    pub output: String,
    /// The command's exit status (`None` when killed).
    pub status: Option<i32>,
    /// Killed after the timeout.
    pub timed_out: bool,
    /// Output was longer than the cap.
    pub truncated: bool,
}

/// A sandbox home directory plus the shell's current directory in it.
#[derive(Debug)]
pub struct Sandbox {
    outer: tempfile::TempDir,
    outer_path: String,
    root: PathBuf,
    cwd: PathBuf,
    network: Network,
    marker: String,
    broken: bool,
}

/// The virtual path of the sandbox root.
pub const VIRTUAL_HOME: &str = "/home/user";

impl Sandbox {
    /// A fresh, empty sandbox; `marker_seed` makes the end-of-output marker unguessable.
    pub fn new(network: Network, marker_seed: u64) -> Result<Self> {
        Self::new_in(&std::env::temp_dir(), network, marker_seed)
    }

    /// [`Sandbox::new`] with the temporary directory created inside `parent`.
    pub fn new_in(parent: &Path, network: Network, marker_seed: u64) -> Result<Self> {
        let outer = tempfile::Builder::new()
            .prefix("aw-sandbox-")
            .tempdir_in(parent)
            .map_err(|e| Error::io(format!("creating a sandbox in {}", parent.display()), e))?;
        let outer_real = outer
            .path()
            .canonicalize()
            .map_err(|e| Error::io("resolving the sandbox", e))?;
        let root = outer_real.join("home/user");
        std::fs::create_dir_all(&root).map_err(|e| Error::io("creating the sandbox home", e))?;
        let outer_path = outer_real.to_string_lossy().into_owned();
        let marker = format!("\u{1}AW{marker_seed:016x}\u{2}");
        Ok(Sandbox {
            outer,
            outer_path,
            cwd: root.clone(),
            root,
            network,
            marker,
            broken: false,
        })
    }

    /// The sandbox root (real path).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The temporary directory holding the root (real path of `<tempdir>`).
    pub fn outer(&self) -> &Path {
        self.outer.path()
    }

    /// The shell's current directory (real path).
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    /// Whether the shell sits at the root.
    pub fn at_root(&self) -> bool {
        self.cwd == self.root
    }

    /// The current directory as a prompt shows it: `~` or `~/a/b`.
    pub fn prompt_dir(&self) -> String {
        match self.cwd.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => "~".into(),
            Ok(rel) => format!("~/{}", rel.to_string_lossy()),
            Err(_) => "?".into(),
        }
    }

    /// Sorted (files, directories) of the current directory, hidden entries excluded.
    pub fn entries(&self) -> Result<(Vec<String>, Vec<String>)> {
        let read = std::fs::read_dir(&self.cwd).map_err(|e| Error::io("listing the sandbox", e))?;
        let (mut files, mut dirs) = (Vec::new(), Vec::new());
        for entry in read.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(name),
                Ok(_) => files.push(name),
                Err(_) => {}
            }
        }
        files.sort();
        dirs.sort();
        Ok((files, dirs))
    }

    /// Whether a file of the current directory has any execute bit.
    pub fn is_executable(&self, relative: &str) -> bool {
        use std::os::unix::fs::PermissionsExt;
        self.inside(relative)
            .ok()
            .and_then(|p| std::fs::metadata(p).ok())
            .is_some_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }

    /// Writes a file relative to the current directory (for seeding, not through bash).
    pub fn write_file(&self, relative: &str, content: &str) -> Result<()> {
        let path = self.inside(relative)?;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("seeding the sandbox", e))?;
        }
        std::fs::write(&path, content).map_err(|e| Error::io("seeding the sandbox", e))
    }

    /// Reads a file relative to the current directory.
    pub fn read_file(&self, relative: &str) -> Option<String> {
        self.inside(relative)
            .ok()
            .and_then(|p| std::fs::read_to_string(p).ok())
    }

    fn inside(&self, relative: &str) -> Result<PathBuf> {
        if relative.is_empty()
            || relative.starts_with('/')
            || relative.split('/').any(|p| p == ".." || p.is_empty())
        {
            return Err(Error::Data(format!(
                "path {relative:?} would leave the sandbox"
            )));
        }
        Ok(self.cwd.join(relative))
    }

    /// Runs one command line through bash in the current directory.
    pub fn run(&mut self, command: &str, limits: Limits) -> Result<RunResult> {
        if self.broken {
            return Err(Error::Data(
                "the sandbox refused further commands after an escape".into(),
            ));
        }
        // `ls` writes columns, as it does on a terminal (stdout here is a pipe).
        let script = format!(
            "exec 2>&1\nls() {{ command ls -C \"$@\"; }}\ncd -- \"$AW_CWD\" || exit 97\n{command}\nprintf '%s%s:%s' \"$AW_MARK\" \"$?\" \"$PWD\"\n"
        );
        let prefix = self.network.prefix();
        let mut cmd = match prefix.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg("bash");
                c
            }
            None => Command::new("bash"),
        };
        cmd.args(["--noprofile", "--norc", "-c", &script])
            .env_clear()
            .env("HOME", &self.root)
            .env("PATH", "/usr/bin:/bin")
            .env("LC_ALL", "C")
            .env("TERM", "dumb")
            .env("USER", "user")
            .env("COLUMNS", "80")
            .env("AW_CWD", &self.cwd)
            .env("AW_MARK", &self.marker)
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd.spawn().map_err(|e| Error::io("starting bash", e))?;
        let mut stdout = child
            .stdout
            .take()
            .ok_or_else(|| Error::Data("bash has no stdout".into()))?;
        let cap = limits.max_output + self.marker.len() + 4096;
        let reader = std::thread::spawn(move || {
            let (mut kept, mut buf, mut dropped) = (Vec::new(), [0u8; 4096], false);
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                dropped |= n > room;
            }
            (kept, dropped)
        });
        let deadline = Instant::now() + limits.timeout;
        let mut timed_out = false;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) if Instant::now() >= deadline => {
                    timed_out = true;
                    // bash's builtin kill, so no procps is needed; the group id is the child's pid
                    let group = format!("kill -KILL -- -{}", child.id());
                    let _ = Command::new("bash")
                        .args(["--noprofile", "--norc", "-c", &group])
                        .status();
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => return Err(Error::io("waiting for bash", e)),
            }
        }
        let (bytes, dropped) = reader
            .join()
            .map_err(|_| Error::Data("output reader failed".into()))?;
        let raw = String::from_utf8_lossy(&bytes).into_owned();
        self.finish(raw, timed_out, dropped, limits)
    }

    fn finish(
        &mut self,
        raw: String,
        timed_out: bool,
        dropped: bool,
        limits: Limits,
    ) -> Result<RunResult> {
        let (mut output, status) = match raw.rfind(&self.marker) {
            Some(at) => {
                let tail = &raw[at + self.marker.len()..];
                let (code, pwd) = tail.split_once(':').unwrap_or(("", ""));
                let pwd = PathBuf::from(pwd);
                if !pwd.starts_with(&self.root) {
                    self.broken = true;
                    return Err(Error::Data(format!(
                        "a command left the sandbox (now in {})",
                        self.virtualize(&pwd.to_string_lossy())
                    )));
                }
                self.cwd = pwd;
                (raw[..at].to_string(), code.parse().ok())
            }
            None => (raw, None),
        };
        let mut truncated = dropped;
        if output.len() > limits.max_output {
            let mut cut = limits.max_output;
            while !output.is_char_boundary(cut) {
                cut -= 1;
            }
            output.truncate(cut);
            truncated = true;
        }
        Ok(RunResult {
            output: self.virtualize(&output),
            status,
            timed_out,
            truncated,
        })
    }

    /// Replaces the real location of the sandbox with the virtual one.
    pub fn virtualize(&self, text: &str) -> String {
        text.replace(&self.outer_path, "")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox() -> Sandbox {
        Sandbox::new(Network::detect(), 42).unwrap()
    }

    #[test]
    fn runs_commands_and_tracks_cwd() {
        let mut s = sandbox();
        s.write_file("notes.txt", "a\nb\n").unwrap();
        let r = s.run("cat notes.txt", Limits::default()).unwrap();
        assert_eq!((r.output.as_str(), r.status), ("a\nb\n", Some(0)));
        s.run("mkdir -p docs/deep", Limits::default()).unwrap();
        let r = s.run("cd docs/deep && pwd", Limits::default()).unwrap();
        assert_eq!(r.output, "/home/user/docs/deep\n");
        assert_eq!(s.prompt_dir(), "~/docs/deep");
        let r = s.run("cd ../.. && echo $HOME", Limits::default()).unwrap();
        assert_eq!(r.output, "/home/user\n");
        assert!(s.at_root());
    }

    #[test]
    fn errors_are_interleaved_and_statuses_kept() {
        let mut s = sandbox();
        let r = s
            .run("echo one; cat missing.txt; echo two", Limits::default())
            .unwrap();
        assert_eq!(
            r.output,
            "one\ncat: missing.txt: No such file or directory\ntwo\n"
        );
        let r = s.run("nosuchcommand", Limits::default()).unwrap();
        assert_eq!(r.status, Some(127));
        assert!(
            r.output.contains("nosuchcommand: command not found"),
            "{}",
            r.output
        );
        let r = s.run("printf 'no newline'", Limits::default()).unwrap();
        assert_eq!(r.output, "no newline");
    }

    #[test]
    fn timeouts_kill_the_whole_group() {
        let mut s = sandbox();
        let start = Instant::now();
        let r = s
            .run(
                "sleep 30 & sleep 30; echo never",
                Limits {
                    timeout: Duration::from_millis(300),
                    max_output: 100,
                },
            )
            .unwrap();
        assert!(r.timed_out && r.status.is_none());
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(!r.output.contains("never"));
    }

    #[test]
    fn output_is_capped() {
        let mut s = sandbox();
        let r = s
            .run(
                "seq 1 100000",
                Limits {
                    timeout: Duration::from_secs(5),
                    max_output: 50,
                },
            )
            .unwrap();
        assert!(r.truncated && r.output.len() <= 50);
        assert!(r.output.starts_with("1\n2\n3\n"));
    }

    #[test]
    fn leaving_the_sandbox_is_refused() {
        let mut s = sandbox();
        let err = s.run("cd /", Limits::default()).unwrap_err().to_string();
        assert!(err.contains("left the sandbox"), "{err}");
        assert!(s.run("ls", Limits::default()).is_err());
        assert!(s.write_file("../x", "").is_err());
        assert!(s.write_file("/etc/x", "").is_err());
    }

    #[test]
    fn environment_is_fixed() {
        let mut s = sandbox();
        let r = s
            .run("echo \"$PATH|$LC_ALL|$TERM|$USER\"", Limits::default())
            .unwrap();
        assert_eq!(r.output, "/usr/bin:/bin|C|dumb|user\n");
    }

    #[test]
    fn network_is_isolated_when_possible() {
        if Network::detect() == Network::None {
            return;
        }
        let mut s = sandbox();
        let r = s.run("cat /sys/class/net/*/operstate 2>/dev/null | sort | tr '\\n' ' '; ls /sys/class/net", Limits::default()).unwrap();
        assert!(
            r.output.trim_end().ends_with("lo"),
            "only loopback expected: {}",
            r.output
        );
    }
}
