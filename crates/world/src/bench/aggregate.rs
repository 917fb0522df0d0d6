//! The score step: judged rows in, per-domain figures and both overall figures out, as the
//! benchmark's `aggregate_scores` computes them.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::scores::Dimension;
use crate::{Error, Result};

/// `(raw - 1) / 4 * 100`: a 1–5 mean on a 0–100 scale.
pub fn normalise(raw: f64) -> f64 {
    (raw - 1.0) / 4.0 * 100.0
}

/// One judged row, as the score step reads it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sample {
    /// The domain: `task` after its last `/` (as written; tasks outside the seven are kept).
    pub domain: String,
    /// Excluded from scoring: `failed` is missing or anything but `0` / `false`.
    pub failed: bool,
    /// The five dimensions in [`Dimension::ALL`] order, as stored (0: missing).
    pub dimensions: [f64; 5],
    /// The stored `total_score` (0: none).
    pub total_score: f64,
}

/// Reads a judged row (a JSON object) into a [`Sample`]; `line` is for error messages.
///
/// Missing dimensions and `total_score`, and `null`, read as 0; `true`/`false` as 1/0 (as
/// Python counts them). The scores of a failed row are not read.
///
/// # Errors
/// [`Error::Score`] naming the line: not an object, no string `task`, a score that is not a
/// number.
pub fn sample_from_value(line: usize, value: &Value) -> Result<Sample> {
    let bad = |message: String| Error::Score { line, message };
    let object = value
        .as_object()
        .ok_or_else(|| bad("a judged row must be a JSON object".into()))?;
    let task = object
        .get("task")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("no string `task`".into()))?;
    let domain = task.rsplit('/').next().unwrap_or(task).to_string();
    let failed = !match object.get("failed") {
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(Value::Bool(b)) => !b,
        _ => false,
    };
    let mut sample = Sample {
        domain,
        failed,
        dimensions: [0.0; 5],
        total_score: 0.0,
    };
    if failed {
        return Ok(sample);
    }
    let number = |key: &str| -> Result<f64> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(0.0),
            Some(Value::Bool(b)) => Ok(f64::from(u8::from(*b))),
            Some(Value::Number(n)) => Ok(n.as_f64().unwrap_or(0.0)),
            Some(other) => Err(bad(format!("`{key}` must be a number, got {other}"))),
        }
    };
    for d in Dimension::ALL {
        sample.dimensions[d as usize] = number(d.as_str())?;
    }
    sample.total_score = number("total_score")?;
    Ok(sample)
}

/// Reads judged JSONL (blank lines skipped).
///
/// # Errors
/// [`Error::Json`] for a line that is not JSON, [`Error::Score`] for one that is not a judged
/// row (see [`sample_from_value`]); both carry the 1-based line number.
pub fn parse_judged_jsonl(text: &str) -> Result<Vec<Sample>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).map_err(|e| Error::Json {
            line: i + 1,
            message: e.to_string(),
        })?;
        out.push(sample_from_value(i + 1, &value)?);
    }
    Ok(out)
}

/// One domain's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DomainScore {
    /// The domain.
    pub domain: String,
    /// Rows of this domain.
    pub samples: usize,
    /// Rows not failed.
    pub valid: usize,
    /// Rows failed (`samples - valid`).
    pub failed: usize,
    /// Valid rows with a non-zero `total_score` (those the overall figures count).
    pub scored: usize,
    /// Each dimension's mean over the valid rows where it is not 0, normalised; `None` when no
    /// row has it (the benchmark prints `-25.00` there, the normalised mean of nothing).
    pub dimensions: [Option<f64>; 5],
    /// The domain score: the mean `total_score` over the valid rows where it is not 0,
    /// normalised; `None` when there is none.
    pub total: Option<f64>,
}

/// The score table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// One entry per domain, sorted by name (as the benchmark prints them).
    pub domains: Vec<DomainScore>,
    /// The README table's "Overall": the unweighted mean of the domain scores
    /// ([`DomainScore::total`]) of the domains that have one.
    pub overall_domain_mean: Option<f64>,
    /// `eval.py`'s "Overall": the mean `total_score` of all scored rows, normalised (so each
    /// domain weighs by its number of scored rows).
    pub overall_sample_weighted: Option<f64>,
    /// All rows.
    pub samples: usize,
    /// Rows counted by the overall figures (`eval.py`'s "Valid").
    pub scored: usize,
    /// `samples - scored` (`eval.py`'s "Failed").
    pub unscored: usize,
}

fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Aggregates judged samples into the score table.
pub fn aggregate(samples: &[Sample]) -> Report {
    let mut by_domain: BTreeMap<&str, Vec<&Sample>> = BTreeMap::new();
    for s in samples {
        by_domain.entry(s.domain.as_str()).or_default().push(s);
    }
    let mut all_totals = Vec::new();
    let mut domains = Vec::new();
    for (domain, rows) in by_domain {
        let valid: Vec<&Sample> = rows.iter().copied().filter(|s| !s.failed).collect();
        let nonzero = |f: &dyn Fn(&Sample) -> f64| -> Vec<f64> {
            valid.iter().map(|s| f(s)).filter(|v| *v != 0.0).collect()
        };
        let dimensions =
            Dimension::ALL.map(|d| mean(&nonzero(&|s| s.dimensions[d as usize])).map(normalise));
        let totals = nonzero(&|s| s.total_score);
        all_totals.extend(&totals);
        domains.push(DomainScore {
            domain: domain.to_string(),
            samples: rows.len(),
            valid: valid.len(),
            failed: rows.len() - valid.len(),
            scored: totals.len(),
            dimensions,
            total: mean(&totals).map(normalise),
        });
    }
    let domain_scores: Vec<f64> = domains.iter().filter_map(|d| d.total).collect();
    Report {
        overall_domain_mean: mean(&domain_scores),
        overall_sample_weighted: mean(&all_totals).map(normalise),
        samples: samples.len(),
        scored: all_totals.len(),
        unscored: samples.len() - all_totals.len(),
        domains,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn samples_read_like_the_benchmark() {
        let s = sample_from_value(
            1,
            &json!({"task": "x/web", "failed": 0, "format": 4, "realism": true, "quality": null, "total_score": 3.5}),
        )
        .unwrap();
        assert_eq!(s.domain, "web");
        assert!(!s.failed);
        assert_eq!(s.dimensions, [4.0, 0.0, 0.0, 1.0, 0.0]);
        assert_eq!(s.total_score, 3.5);
        assert!(
            !sample_from_value(1, &json!({"task": "web", "failed": false}))
                .unwrap()
                .failed
        );
        for failed in [json!(1.0), json!(true), json!("0"), Value::Null] {
            let v = json!({"task": "web", "failed": failed, "format": "not read"});
            assert!(sample_from_value(1, &v).unwrap().failed, "{v}");
        }
        assert!(
            sample_from_value(1, &json!({"task": "web"}))
                .unwrap()
                .failed,
            "missing `failed`"
        );
    }

    #[test]
    fn bad_lines_are_named() {
        let err = |text: &str| parse_judged_jsonl(text).unwrap_err().to_string();
        assert!(err("{\"task\": \"web\", \"failed\": 1}\n\nnot json").starts_with("line 3:"));
        let e = err("{\"failed\": 0}");
        assert!(e.contains("line 1") && e.contains("task"), "{e}");
        let e = err("\n{\"task\": \"os\", \"failed\": 0, \"quality\": \"4\"}");
        assert!(
            e.contains("line 2") && e.contains("`quality` must be a number"),
            "{e}"
        );
        assert!(err("[1]").contains("JSON object"));
    }

    #[test]
    fn empty_input_has_no_figures() {
        let r = aggregate(&[]);
        assert_eq!(
            (r.overall_domain_mean, r.overall_sample_weighted),
            (None, None)
        );
        assert!(r.domains.is_empty());
        assert_eq!(normalise(1.0), 0.0);
        assert_eq!(normalise(5.0), 100.0);
        assert_eq!(normalise(3.0), 50.0);
    }
}
