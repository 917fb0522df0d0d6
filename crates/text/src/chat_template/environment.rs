//! The MiniJinja environment that renders chat templates the way transformers' Jinja2
//! sandbox does.
//!
//! transformers compiles templates with `trim_blocks=True, lstrip_blocks=True` and the
//! `loopcontrols` extension, replaces `tojson` (Python `json.dumps`, no HTML escaping) and
//! adds `raise_exception` and `strftime_now`. Values are Python objects there, so this
//! environment also prints values the Python way and offers Python's string and dict methods.

use std::sync::Arc;

use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Value, ValueKind};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, State};

use super::pyjson::tojson_filter;
use super::pystr::{is_py_space, py_str};
use super::strftime::strftime;

/// Name the template is stored under (no extension, so no auto-escaping applies).
pub(crate) const TEMPLATE_NAME: &str = "chat";

/// Reads the time for `strftime_now`, in seconds since the Unix epoch (`None`: no clock).
pub(crate) type Clock = Arc<dyn Fn() -> Option<i64> + Send + Sync>;

/// The message given to `raise_exception`, carried as the source of a MiniJinja error so
/// that rendering can report it as [`crate::Error::TemplateRaised`].
#[derive(Debug)]
pub(crate) struct RaisedException(pub String);

impl std::fmt::Display for RaisedException {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RaisedException {}

/// Builds an environment holding `source` as [`TEMPLATE_NAME`].
pub(crate) fn build(source: String, clock: Clock) -> Result<Environment<'static>, Error> {
    let mut env = Environment::new();
    let syntax = SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(false)
        .build()?;
    env.set_syntax(syntax);
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_unknown_method_callback(python_method);
    env.set_formatter(|out, state, value| match value.kind() {
        ValueKind::Undefined | ValueKind::String | ValueKind::Invalid => {
            minijinja::escape_formatter(out, state, value)
        }
        _ => out.write_str(&py_str(value)).map_err(Error::from),
    });
    env.add_filter("tojson", tojson_filter);
    env.add_filter("string", string_filter);
    env.add_filter("trim", trim_filter);
    env.add_test("iterable", is_iterable);
    env.add_test("sequence", is_sequence);
    env.add_test("number", is_number);
    env.add_function("raise_exception", raise_exception);
    env.add_function(
        "strftime_now",
        move |format: &str| -> Result<String, Error> {
            let now = clock().ok_or_else(|| {
            Error::new(
                ErrorKind::InvalidOperation,
                "strftime_now: no clock on this platform (set one with ChatTemplate::with_clock)",
            )
        })?;
            Ok(strftime(format, now))
        },
    );
    env.add_template_owned(TEMPLATE_NAME, source)?;
    Ok(env)
}

/// `raise_exception(message)`: aborts rendering with the template's own message.
fn raise_exception(message: Value) -> Result<Value, Error> {
    let message = py_str(&message);
    Err(Error::new(ErrorKind::InvalidOperation, message.clone())
        .with_source(RaisedException(message)))
}

/// Jinja2's `iterable` test: anything Python can iterate (strings, lists, dicts, and
/// undefined values), but not `None` or numbers.
fn is_iterable(value: &Value) -> bool {
    !matches!(
        value.kind(),
        ValueKind::None | ValueKind::Bool | ValueKind::Number | ValueKind::Plain
    )
}

/// Jinja2's `sequence` test: has a length and supports `[]`, so strings and dicts count.
fn is_sequence(value: &Value) -> bool {
    matches!(
        value.kind(),
        ValueKind::String
            | ValueKind::Seq
            | ValueKind::Map
            | ValueKind::Bytes
            | ValueKind::Undefined
    )
}

/// Jinja2's `number` test: Python numbers, which include `True` and `False`.
fn is_number(value: &Value) -> bool {
    matches!(value.kind(), ValueKind::Number | ValueKind::Bool)
}

/// Jinja2's `string` filter: Python `str()` (`True`, `None`, `[1, 'a']`).
fn string_filter(value: &Value) -> Value {
    if value.kind() == ValueKind::String {
        value.clone()
    } else {
        Value::from(py_str(value))
    }
}

/// Jinja2's `trim` filter: Python `str.strip(chars)`.
fn trim_filter(value: &Value, chars: Option<&str>) -> Value {
    Value::from(py_strip(&py_str(value), chars, Side::Both))
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Left,
    Right,
    Both,
}

/// Python's `strip`/`lstrip`/`rstrip`: whitespace by Python's definition, or a set of chars.
fn py_strip<'a>(s: &'a str, chars: Option<&str>, side: Side) -> &'a str {
    let strip = |c: char| match chars {
        Some(set) => set.contains(c),
        None => is_py_space(c),
    };
    let s = if side == Side::Right {
        s
    } else {
        s.trim_start_matches(strip)
    };
    if side == Side::Left {
        s
    } else {
        s.trim_end_matches(strip)
    }
}

/// Python methods on template values (`s.startswith(..)`, `d.items()`, ...): the strip family
/// here with Python's whitespace rules, everything else from `minijinja_contrib::pycompat`.
fn python_method(
    state: &mut State,
    value: &Value,
    method: &str,
    args: &[Value],
) -> Result<Value, Error> {
    if let (Some(s), "strip" | "lstrip" | "rstrip") = (value.as_str(), method) {
        let (chars,): (Option<Value>,) = minijinja::value::from_args(args)?;
        let chars = chars.filter(|c| !c.is_none());
        let chars = match &chars {
            Some(c) => Some(c.as_str().ok_or_else(|| {
                Error::new(
                    ErrorKind::InvalidOperation,
                    format!("{method} arg must be None or str"),
                )
            })?),
            None => None,
        };
        let side = match method {
            "lstrip" => Side::Left,
            "rstrip" => Side::Right,
            _ => Side::Both,
        };
        return Ok(Value::from(py_strip(s, chars, side)));
    }
    minijinja_contrib::pycompat::unknown_method_callback(state, value, method, args)
}

/// Finds a [`RaisedException`] in an error's source chain.
pub(crate) fn raised_message(err: &Error) -> Option<String> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(err);
    while let Some(e) = source {
        if let Some(raised) = e.downcast_ref::<RaisedException>() {
            return Some(raised.0.clone());
        }
        source = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(source: &str, ctx: Value) -> Result<String, Error> {
        let env = build(source.to_owned(), Arc::new(|| Some(1_722_000_000)))?;
        env.get_template(TEMPLATE_NAME)?.render(ctx)
    }

    fn ok(source: &str) -> String {
        render(source, Value::from(())).unwrap()
    }

    #[test]
    fn values_print_like_python() {
        assert_eq!(
            ok("{{ true }}|{{ none }}|{{ 1.0 }}|{{ [1, 'a', none] }}|{{ x }}"),
            "True|None|1.0|[1, 'a', None]|"
        );
        assert_eq!(
            ok("{{ false | string }}|{{ {'k': 2} | string }}"),
            "False|{'k': 2}"
        );
    }

    #[test]
    fn tests_follow_jinja2() {
        let ctx = minijinja::context! { n => (), d => minijinja::context! { a => 1 } };
        let got = render(
            "{{ n is iterable }} {{ 'a' is iterable }} {{ d is iterable }} {{ u is iterable }} {{ 1 is iterable }}|\
             {{ 'a' is sequence }} {{ d is sequence }} {{ [1] is sequence }} {{ n is sequence }}|\
             {{ true is number }} {{ 1.5 is number }} {{ 'a' is number }}",
            ctx,
        )
        .unwrap();
        assert_eq!(
            got,
            "False True True True False|True True True False|True True False"
        );
    }

    #[test]
    fn python_string_methods() {
        assert_eq!(
            ok("{{ '\\n a \\x1f'.strip() }}|{{ 'xxaxx'.lstrip('x') }}|{{ 'xxaxx'.rstrip('x') }}"),
            "a|axx|xxa"
        );
        assert_eq!(
            ok(
                "{{ 'a</think>b'.split('</think>')[-1] }}|{{ 'Ab'.upper() }}|{{ 'ab'.startswith('a') }}"
            ),
            "b|AB|True"
        );
        assert_eq!(
            ok(
                "{{ {'a': 1}.get('b', 'd') }}{% for k, v in {'x': 1}.items() %}{{ k }}={{ v }}{% endfor %}"
            ),
            "dx=1"
        );
        assert_eq!(ok("{{ '  t  ' | trim }}|{{ 'xtx' | trim('x') }}"), "t|t");
    }

    #[test]
    fn whitespace_control_matches_jinja2_settings() {
        // trim_blocks drops the newline after a block tag; lstrip_blocks the indent before it;
        // the single trailing newline of the source is dropped.
        assert_eq!(ok("{% if true %}\n    a\n    {% endif %}\nb\n"), "    a\nb");
    }

    #[test]
    fn loop_controls_and_namespace() {
        assert_eq!(
            ok(
                "{% set ns = namespace(n=0) %}{% for i in range(9) %}{% if i == 3 %}{% break %}{% endif %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"
            ),
            "3"
        );
    }

    #[test]
    fn raise_exception_carries_its_message() {
        let err = render(
            "{{ raise_exception('No user query found in messages.') }}",
            Value::from(()),
        )
        .unwrap_err();
        assert_eq!(
            raised_message(&err).as_deref(),
            Some("No user query found in messages.")
        );
        let other = render("{{ 1 + 'a' }}", Value::from(())).unwrap_err();
        assert_eq!(raised_message(&other), None);
    }

    #[test]
    fn strftime_now_uses_the_clock() {
        assert_eq!(ok("{{ strftime_now('%d %b %Y') }}"), "26 Jul 2024");
        let env = build("{{ strftime_now('%Y') }}".into(), Arc::new(|| None)).unwrap();
        let err = env
            .get_template(TEMPLATE_NAME)
            .unwrap()
            .render(())
            .unwrap_err();
        assert!(err.to_string().contains("no clock"), "{err}");
    }
}
