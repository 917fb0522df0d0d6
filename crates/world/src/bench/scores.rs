//! The five judged dimensions and one sample's scores.

use std::fmt;

use serde_json::Value;

/// One of the five dimensions the judge scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dimension {
    /// Follows the observation format of the domain.
    Format,
    /// States only what the real environment would return.
    Factuality,
    /// Agrees with the history and the action.
    Consistency,
    /// Reads like real environment output.
    Realism,
    /// Overall usefulness as a stand-in for the real observation.
    Quality,
}

impl Dimension {
    /// All five, in the benchmark's order (`SCORE_DIMENSIONS`).
    pub const ALL: [Dimension; 5] = [
        Dimension::Format,
        Dimension::Factuality,
        Dimension::Consistency,
        Dimension::Realism,
        Dimension::Quality,
    ];

    /// The JSON key (`format`, `factuality`, `consistency`, `realism`, `quality`).
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Format => "format",
            Dimension::Factuality => "factuality",
            Dimension::Consistency => "consistency",
            Dimension::Realism => "realism",
            Dimension::Quality => "quality",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One sample's five scores: integers 1–5, or 0 for a dimension the judge left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Scores {
    values: [u8; 5],
}

impl Scores {
    /// Scores from five values in [`Dimension::ALL`] order; each is clamped to 1–5, 0 stays 0
    /// (missing).
    pub fn new(values: [u8; 5]) -> Self {
        Scores {
            values: values.map(|v| if v == 0 { 0 } else { v.min(5) }),
        }
    }

    /// Reads the `scores` object of a verdict, one dimension at a time, as the benchmark does:
    /// an integer as is; a float rounded half to even (Python's `round`); a string up to its
    /// first `/` (`"4/5"` → 4) when that is an integer; `true` as 1, `false` as 0; anything
    /// else (missing, null, a list, text) 0. Values above 5 become 5.
    ///
    /// Departure: the benchmark keeps a negative value as it is (ignored by `total_score`, but
    /// counted in its per-dimension means); here anything at or below 0 is 0, missing.
    pub fn from_json(scores: &serde_json::Map<String, Value>) -> Self {
        let mut values = [0u8; 5];
        for d in Dimension::ALL {
            values[d.index()] = scores.get(d.as_str()).map_or(0, coerce);
        }
        Scores { values }
    }

    /// One dimension's score (0: missing).
    pub fn get(&self, dimension: Dimension) -> u8 {
        self.values[dimension.index()]
    }

    /// All five, in [`Dimension::ALL`] order.
    pub fn values(&self) -> [u8; 5] {
        self.values
    }

    /// The sample's `total_score`: the mean of the dimensions scored above 0, or 0.0 when none is.
    pub fn total(&self) -> f64 {
        let scored: Vec<f64> = self
            .values
            .iter()
            .filter(|v| **v > 0)
            .map(|v| f64::from(*v))
            .collect();
        if scored.is_empty() {
            0.0
        } else {
            scored.iter().sum::<f64>() / scored.len() as f64
        }
    }
}

/// One score value as the benchmark reads it (see [`Scores::from_json`]), clamped.
fn coerce(value: &Value) -> u8 {
    let n: i128 = match value {
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i128::from(i),
            (None, Some(u), _) => i128::from(u),
            (None, None, Some(f)) if f.is_finite() => {
                f.round_ties_even().clamp(-1e30, 1e30) as i128
            }
            _ => 0,
        },
        Value::String(s) => parse_python_int(s.split('/').next().unwrap_or("")).unwrap_or(0),
        Value::Bool(b) => i128::from(*b),
        _ => 0,
    };
    if n <= 0 { 0 } else { n.min(5) as u8 }
}

/// Python's `int(text.strip())` for ASCII text: optional sign, digits, single underscores between
/// digits. Saturates instead of growing without bound.
fn parse_python_int(text: &str) -> Option<i128> {
    let t = text.trim();
    let (negative, digits) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let mut n: i128 = 0;
    for c in digits.chars() {
        match c {
            '_' => {}
            '0'..='9' => {
                n = n
                    .saturating_mul(10)
                    .saturating_add(i128::from(c as u8 - b'0'))
            }
            _ => return None,
        }
    }
    Some(if negative { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scores(v: Value) -> Scores {
        Scores::from_json(v.as_object().unwrap())
    }

    #[test]
    fn values_are_read_as_the_benchmark_reads_them() {
        let s = scores(json!({
            "format": 4, "factuality": 3.5, "consistency": "2/5", "realism": 9, "quality": true
        }));
        // 3.5 rounds half to even → 4; "2/5" → 2; 9 clamps to 5; true is 1.
        assert_eq!(s.values(), [4, 4, 2, 5, 1]);
        // (4 + 4 + 2 + 5 + 1) / 5 = 16 / 5 = 3.2
        assert!((s.total() - 3.2).abs() < 1e-12);
    }

    #[test]
    fn missing_and_unreadable_values_are_zero() {
        let s = scores(json!({
            "format": 2.5, "factuality": " +3 ", "consistency": "four", "realism": -2
        }));
        // 2.5 rounds half to even → 2; " +3 " → 3; "four" → 0; -2 → 0; quality missing → 0.
        assert_eq!(s.values(), [2, 3, 0, 0, 0]);
        // mean over the scored ones only: (2 + 3) / 2 = 2.5
        assert!((s.total() - 2.5).abs() < 1e-12);
        assert_eq!(scores(json!({})).total(), 0.0);
        let odd = scores(json!({
            "format": null, "factuality": [4], "consistency": "1_0", "realism": 0.4,
            "quality": 1e300
        }));
        // null, list → 0; "1_0" is Python's 10 → 5; 0.4 rounds to 0; 1e300 clamps to 5.
        assert_eq!(odd.values(), [0, 0, 5, 0, 5]);
        assert_eq!(
            scores(json!({"format": 18446744073709551615u64})).get(Dimension::Format),
            5
        );
    }

    #[test]
    fn python_int_rules() {
        assert_eq!(parse_python_int("42"), Some(42));
        assert_eq!(parse_python_int(" -7 "), Some(-7));
        assert_eq!(parse_python_int("1_000"), Some(1000));
        for bad in ["", "+", "_1", "1_", "1__0", "4.0", "x"] {
            assert_eq!(parse_python_int(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn new_clamps_and_names_round_trip() {
        assert_eq!(Scores::new([0, 1, 5, 6, 200]).values(), [0, 1, 5, 5, 5]);
        let names: Vec<&str> = Dimension::ALL.iter().map(|d| d.as_str()).collect();
        assert_eq!(
            names,
            ["format", "factuality", "consistency", "realism", "quality"]
        );
        assert_eq!(Dimension::Realism.to_string(), "realism");
    }
}
