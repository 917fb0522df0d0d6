//! [`Task`]: what one environment starts from (domain, initial state, goal), and the tasks
//! file, one JSON object per line.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::{Domain, Error, Result};

/// One environment to roll out: `{"id", "domain", "instruction", "state", ...}`.
///
/// Fields:
/// - `id` (string or number): names the trajectory (`id` of its row);
/// - `domain` (or `task`, the benchmark's name for it): one of the seven domains;
/// - `instruction`: the goal, shown to the policy (the world model never sees it);
/// - `state`: the initial state text (screen, UI dump, accessibility tree, page), shown to the
///   world model under `**Current State:**` in the first turn;
/// - `system`: the world model's system prompt for this task (default: the prompt set's);
/// - `format`: the state format name (`agentworld parse --help` lists them; default `auto`);
/// - `max_steps`: a per-task step limit (default: the caller's);
/// - `actions`: scripted actions replayed instead of asking a policy (each a string, e.g.
///   `"click('12')"`, or a JSON value such as a terminal keystroke list, written as Python's
///   `json.dumps` writes it, the form the benchmark's rows and our training data use).
///
/// Unknown fields are an error, so a misspelt field does not silently fall back to a default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// The trajectory's id.
    #[serde(deserialize_with = "string_or_number")]
    pub id: String,
    /// The environment's domain.
    #[serde(alias = "task")]
    pub domain: Domain,
    /// The goal, for the policy.
    #[serde(default)]
    pub instruction: String,
    /// The initial state text.
    #[serde(default)]
    pub state: Option<String>,
    /// The world model's system prompt, used as given.
    #[serde(default)]
    pub system: Option<String>,
    /// The state format (`auto` when absent).
    #[serde(default)]
    pub format: Option<String>,
    /// Most steps for this task.
    #[serde(default)]
    pub max_steps: Option<usize>,
    /// Scripted actions, replayed in order instead of asking a policy.
    #[serde(default, deserialize_with = "action_texts")]
    pub actions: Option<Vec<String>>,
}

impl Task {
    /// A task with only an id, a domain and an initial state.
    pub fn new(id: impl Into<String>, domain: Domain, state: Option<String>) -> Task {
        Task {
            id: id.into(),
            domain,
            instruction: String::new(),
            state,
            system: None,
            format: None,
            max_steps: None,
            actions: None,
        }
    }
}

fn string_or_number<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(s),
        Value::Number(n) => Ok(n.to_string()),
        other => Err(serde::de::Error::custom(format!(
            "id must be a string or number, got {other}"
        ))),
    }
}

fn action_texts<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Vec<String>>, D::Error> {
    let Some(values) = Option::<Vec<Value>>::deserialize(d)? else {
        return Ok(None);
    };
    Ok(Some(
        values
            .into_iter()
            .map(|v| match v {
                Value::String(s) => s,
                // As the benchmark's rows write actions (Python's `json.dumps`).
                other => crate::messages::python_json(&other),
            })
            .collect(),
    ))
}

/// Reads tasks from JSONL text; blank lines and lines starting with `//` are skipped.
///
/// # Errors
/// [`Error::Json`] with the 1-based line of the first line that is not a task (bad JSON, an
/// unknown domain, field or state format, a missing id), or of a repeated id.
pub fn parse_tasks(text: &str) -> Result<Vec<Task>> {
    let mut tasks: Vec<Task> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    let registry = crate::state::Registry::standard();
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with("//") {
            continue;
        }
        let task: Task = serde_json::from_str(trimmed).map_err(|e| {
            // serde_json's own "at line 1 column N" counts within this one line: say column N.
            let text = e.to_string();
            let at = format!(" at line {} column {}", e.line(), e.column());
            Error::Json {
                line: i + 1,
                message: match text.strip_suffix(&at) {
                    Some(message) => format!("{message} (column {})", e.column()),
                    None => text,
                },
            }
        })?;
        if let Some(format) = task.format.as_deref()
            && format != "auto"
            && registry.get(format).is_none()
        {
            return Err(Error::Json {
                line: i + 1,
                message: format!(
                    "unknown state format `{format}`; valid formats are: auto, {}",
                    registry.names().join(", ")
                ),
            });
        }
        if let Some(first) = seen.insert(task.id.clone(), i + 1) {
            return Err(Error::Json {
                line: i + 1,
                message: format!("task id `{}` is already used on line {first}", task.id),
            });
        }
        tasks.push(task);
    }
    Ok(tasks)
}

/// Reads a tasks file (native only); errors name the file and the line.
///
/// # Errors
/// [`Error::Io`] when the file cannot be read; [`Error::Json`] as [`parse_tasks`], its message
/// prefixed with the path.
#[cfg(feature = "native")]
pub fn read_tasks_file(path: impl AsRef<std::path::Path>) -> Result<Vec<Task>> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read tasks file {}", path.display()), e))?;
    parse_tasks(&text).map_err(|e| match e {
        Error::Json { line, message } => Error::Json {
            line,
            message: format!("{message} (in {})", path.display()),
        },
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tasks_with_defaults_and_aliases() {
        let text = r#"
// a comment
{"id": 1, "domain": "terminal", "state": "$ ", "actions": [[{"keystrokes": "ls\n", "duration": 0.5}], "[]"]}

{"id": "w", "task": "x/web", "instruction": "log in", "max_steps": 3}
"#;
        let tasks = parse_tasks(text).unwrap();
        assert_eq!(tasks.len(), 2);
        assert_eq!(tasks[0].id, "1");
        assert_eq!(
            tasks[0].actions.as_deref().unwrap(),
            [r#"[{"keystrokes": "ls\n", "duration": 0.5}]"#, "[]"]
        );
        assert_eq!(
            (
                tasks[1].domain,
                tasks[1].max_steps,
                tasks[1].state.is_none()
            ),
            (Domain::Web, Some(3), true)
        );
    }

    #[test]
    fn errors_name_the_line() {
        for (text, line, what) in [
            (
                "{\"id\": 1, \"domain\": \"terminal\"}\nnot json",
                2,
                "expected",
            ),
            ("\n{\"id\": 1, \"domain\": \"moon\"}", 2, "unknown domain"),
            (
                "{\"id\": 1, \"domain\": \"os\", \"stat\": \"x\"}",
                1,
                "unknown field",
            ),
            ("{\"domain\": \"os\"}", 1, "missing field `id`"),
            (
                "{\"id\": 1, \"domain\": \"os\", \"format\": \"pdf\"}",
                1,
                "unknown state format `pdf`",
            ),
            (
                "{\"id\": 1, \"domain\": \"os\"}\n{\"id\": \"1\", \"domain\": \"os\"}",
                2,
                "already used on line 1",
            ),
        ] {
            let err = parse_tasks(text).unwrap_err().to_string();
            assert!(err.starts_with(&format!("line {line}:")), "{err}");
            assert!(err.contains(what), "{err}");
            // One line named, not serde's count within the line as well.
            assert!(!err.contains("at line"), "{err}");
        }
    }

    #[cfg(feature = "native")]
    #[test]
    fn file_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.jsonl");
        std::fs::write(&path, "{\"id\": 1}\n").unwrap();
        let err = read_tasks_file(&path).unwrap_err().to_string();
        assert!(
            err.starts_with("line 1:") && err.contains("tasks.jsonl"),
            "{err}"
        );
        let err = read_tasks_file(dir.path().join("none.jsonl"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("none.jsonl"), "{err}");
    }
}
