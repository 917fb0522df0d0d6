//! The virtual terminal screen: a fixed prompt, typed commands, output, scrolling.

/// The virtual user and host shown in prompts.
pub const PROMPT_USER_HOST: &str = "user@sandbox";

/// Fixed replacements that make output the same on every machine and every day.
const MASKED_DATE: &str = "Jan  1 12:00";
const MASKED_OWNER: &str = "user";

/// A terminal that shows a session line by line.
#[derive(Debug, Clone)]
pub struct Screen {
    lines: Vec<String>,
    /// Characters kept per line; longer lines are cut.
    max_width: usize,
}

impl Screen {
    /// A screen showing only a prompt for `dir` (`~`, `~/docs`).
    pub fn new(dir: &str, max_width: usize) -> Self {
        Screen {
            lines: vec![prompt(dir)],
            max_width,
        }
    }

    /// Types `command` after the prompt, shows `output` below it and a new prompt for `dir`.
    ///
    /// Output that does not end in a newline leaves the new prompt on its last line, as a real
    /// terminal does. Tabs expand to 8-column stops.
    pub fn show(&mut self, command: &str, output: &str, dir: &str) {
        if let Some(last) = self.lines.last_mut() {
            last.push_str(command);
        }
        let mut current = String::new();
        for c in output.chars() {
            match c {
                '\n' => self.lines.push(std::mem::take(&mut current)),
                '\r' => current.clear(),
                '\t' => {
                    let width = current.chars().count();
                    current.push_str(&" ".repeat(8 - width % 8));
                }
                c => current.push(c),
            }
        }
        current.push_str(&prompt(dir));
        self.lines.push(current);
        let width = self.max_width;
        for line in &mut self.lines {
            if line.chars().count() > width {
                *line = line.chars().take(width).collect();
            }
        }
    }

    /// The last `rows` lines, joined by `\n`.
    pub fn render(&self, rows: usize) -> String {
        let start = self.lines.len().saturating_sub(rows);
        self.lines[start..].join("\n")
    }
}

/// The prompt for a directory: `user@sandbox:~/docs$ `.
pub fn prompt(dir: &str) -> String {
    format!("{PROMPT_USER_HOST}:{dir}$ ")
}

/// Makes real output look as an interactive shell shows it and hides machine-specific
/// details: `bash: line N: ` becomes `bash: `; `ls -l` lines get a fixed owner, group and date.
pub fn normalize_output(output: &str) -> String {
    let mut out = String::with_capacity(output.len());
    for piece in output.split_inclusive('\n') {
        let (line, newline) = match piece.strip_suffix('\n') {
            Some(l) => (l, "\n"),
            None => (piece, ""),
        };
        let line = strip_bash_line_number(line);
        out.push_str(&mask_long_listing(&line).unwrap_or(line));
        out.push_str(newline);
    }
    out
}

fn strip_bash_line_number(line: &str) -> String {
    if let Some(rest) = line.strip_prefix("bash: line ")
        && let Some((num, tail)) = rest.split_once(": ")
        && !num.is_empty()
        && num.bytes().all(|b| b.is_ascii_digit())
    {
        return format!("bash: {tail}");
    }
    line.to_string()
}

/// Rewrites one `ls -l` line (mode, links, owner, group, size, month, day, time, name) with a
/// fixed owner, group and date, keeping every column where it was.
fn mask_long_listing(line: &str) -> Option<String> {
    let bytes = line.as_bytes();
    let mode_ok = bytes.len() > 10
        && b"-dlbcps".contains(&bytes[0])
        && bytes[1..10].iter().all(|b| b"rwxsStT-".contains(b));
    if !mode_ok {
        return None;
    }
    // token spans
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c == ' ', start) {
            (true, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
        if spans.len() == 8 {
            break;
        }
    }
    if spans.len() < 8 {
        return None;
    }
    let mut out = String::with_capacity(line.len());
    out.push_str(&line[..spans[2].0]);
    out.push_str(&pad(MASKED_OWNER, spans[2].1 - spans[2].0));
    out.push_str(&line[spans[2].1..spans[3].0]);
    out.push_str(&pad(MASKED_OWNER, spans[3].1 - spans[3].0));
    out.push_str(&line[spans[3].1..spans[5].0]);
    let date_width = spans[7].1 - spans[5].0;
    out.push_str(&pad(MASKED_DATE, date_width));
    out.push_str(&line[spans[7].1..]);
    Some(out)
}

/// `s` padded with spaces on the right to `width` (never cut).
fn pad(s: &str, width: usize) -> String {
    format!("{s:<width$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_layout() {
        let mut s = Screen::new("~", 80);
        assert_eq!(s.render(20), "user@sandbox:~$ ");
        s.show("ls", "a.txt  b.txt\n", "~");
        s.show("cd docs", "", "~/docs");
        s.show("printf hi", "hi", "~/docs");
        assert_eq!(
            s.render(20),
            "user@sandbox:~$ ls\na.txt  b.txt\nuser@sandbox:~$ cd docs\nuser@sandbox:~/docs$ printf hi\nhiuser@sandbox:~/docs$ "
        );
        assert_eq!(
            s.render(2),
            "user@sandbox:~/docs$ printf hi\nhiuser@sandbox:~/docs$ "
        );
    }

    #[test]
    fn tabs_and_width() {
        let mut s = Screen::new("~", 20);
        s.show("x", "a\tb\n0123456789012345678901234\n", "~");
        assert_eq!(
            s.render(3),
            "a       b\n01234567890123456789\nuser@sandbox:~$ "
        );
    }

    #[test]
    fn bash_line_numbers_are_dropped() {
        assert_eq!(
            normalize_output("bash: line 3: sl: command not found\n"),
            "bash: sl: command not found\n"
        );
        assert_eq!(normalize_output("bash: line x: y\n"), "bash: line x: y\n");
        assert_eq!(
            normalize_output("cat: a: No such file or directory"),
            "cat: a: No such file or directory"
        );
    }

    #[test]
    fn long_listings_are_masked_in_place() {
        let real = "total 8\ndrwxr-xr-x 2 root root 4096 Nov 29 17:08 docs\n-rw-r--r-- 1 root root   12 Mar  3  2023 my file.txt\nlrwxrwxrwx 1 nobody nogroup 5 Dec 31 23:59 l -> x\n";
        let masked = normalize_output(real);
        assert_eq!(
            masked,
            "total 8\ndrwxr-xr-x 2 user user 4096 Jan  1 12:00 docs\n-rw-r--r-- 1 user user   12 Jan  1 12:00 my file.txt\nlrwxrwxrwx 1 user   user    5 Jan  1 12:00 l -> x\n"
        );
        assert_eq!(normalize_output("-rw- short"), "-rw- short");
    }
}
