//! The AgentWorldBench dataset row, JSONL reading and writing, and the infer-step conversion.
//!
//! A row is `{task, id, prompt: [turn prompts], response: [observations], current_prompt,
//! system_str, turn_idx, total_turns}`. `turn_idx` counts from 1 and names the turn to predict:
//! the messages are `[system=system_str] + (user=prompt[i], assistant=response[i]) for
//! i < turn_idx-1 + [user=prompt[turn_idx-1]]` and the target is `response[turn_idx-1]`.
//!
//! Our generated rows add two optional fields, written only when set: `thinking` (one sentence
//! of world-model reasoning for the target turn) and `split` (`"train"` or `"test"`). Any other
//! field a row carries is kept in [`Row::extra`] and written back unchanged. An `id` given as a
//! JSON number is read as its decimal string.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::messages::{History, Message, strip_observation_marker};
use crate::{Domain, Error, Result};

/// What a turn prompt puts before its state ([`crate::messages::turn_prompt`]).
const STATE_MARKER: &str = "**Current State:**\n";

/// Which part of a generated data set a row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    /// Training rows.
    Train,
    /// Held-out rows (templates or dump files never seen in training).
    Test,
}

/// One AgentWorldBench row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The domain, as the benchmark writes it (`android`, or `x/android`).
    pub task: String,
    /// The row's identifier.
    #[serde(deserialize_with = "string_or_number")]
    pub id: String,
    /// Turn prompts, one per turn.
    pub prompt: Vec<String>,
    /// Observations, one per turn, each starting with `**Environment Observation:**\n`.
    pub response: Vec<String>,
    /// The prompt of the turn to predict (equal to `prompt[turn_idx-1]` in well-formed rows).
    #[serde(default)]
    pub current_prompt: String,
    /// The system prompt, used as given.
    #[serde(default)]
    pub system_str: String,
    /// 1-based index of the turn to predict.
    pub turn_idx: usize,
    /// Number of turns in the trajectory.
    #[serde(default)]
    pub total_turns: usize,
    /// One sentence of reasoning for the target turn (our generated rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// Train or held-out (our generated rows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
    /// Fields this type does not know, kept as they were.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
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

impl Row {
    /// A row whose last turn is the target: `turns` are (prompt, response) pairs in order.
    pub fn from_turns(
        task: Domain,
        id: impl Into<String>,
        system: impl Into<String>,
        turns: Vec<(String, String)>,
    ) -> Self {
        let (prompt, response): (Vec<String>, Vec<String>) = turns.into_iter().unzip();
        Row {
            task: task.as_str().to_string(),
            id: id.into(),
            current_prompt: prompt.last().cloned().unwrap_or_default(),
            system_str: system.into(),
            turn_idx: prompt.len(),
            total_turns: prompt.len(),
            prompt,
            response,
            thinking: None,
            split: None,
            extra: Map::new(),
        }
    }

    /// The row's domain (`task`, with `a/b` read as `b`).
    pub fn domain(&self) -> Result<Domain> {
        self.task.parse()
    }

    /// Checks that `turn_idx` names an existing turn whose history is complete.
    pub fn validate(&self) -> Result<()> {
        let bad = |message: String| {
            Err(Error::Row {
                id: self.id.clone(),
                message,
            })
        };
        if self.turn_idx == 0 {
            return bad("turn_idx counts from 1, got 0".into());
        }
        if self.turn_idx > self.prompt.len() {
            return bad(format!(
                "turn_idx {} but only {} prompts",
                self.turn_idx,
                self.prompt.len()
            ));
        }
        if self.response.len() + 1 < self.turn_idx {
            return bad(format!(
                "turn_idx {} needs {} earlier responses, found {}",
                self.turn_idx,
                self.turn_idx - 1,
                self.response.len()
            ));
        }
        Ok(())
    }

    /// The history before the target turn, with `system_str` as the system prompt.
    pub fn history(&self) -> Result<History> {
        self.validate()?;
        let mut h = History::new(self.system_str.clone());
        for i in 0..self.turn_idx - 1 {
            h.push(self.prompt[i].clone(), self.response[i].clone());
        }
        Ok(h)
    }

    /// The chat messages of the infer step (see the module docs).
    pub fn messages(&self) -> Result<Vec<Message>> {
        Ok(self.history()?.messages(&self.prompt[self.turn_idx - 1]))
    }

    /// The ground-truth response of the target turn, `response[turn_idx-1]`, marker included.
    pub fn target(&self) -> Result<&str> {
        self.validate()?;
        self.response
            .get(self.turn_idx - 1)
            .map(String::as_str)
            .ok_or_else(|| Error::Row {
                id: self.id.clone(),
                message: format!("no response for turn {}", self.turn_idx),
            })
    }

    /// The target observation with the `**Environment Observation:**` marker removed.
    pub fn target_observation(&self) -> Result<String> {
        Ok(strip_observation_marker(self.target()?))
    }

    /// The state the target turn acts on: the text after that turn's `**Current State:**`,
    /// else the previous turn's observation (marker removed); empty when there is neither.
    pub fn current_state(&self) -> String {
        let turn = self
            .turn_idx
            .saturating_sub(1)
            .min(self.prompt.len().saturating_sub(1));
        if let Some(i) = self.prompt.get(turn).and_then(|p| p.find(STATE_MARKER)) {
            return self.prompt[turn][i + STATE_MARKER.len()..].to_string();
        }
        self.turn_idx
            .checked_sub(2)
            .and_then(|i| self.response.get(i))
            .map(|r| strip_observation_marker(r))
            .unwrap_or_default()
    }
}

/// Reads JSONL text; blank lines are skipped; errors carry the 1-based line number.
pub fn parse_jsonl(text: &str) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let row = serde_json::from_str(line).map_err(|e| Error::Json {
            line: i + 1,
            message: e.to_string(),
        })?;
        rows.push(row);
    }
    Ok(rows)
}

/// Reads JSONL from a reader (see [`parse_jsonl`]).
pub fn read_jsonl(reader: impl std::io::BufRead) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| Error::io(format!("reading JSONL line {}", i + 1), e))?;
        if line.trim().is_empty() {
            continue;
        }
        let row = serde_json::from_str(&line).map_err(|e| Error::Json {
            line: i + 1,
            message: e.to_string(),
        })?;
        rows.push(row);
    }
    Ok(rows)
}

/// Writes one compact JSON object per line, each followed by `\n`.
pub fn write_jsonl<'a>(
    rows: impl IntoIterator<Item = &'a Row>,
    mut writer: impl std::io::Write,
) -> Result<()> {
    for row in rows {
        let line = serde_json::to_string(row).map_err(|e| Error::Json {
            line: 0,
            message: e.to_string(),
        })?;
        writeln!(writer, "{line}").map_err(|e| Error::io("writing JSONL", e))?;
    }
    Ok(())
}

/// Reads a JSONL file (native only).
#[cfg(feature = "native")]
pub fn read_jsonl_file(path: impl AsRef<std::path::Path>) -> Result<Vec<Row>> {
    let path = path.as_ref();
    let file = std::fs::File::open(path)
        .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
    read_jsonl(std::io::BufReader::new(file))
}

/// Writes a JSONL file (native only).
#[cfg(feature = "native")]
pub fn write_jsonl_file<'a>(
    path: impl AsRef<std::path::Path>,
    rows: impl IntoIterator<Item = &'a Row>,
) -> Result<()> {
    let path = path.as_ref();
    let file = std::fs::File::create(path)
        .map_err(|e| Error::io(format!("cannot create {}", path.display()), e))?;
    let mut w = std::io::BufWriter::new(file);
    write_jsonl(rows, &mut w)?;
    std::io::Write::flush(&mut w)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::Role;

    const LINE: &str = r#"{"task":"x/terminal","id":7,"prompt":["p1","p2","p3"],"response":["**Environment Observation:**\nr1","**Environment Observation:**\nr2","**Environment Observation:**\nr3"],"current_prompt":"p2","system_str":"SYS","turn_idx":2,"total_turns":3,"source":"real","score":0.5}"#;

    #[test]
    fn reads_a_row_and_builds_messages() {
        let rows = parse_jsonl(&format!("\n{LINE}\n\n")).unwrap();
        let row = &rows[0];
        assert_eq!(row.id, "7");
        assert_eq!(row.domain().unwrap(), Domain::Terminal);
        let m = row.messages().unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!((m[0].role, m[0].content.as_str()), (Role::System, "SYS"));
        assert_eq!((m[1].role, m[1].content.as_str()), (Role::User, "p1"));
        assert_eq!(
            (m[2].role, m[2].content.as_str()),
            (Role::Assistant, "**Environment Observation:**\nr1")
        );
        assert_eq!((m[3].role, m[3].content.as_str()), (Role::User, "p2"));
        assert_eq!(row.target().unwrap(), "**Environment Observation:**\nr2");
        assert_eq!(row.target_observation().unwrap(), "r2");
    }

    #[test]
    fn extra_fields_survive_a_round_trip() {
        let row: Row = serde_json::from_str(LINE).unwrap();
        assert_eq!(row.extra.get("source"), Some(&Value::String("real".into())));
        let mut out = Vec::new();
        write_jsonl([&row], &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.ends_with("}\n") && text.contains("\"score\":0.5") && !text.contains("thinking")
        );
        assert_eq!(parse_jsonl(&text).unwrap()[0], row);
    }

    #[test]
    fn errors_carry_line_numbers() {
        let err = parse_jsonl(&format!("{LINE}\n{{\"task\": 1}}\n"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("line 2:"), "{err}");
        let err = read_jsonl(format!("\n\n{LINE}\nnot json").as_bytes())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("line 4:"), "{err}");
    }

    #[test]
    fn turn_index_is_validated() {
        let mut row: Row = serde_json::from_str(LINE).unwrap();
        row.turn_idx = 0;
        assert!(
            row.messages()
                .unwrap_err()
                .to_string()
                .contains("counts from 1")
        );
        row.turn_idx = 4;
        assert!(row.target().is_err());
        row.turn_idx = 3;
        row.response.truncate(1);
        assert!(row.messages().is_err());
        row.response = vec!["a".into(), "b".into()];
        assert_eq!(row.messages().unwrap().len(), 6);
        assert!(
            row.target()
                .unwrap_err()
                .to_string()
                .contains("no response for turn 3")
        );
    }

    #[test]
    fn from_turns_targets_the_last_turn() {
        let mut row = Row::from_turns(
            Domain::Android,
            "a-1",
            "S",
            vec![("p1".into(), "r1".into()), ("p2".into(), "r2".into())],
        );
        row.thinking = Some("t".into());
        row.split = Some(Split::Test);
        assert_eq!(
            (row.turn_idx, row.total_turns, row.current_prompt.as_str()),
            (2, 2, "p2")
        );
        let json = serde_json::to_string(&row).unwrap();
        assert!(
            json.contains(r#""thinking":"t""#) && json.contains(r#""split":"test""#),
            "{json}"
        );
        let back: Row = serde_json::from_str(&json).unwrap();
        assert_eq!(back, row);
        assert!(back.extra.is_empty());
    }
}
