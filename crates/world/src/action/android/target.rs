//! [`Target`]: which node an action is aimed at.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

use crate::state::android::AndroidTree;

/// Which node an action is aimed at (see the [module docs](super) for the JSON forms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Pre-order node index, from 0.
    Index(usize),
    /// A resource-id, short (`wifi`, `android:content`) or full.
    Id(String),
    /// A text, else content-desc, equal to this.
    Text(String),
    /// The node a touch at this point lands on.
    Point {
        /// x in pixels.
        x: i32,
        /// y in pixels.
        y: i32,
    },
}

impl Target {
    /// The node the target names in `tree` (the first match in pre-order), if any.
    pub fn resolve(&self, tree: &AndroidTree) -> Option<usize> {
        match self {
            Target::Index(i) => (*i < tree.len()).then_some(*i),
            Target::Id(id) => tree.find_by_id(id).first().copied(),
            Target::Text(text) => tree.find_by_text(text).first().copied(),
            Target::Point { x, y } => tree.hit_test(*x, *y),
        }
    }
}

impl Serialize for Target {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = match self {
            Target::Index(i) => json!(i),
            Target::Id(id) => json!(format!("#{id}")),
            Target::Text(t) if t.starts_with('#') => json!({ "text": t }),
            Target::Text(t) => json!(t),
            Target::Point { x, y } => json!({ "x": x, "y": y }),
        };
        v.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = Value::deserialize(d)?;
        let bad = || {
            D::Error::custom(format!(
                "target must be an index, \"#id\", a text or an object, got {v}"
            ))
        };
        match &v {
            Value::Number(n) => n
                .as_u64()
                .map(|i| Target::Index(i as usize))
                .ok_or_else(bad),
            Value::String(s) => Ok(match s.strip_prefix('#') {
                Some(id) if !id.is_empty() => Target::Id(id.to_string()),
                _ => Target::Text(s.clone()),
            }),
            Value::Object(m) => {
                let int = |k: &str| {
                    m.get(k)
                        .and_then(Value::as_i64)
                        .and_then(|i| i32::try_from(i).ok())
                };
                let text = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
                if let Some(i) = m.get("index").and_then(Value::as_u64) {
                    Ok(Target::Index(i as usize))
                } else if let Some(id) = text("id") {
                    Ok(Target::Id(id.strip_prefix('#').unwrap_or(&id).to_string()))
                } else if let Some(t) = text("text") {
                    Ok(Target::Text(t))
                } else if let (Some(x), Some(y)) = (int("x"), int("y")) {
                    Ok(Target::Point { x, y })
                } else {
                    Err(bad())
                }
            }
            _ => Err(bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::android::parse_compact;

    #[test]
    fn resolves_each_kind() {
        let t = parse_compact("FrameLayout [0,0][100,100]\n  TextView #a \"Hello\" [0,0][50,50]\n  Button desc=\"Go\" [50,50][100,100]\n  TextView #a \"Again\"").unwrap().tree;
        assert_eq!(Target::Index(2).resolve(&t), Some(2));
        assert_eq!(Target::Index(4).resolve(&t), None);
        assert_eq!(Target::Id("a".into()).resolve(&t), Some(1));
        assert_eq!(Target::Text("Go".into()).resolve(&t), Some(2));
        assert_eq!(Target::Text("Nope".into()).resolve(&t), None);
        assert_eq!(Target::Point { x: 75, y: 75 }.resolve(&t), Some(2));
        assert_eq!(Target::Point { x: 10, y: 10 }.resolve(&t), Some(1));
    }

    #[test]
    fn json_forms() {
        let read = |s: &str| serde_json::from_str::<Target>(s).unwrap();
        assert_eq!(read("7"), Target::Index(7));
        assert_eq!(read("\"#ok\""), Target::Id("ok".into()));
        assert_eq!(read("\"#\""), Target::Text("#".into()));
        assert_eq!(read(r##"{"id":"#ok"}"##), Target::Id("ok".into()));
        assert_eq!(read(r#"{"index":2}"#), Target::Index(2));
        for t in [
            Target::Index(1),
            Target::Id("x".into()),
            Target::Text("#x".into()),
            Target::Text("x".into()),
            Target::Point { x: -1, y: 2 },
        ] {
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(read(&json), t, "{json}");
        }
        assert!(serde_json::from_str::<Target>("1.5").is_err());
        assert!(serde_json::from_str::<Target>(r#"{"x":1}"#).is_err());
    }
}
