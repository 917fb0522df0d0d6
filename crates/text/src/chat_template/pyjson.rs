//! The `tojson` filter as transformers defines it: Python's `json.dumps` with
//! `ensure_ascii=False` by default, and the `indent`, `separators`, `sort_keys` and
//! `ensure_ascii` options.
//!
//! MiniJinja's built-in `tojson` escapes `<`, `>`, `&` and `'` for HTML and prints compact
//! JSON; transformers overrides Jinja's filter for the same reason, so templates like
//! `{{ tool | tojson }}` print `{"name": "x", "parameters": {...}}` with Python's spacing.

use std::fmt::Write;

use minijinja::value::{Kwargs, Value, ValueKind};
use minijinja::{Error, ErrorKind};

use super::pystr::py_float_repr;

/// Options of Python's `json.dumps` that transformers' `tojson` exposes.
#[derive(Debug, Clone)]
pub(crate) struct DumpOptions {
    pub ensure_ascii: bool,
    /// Per-level indent; `None` prints everything on one line.
    pub indent: Option<String>,
    pub item_separator: String,
    pub key_separator: String,
    pub sort_keys: bool,
}

impl Default for DumpOptions {
    fn default() -> Self {
        Self {
            ensure_ascii: false,
            indent: None,
            item_separator: ", ".into(),
            key_separator: ": ".into(),
            sort_keys: false,
        }
    }
}

/// The `tojson` filter: `value | tojson(ensure_ascii=False, indent=None, separators=None,
/// sort_keys=False)`. The first two may also be given by position, as in Python.
pub(crate) fn tojson_filter(
    value: &Value,
    ensure_ascii: Option<bool>,
    indent: Option<Value>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let ensure_ascii = kwargs.get::<Option<bool>>("ensure_ascii")?.or(ensure_ascii);
    let indent = kwargs.get::<Option<Value>>("indent")?.or(indent);
    let separators = kwargs.get::<Option<Value>>("separators")?;
    let sort_keys = kwargs.get::<Option<bool>>("sort_keys")?;
    kwargs.assert_all_used()?;

    let mut opts = DumpOptions {
        ensure_ascii: ensure_ascii.unwrap_or(false),
        sort_keys: sort_keys.unwrap_or(false),
        ..DumpOptions::default()
    };
    if let Some(indent) = indent.filter(|v| !v.is_none()) {
        opts.indent = Some(match indent.as_str() {
            Some(s) => s.to_owned(),
            None => {
                let n = indent.as_i64().ok_or_else(|| {
                    Error::new(
                        ErrorKind::InvalidOperation,
                        "tojson: indent must be an int or a string",
                    )
                })?;
                " ".repeat(usize::try_from(n).unwrap_or(0))
            }
        });
        opts.item_separator = ",".into();
    }
    if let Some(seps) = separators.filter(|v| !v.is_none()) {
        let item = seps
            .get_item_by_index(0)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned));
        let key = seps
            .get_item_by_index(1)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned));
        match (item, key) {
            (Some(item), Some(key)) => {
                opts.item_separator = item;
                opts.key_separator = key;
            }
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "tojson: separators must be a pair of strings",
                ));
            }
        }
    }
    let mut out = String::new();
    dump(value, &opts, 0, &mut out)?;
    // Same as transformers: a plain string, which `| safe` leaves alone and nothing escapes.
    Ok(Value::from(out))
}

/// Serialises a value as Python's `json.dumps` would.
pub(crate) fn dump(
    value: &Value,
    opts: &DumpOptions,
    level: usize,
    out: &mut String,
) -> Result<(), Error> {
    match value.kind() {
        ValueKind::None => out.push_str("null"),
        ValueKind::Bool => out.push_str(if value.is_true() { "true" } else { "false" }),
        ValueKind::Number => out.push_str(&json_number(value)),
        ValueKind::String => {
            write_json_str(value.as_str().unwrap_or_default(), opts.ensure_ascii, out)
        }
        ValueKind::Seq | ValueKind::Iterable => {
            let items: Vec<Value> = value.try_iter()?.collect();
            write_container(out, opts, level, '[', ']', &items, |item, out| {
                dump(item, opts, level + 1, out)
            })?;
        }
        ValueKind::Map => {
            let mut entries = Vec::new();
            for key in value.try_iter()? {
                let item = value.get_item(&key)?;
                entries.push((json_key(&key)?, item));
            }
            if opts.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
            }
            write_container(out, opts, level, '{', '}', &entries, |(key, item), out| {
                write_json_str(key, opts.ensure_ascii, out);
                out.push_str(&opts.key_separator);
                dump(item, opts, level + 1, out)
            })?;
        }
        kind => {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                format!("Object of type {kind} is not JSON serializable"),
            ));
        }
    }
    Ok(())
}

fn write_container<T>(
    out: &mut String,
    opts: &DumpOptions,
    level: usize,
    open: char,
    close: char,
    items: &[T],
    mut write_item: impl FnMut(&T, &mut String) -> Result<(), Error>,
) -> Result<(), Error> {
    out.push(open);
    if items.is_empty() {
        out.push(close);
        return Ok(());
    }
    let newline = |out: &mut String, depth: usize| {
        if let Some(indent) = &opts.indent {
            out.push('\n');
            for _ in 0..depth {
                out.push_str(indent);
            }
        }
    };
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(&opts.item_separator);
        }
        newline(out, level + 1);
        write_item(item, out)?;
    }
    newline(out, level);
    out.push(close);
    Ok(())
}

/// Dict keys as Python's encoder converts them: strings as they are, `True` → `true`,
/// `None` → `null`, numbers in their JSON form.
fn json_key(key: &Value) -> Result<String, Error> {
    match key.kind() {
        ValueKind::String => Ok(key.as_str().unwrap_or_default().to_owned()),
        ValueKind::Bool => Ok(if key.is_true() { "true" } else { "false" }.into()),
        ValueKind::None => Ok("null".into()),
        ValueKind::Number => Ok(json_number(key)),
        kind => Err(Error::new(
            ErrorKind::InvalidOperation,
            format!("keys must be str, int, float, bool or None, not {kind}"),
        )),
    }
}

fn json_number(value: &Value) -> String {
    if value.is_integer() {
        return value.to_string();
    }
    match f64::try_from(value.clone()) {
        Ok(f) if f.is_nan() => "NaN".into(),
        Ok(f) if f.is_infinite() => if f > 0.0 { "Infinity" } else { "-Infinity" }.into(),
        Ok(f) => py_float_repr(f),
        Err(_) => value.to_string(),
    }
}

/// A JSON string literal with Python's escapes: `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`,
/// other control characters as `\u00XX`; with `ensure_ascii` also everything outside
/// printable ASCII, as UTF-16 `\uXXXX` units.
fn write_json_str(s: &str, ensure_ascii: bool, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (ensure_ascii && !(' '..='~').contains(&c)) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use minijinja::Environment;
    use serde_json::json;

    use super::*;

    fn render(template: &str, value: serde_json::Value) -> String {
        let mut env = Environment::new();
        env.add_filter("tojson", tojson_filter);
        env.render_str(
            template,
            minijinja::context! { v => Value::from(minijinja::value::Serde(value)) },
        )
        .unwrap()
    }

    #[test]
    fn default_matches_python_dumps() {
        let v = json!({"name": "点击", "args": {"x": 1, "y": [1.0, 0.5, 1e16, null, true]},
                       "html": "<a href='x'>&</a>", "ctl": "a\u{1}\n\"\\"});
        assert_eq!(
            render("{{ v | tojson }}", v),
            r#"{"name": "点击", "args": {"x": 1, "y": [1.0, 0.5, 1e+16, null, true]}, "html": "<a href='x'>&</a>", "ctl": "a\u0001\n\"\\"}"#
        );
    }

    #[test]
    fn indent_separators_sort_keys_ensure_ascii() {
        let v = json!({"b": [1, {}], "a": "é😀"});
        assert_eq!(
            render("{{ v | tojson(indent=2) }}", v.clone()),
            "{\n  \"b\": [\n    1,\n    {}\n  ],\n  \"a\": \"é😀\"\n}"
        );
        assert_eq!(
            render(
                "{{ v | tojson(separators=(',', ':'), sort_keys=true) }}",
                v.clone()
            ),
            r#"{"a":"é😀","b":[1,{}]}"#
        );
        assert_eq!(
            render("{{ v | tojson(ensure_ascii=true) }}", v.clone()),
            r#"{"b": [1, {}], "a": "\u00e9\ud83d\ude00"}"#
        );
        assert_eq!(
            render("{{ v | tojson(indent='\t') }}", json!([1])),
            "[\n\t1\n]"
        );
        assert_eq!(
            render("{{ v | tojson(indent=0) }}", json!([1, 2])),
            "[\n1,\n2\n]"
        );
    }

    #[test]
    fn undefined_is_not_serialisable() {
        let env = {
            let mut env = Environment::new();
            env.add_filter("tojson", tojson_filter);
            env
        };
        let err = env.render_str("{{ missing | tojson }}", ()).unwrap_err();
        assert!(err.to_string().contains("not JSON serializable"), "{err}");
    }
}
