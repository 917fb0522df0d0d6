//! Python's `str()` and `repr()` of template values, and Python's notion of whitespace.
//!
//! Jinja2 runs on Python objects, so `{{ true }}` prints `True`, `{{ none }}` prints `None`
//! and `{{ [1, 'a'] }}` prints `[1, 'a']`. MiniJinja's own formatting differs (`true`,
//! `none`, `[1, "a"]`); the chat-template environment swaps in these functions wherever a
//! value becomes text (printing and the `string` filter).

use std::fmt::Write;

use minijinja::value::{Value, ValueKind};

/// Python's `str(value)`: strings as they are, everything else as `repr`.
pub(crate) fn py_str(value: &Value) -> String {
    match value.as_str() {
        Some(s) => s.to_owned(),
        None if value.is_undefined() => String::new(),
        None => py_repr(value),
    }
}

/// Python's `repr(value)` for the JSON-like values templates see.
pub(crate) fn py_repr(value: &Value) -> String {
    let mut out = String::new();
    write_repr(value, &mut out);
    out
}

fn write_repr(value: &Value, out: &mut String) {
    match value.kind() {
        ValueKind::Undefined => {}
        ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if value.is_true() { "True" } else { "False" }),
        ValueKind::Number => out.push_str(&py_number(value)),
        ValueKind::String => write_str_repr(value.as_str().unwrap_or_default(), out),
        ValueKind::Seq => {
            out.push('[');
            for (i, item) in value.try_iter().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(&item, out);
            }
            out.push(']');
        }
        ValueKind::Map => {
            out.push('{');
            for (i, key) in value.try_iter().into_iter().flatten().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(&key, out);
                out.push_str(": ");
                write_repr(&value.get_item(&key).unwrap_or_default(), out);
            }
            out.push('}');
        }
        // Bytes, iterables, plain objects: no Python equivalent worth imitating.
        _ => {
            let _ = write!(out, "{value}");
        }
    }
}

/// A number as Python prints it: integers in decimal, floats with `repr(float)` rules.
pub(crate) fn py_number(value: &Value) -> String {
    if value.is_integer() {
        return value.to_string();
    }
    match f64::try_from(value.clone()) {
        Ok(f) => py_float_repr(f),
        Err(_) => value.to_string(),
    }
}

/// Python's `repr(float)`: the shortest digits that round-trip, in fixed notation when the
/// decimal exponent is in `-4..16` (always with a fractional part), otherwise scientific
/// with a signed, at-least-two-digit exponent (`1e+16`, `1.5e-07`).
pub(crate) fn py_float_repr(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` prints the shortest round-trip digits, e.g. "-1.2345e2".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::from(sign);
    if (-4..16).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

/// Python's `repr(str)` of `s` as a new string ([`write_str_repr`]): how a Python-syntax
/// action or accessibility tree quotes its text (`'Guest name'`, `"Bob's"`).
pub fn py_str_repr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_str_repr(s, &mut out);
    out
}

/// Python's `repr(str)`: single quotes unless the text has `'` and no `"`; escapes for
/// backslash, the quote, `\n`, `\r`, `\t` and other control characters.
fn write_str_repr(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// Python's `str.isspace()` for one character (Rust's whitespace plus the four ASCII
/// separators `\x1c`..`\x1f`).
pub(crate) fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_like_python() {
        let cases = [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (-2.0, "-2.0"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1.2345678901234567e17, "1.2345678901234566e+17"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (123.456, "123.456"),
            (1e100, "1e+100"),
            (-0.0, "-0.0"),
            (f64::INFINITY, "inf"),
        ];
        for (f, want) in cases {
            assert_eq!(py_float_repr(f), want, "{f:e}");
        }
    }

    #[test]
    fn str_and_repr_of_values() {
        assert_eq!(py_str(&Value::from(true)), "True");
        assert_eq!(py_str(&Value::from(())), "None");
        assert_eq!(py_str(&Value::UNDEFINED), "");
        assert_eq!(py_str(&Value::from("it's")), "it's");
        assert_eq!(py_str(&Value::from(3)), "3");
        assert_eq!(py_str(&Value::from(2.0)), "2.0");
        let list = Value::from(minijinja::value::Serde(serde_json::json!([
            1, "a", null, false, "it's", "x\ny"
        ])));
        assert_eq!(py_str(&list), r#"[1, 'a', None, False, "it's", 'x\ny']"#);
        let map = Value::from(minijinja::value::Serde(
            serde_json::json!({"b": {"k": [1.5]}, "a": "\u{1}"}),
        ));
        assert_eq!(py_str(&map), r"{'b': {'k': [1.5]}, 'a': '\x01'}");
    }

    #[test]
    fn python_whitespace() {
        assert!(is_py_space('\x1f') && is_py_space('\u{3000}') && is_py_space('\n'));
        assert!(!is_py_space('\u{200b}') && !is_py_space('a'));
    }
}
