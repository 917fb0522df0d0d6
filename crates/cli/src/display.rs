//! Streaming a world model's output to the terminal: thinking (dimmed, on stderr) and the
//! predicted observation (on stdout, or stderr when stdout is reserved for `--json`).

use std::io::{IsTerminal, Write};

use agentworld_text::observation::{ObservationEvent, ObservationStream};

/// Routes text deltas to the right stream as they arrive.
pub struct Printer {
    stream: ObservationStream,
    observation_to_stderr: bool,
    dim: bool,
    thinking_started: bool,
    /// Newlines that ended the thinking so far, held back: shown only if more thinking
    /// follows (the header of the block starts its own line).
    held_newlines: usize,
    /// Nothing of the block shown yet: its first newline (after the tag) is dropped.
    block_fresh: bool,
    /// What went to stdout ends a line (or nothing went there).
    stdout_line_ended: bool,
    /// The observation shown on stderr (with `--json`) ends a line.
    stderr_line_ended: bool,
    /// The block's header: `predicted observation`, or `predicted patch`.
    header: &'static str,
}

impl Printer {
    /// `thinking`: whether the prompt opened a `<think>` block; `json`: stdout is reserved.
    pub fn new(thinking: bool, json: bool) -> Self {
        Self {
            stream: ObservationStream::new(thinking),
            observation_to_stderr: json,
            dim: std::io::stderr().is_terminal(),
            thinking_started: false,
            held_newlines: 0,
            block_fresh: false,
            stdout_line_ended: true,
            stderr_line_ended: true,
            header: "predicted observation",
        }
    }

    /// For a model that writes patches (`observation_form_by_domain`): the block is shown on
    /// stderr as the predicted patch, and stdout is left for the full state it gives.
    pub fn patch(mut self) -> Self {
        self.observation_to_stderr = true;
        self.header = "predicted patch";
        self
    }

    /// Shows one text delta.
    pub fn push(&mut self, delta: &str) {
        let events = self.stream.push(delta);
        self.show(events);
    }

    /// Flushes what is held back, and ends stdout's last line if the output left it open.
    pub fn finish(&mut self) {
        let events = self.stream.finish();
        self.show(events);
        if std::mem::take(&mut self.thinking_started) {
            // Output cut off inside the reasoning: what follows on stderr starts a line.
            let _ = writeln!(std::io::stderr().lock());
        }
        let mut out = std::io::stdout().lock();
        if !self.stdout_line_ended {
            let _ = writeln!(out);
            self.stdout_line_ended = true;
        }
        let _ = out.flush();
    }

    fn show(&mut self, events: Vec<ObservationEvent>) {
        let mut err = std::io::stderr().lock();
        for event in events {
            match event {
                ObservationEvent::Thinking(t) => {
                    if !self.thinking_started {
                        let _ = write!(err, "{}thinking: ", if self.dim { "\x1b[2m" } else { "" });
                        self.thinking_started = true;
                    } else if self.dim {
                        let _ = write!(err, "\x1b[2m");
                    }
                    let body = t.trim_end_matches('\n');
                    if !body.is_empty() {
                        let held = "\n".repeat(std::mem::take(&mut self.held_newlines));
                        let _ = write!(err, "{held}{body}");
                    }
                    self.held_newlines += t.len() - body.len();
                    let _ = write!(err, "{}", if self.dim { "\x1b[0m" } else { "" });
                }
                ObservationEvent::BlockStart => {
                    self.block_fresh = true;
                    self.held_newlines = 0;
                    if self.thinking_started {
                        let _ = writeln!(err);
                        self.thinking_started = false;
                    }
                    let (on, off) = if self.dim {
                        ("\x1b[2m", "\x1b[0m")
                    } else {
                        ("", "")
                    };
                    let _ = writeln!(err, "{on}── {} ──{off}", self.header);
                }
                // Blank text between the reasoning and the block is layout, not output.
                ObservationEvent::Outside(t) if t.trim().is_empty() => {}
                ObservationEvent::Observation(t) | ObservationEvent::Outside(t) => {
                    let t = if std::mem::take(&mut self.block_fresh) {
                        t.strip_prefix('\n').unwrap_or(&t).to_string()
                    } else {
                        t
                    };
                    if self.observation_to_stderr {
                        let _ = write!(err, "{t}");
                        if !t.is_empty() {
                            self.stderr_line_ended = t.ends_with('\n');
                        }
                    } else if !t.is_empty() {
                        let mut out = std::io::stdout().lock();
                        let _ = write!(out, "{t}");
                        let _ = out.flush();
                        self.stdout_line_ended = t.ends_with('\n');
                    }
                }
                ObservationEvent::BlockEnd => {
                    // The marker starts its own line, after an observation that did not end one.
                    if !std::mem::replace(&mut self.stdout_line_ended, true) {
                        let mut out = std::io::stdout().lock();
                        let _ = writeln!(out);
                        let _ = out.flush();
                    }
                    if !std::mem::replace(&mut self.stderr_line_ended, true) {
                        let _ = writeln!(err);
                    }
                    let _ = writeln!(
                        err,
                        "{}",
                        if self.dim {
                            "\x1b[2m── end ──\x1b[0m"
                        } else {
                            "── end ──"
                        }
                    );
                }
            }
        }
        let _ = err.flush();
    }
}
