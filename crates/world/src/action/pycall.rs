//! A small reader for one Python call with literal arguments: `click('12', button="right")`.
//!
//! Used by the web (BrowserGym) and os (pyautogui) parsers. Nothing is evaluated: the text is
//! tokenized by hand and only literals are accepted: strings (`'…'`, `"…"`, with backslash
//! escapes, optional `r`/`u` prefix), ints, floats, `True`/`False`/`None`, lists and tuples of
//! literals. Names, operators and nested calls are errors.

use super::ActionError;

/// A Python literal value.
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// `True` or `False`.
    Bool(bool),
    /// `None`.
    None,
    /// A list or tuple.
    List(Vec<PyValue>),
}

impl PyValue {
    /// The Python type name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::Str(_) => "str",
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Bool(_) => "bool",
            PyValue::None => "None",
            PyValue::List(_) => "list",
        }
    }

    /// The value as a number, if it is an int or a float.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            PyValue::Int(i) => Some(*i as f64),
            PyValue::Float(f) => Some(*f),
            _ => None,
        }
    }
}

/// One parsed call: the dotted name, positional and keyword arguments in order.
#[derive(Debug, Clone, PartialEq)]
pub struct PyCall {
    /// The callee, dots kept (`pyautogui.click`).
    pub name: String,
    /// Positional arguments.
    pub args: Vec<PyValue>,
    /// Keyword arguments, in the order written.
    pub kwargs: Vec<(String, PyValue)>,
}

/// Parses `text` as exactly one call `name(arg, …, key=value, …)`.
pub fn parse_call(text: &str) -> Result<PyCall, ActionError> {
    let mut p = Reader {
        chars: text.trim().chars().collect(),
        pos: 0,
    };
    let name = p.dotted_name()?;
    p.skip_ws();
    if !p.eat('(') {
        return Err(ActionError::new(format!(
            "'{name}' is not a call: expected '(' after the name"
        )));
    }
    let mut call = PyCall {
        name,
        args: Vec::new(),
        kwargs: Vec::new(),
    };
    loop {
        p.skip_ws();
        if p.eat(')') {
            break;
        }
        let save = p.pos;
        let kw = p.ident();
        p.skip_ws();
        if let Some(kw) = kw.filter(|_| p.peek() == Some('=') && p.peek_at(1) != Some('=')) {
            p.pos += 1;
            let v = p.value(&call.name)?;
            call.kwargs.push((kw, v));
        } else {
            p.pos = save;
            let v = p.value(&call.name)?;
            if !call.kwargs.is_empty() {
                return Err(ActionError::new(format!(
                    "{}: positional argument after keyword argument",
                    call.name
                )));
            }
            call.args.push(v);
        }
        p.skip_ws();
        if p.eat(',') {
            continue;
        }
        if p.eat(')') {
            break;
        }
        return Err(p.unexpected(&call.name, "',' or ')'"));
    }
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(ActionError::new(format!(
            "{}: unexpected text after the call: {:?}",
            call.name,
            p.rest()
        )));
    }
    Ok(call)
}

/// What a parameter accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A string.
    Str,
    /// An int or a float.
    Num,
    /// An int.
    Int,
    /// An element id: a string, or an int (read as its decimal string).
    Id,
    /// A string or a list of strings.
    StrOrList,
    /// `True` or `False`.
    Bool,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A list of these strings (or one of them alone).
    ChoiceList(&'static [&'static str]),
    /// Any literal.
    Any,
}

/// One parameter of a callable: its name, what it accepts, and whether it may be left out.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// The name, as a keyword argument would spell it.
    pub name: &'static str,
    /// What it accepts.
    pub kind: Kind,
    /// Whether it must be given.
    pub required: bool,
}

/// A required parameter.
pub const fn req(name: &'static str, kind: Kind) -> Param {
    Param {
        name,
        kind,
        required: true,
    }
}

/// An optional parameter.
pub const fn opt(name: &'static str, kind: Kind) -> Param {
    Param {
        name,
        kind,
        required: false,
    }
}

/// A callable's signature. With `varargs`, extra positional arguments are all of the last
/// parameter's kind and are returned under its name (pyautogui's `hotkey(*keys)`).
#[derive(Debug, Clone, Copy)]
pub struct Signature {
    /// The action's name.
    pub name: &'static str,
    /// Its parameters, in positional order.
    pub params: &'static [Param],
    /// Whether the last parameter takes every remaining positional argument.
    pub varargs: bool,
}

impl Signature {
    /// Binds `call`'s arguments to the parameters: returns `(name, value)` pairs in parameter
    /// order (given ones only; ints named by [`Kind::Id`] become strings). Errors name the
    /// action and the argument: `fill: argument 2 (value) missing`.
    pub fn bind(&self, call: &PyCall) -> Result<Vec<(&'static str, PyValue)>, ActionError> {
        let name = self.name;
        let n = self.params.len();
        if (!self.varargs || n == 0) && call.args.len() > n {
            return Err(ActionError::new(format!(
                "{name}: takes at most {n} argument{}, got {}",
                if n == 1 { "" } else { "s" },
                call.args.len()
            )));
        }
        let mut slots: Vec<Vec<PyValue>> = vec![Vec::new(); n];
        for (i, v) in call.args.iter().enumerate() {
            slots[i.min(n.saturating_sub(1))].push(v.clone());
        }
        for (k, v) in &call.kwargs {
            let Some(i) = self.params.iter().position(|p| p.name == k) else {
                let known: Vec<_> = self.params.iter().map(|p| p.name).collect();
                return Err(ActionError::new(format!(
                    "{name}: unknown keyword argument '{k}' (takes {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                )));
            };
            if !slots[i].is_empty() {
                return Err(ActionError::new(format!(
                    "{name}: argument {} ({k}) given twice",
                    i + 1
                )));
            }
            slots[i].push(v.clone());
        }
        let mut out = Vec::new();
        for (i, (p, vals)) in self.params.iter().zip(slots).enumerate() {
            if vals.is_empty() {
                if p.required {
                    return Err(ActionError::new(format!(
                        "{name}: argument {} ({}) missing",
                        i + 1,
                        p.name
                    )));
                }
                continue;
            }
            let many = vals.len() > 1;
            let mut checked = Vec::new();
            for v in vals {
                checked.push(check_kind(v, p.kind).map_err(|why| {
                    ActionError::new(format!("{name}: argument {} ({}) {why}", i + 1, p.name))
                })?);
            }
            let value = if many {
                PyValue::List(checked)
            } else {
                checked.pop().unwrap_or(PyValue::None)
            };
            out.push((p.name, value));
        }
        Ok(out)
    }
}

fn check_kind(v: PyValue, kind: Kind) -> Result<PyValue, String> {
    let got = v.type_name();
    let bad = |want: &str| Err(format!("must be {want}, got {got}"));
    match (kind, &v) {
        (Kind::Any, _)
        | (Kind::Str, PyValue::Str(_))
        | (Kind::Num, PyValue::Int(_) | PyValue::Float(_))
        | (Kind::Int, PyValue::Int(_))
        | (Kind::Bool, PyValue::Bool(_))
        | (Kind::Id | Kind::StrOrList, PyValue::Str(_)) => Ok(v),
        (Kind::Id, PyValue::Int(i)) => Ok(PyValue::Str(i.to_string())),
        (Kind::StrOrList, PyValue::List(items)) => {
            if items.iter().all(|x| matches!(x, PyValue::Str(_))) {
                Ok(v)
            } else {
                bad("a string or a list of strings")
            }
        }
        (Kind::Choice(ok), PyValue::Str(s)) | (Kind::ChoiceList(ok), PyValue::Str(s)) => {
            if ok.contains(&s.as_str()) {
                Ok(v)
            } else {
                Err(format!("must be one of {}, got {s:?}", ok.join(", ")))
            }
        }
        (Kind::ChoiceList(ok), PyValue::List(items)) => {
            for x in items {
                match x {
                    PyValue::Str(s) if ok.contains(&s.as_str()) => {}
                    _ => return Err(format!("must list only {}, got {x:?}", ok.join(", "))),
                }
            }
            Ok(v)
        }
        (Kind::Str, _) => bad("a string"),
        (Kind::Num, _) => bad("a number"),
        (Kind::Int, _) => bad("an int"),
        (Kind::Id, _) => bad("an element id (a string)"),
        (Kind::StrOrList, _) => bad("a string or a list of strings"),
        (Kind::Bool, _) => bad("True or False"),
        (Kind::Choice(ok), _) => bad(&format!("one of {}", ok.join(", "))),
        (Kind::ChoiceList(ok), _) => bad(&format!("a list of {}", ok.join(", "))),
    }
}

struct Reader {
    chars: Vec<char>,
    pos: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn rest(&self) -> String {
        self.chars[self.pos.min(self.chars.len())..]
            .iter()
            .take(30)
            .collect()
    }

    fn unexpected(&self, name: &str, want: &str) -> ActionError {
        match self.peek() {
            None => ActionError::new(format!(
                "{name}: expected {want}, found the end (missing ')'?)"
            )),
            Some(c) => ActionError::new(format!("{name}: expected {want}, found {c:?}")),
        }
    }

    fn ident(&mut self) -> Option<String> {
        let start = self.pos;
        if !self.peek().is_some_and(|c| c.is_alphabetic() || c == '_') {
            return None;
        }
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        Some(self.chars[start..self.pos].iter().collect())
    }

    fn dotted_name(&mut self) -> Result<String, ActionError> {
        let mut name = self.ident().ok_or_else(|| {
            ActionError::new(format!("expected an action name, found {:?}", self.rest()))
        })?;
        while self.peek() == Some('.') {
            self.pos += 1;
            let part = self
                .ident()
                .ok_or_else(|| ActionError::new(format!("expected a name after '{name}.'")))?;
            name.push('.');
            name.push_str(&part);
        }
        Ok(name)
    }

    fn value(&mut self, call: &str) -> Result<PyValue, ActionError> {
        self.skip_ws();
        let Some(c) = self.peek() else {
            return Err(self.unexpected(call, "a value"));
        };
        if c == '\'' || c == '"' {
            return self.string(call, false);
        }
        if (c == 'r' || c == 'R' || c == 'u' || c == 'U')
            && matches!(self.peek_at(1), Some('\'' | '"'))
        {
            self.pos += 1;
            return self.string(call, c == 'r' || c == 'R');
        }
        if c == '[' || c == '(' {
            let close = if c == '[' { ']' } else { ')' };
            self.pos += 1;
            let mut items = Vec::new();
            loop {
                self.skip_ws();
                if self.eat(close) {
                    return Ok(PyValue::List(items));
                }
                items.push(self.value(call)?);
                self.skip_ws();
                if self.eat(',') {
                    continue;
                }
                if self.eat(close) {
                    return Ok(PyValue::List(items));
                }
                return Err(self.unexpected(call, &format!("',' or '{close}'")));
            }
        }
        if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' {
            return self.number(call);
        }
        if let Some(word) = self.ident() {
            return match word.as_str() {
                "True" => Ok(PyValue::Bool(true)),
                "False" => Ok(PyValue::Bool(false)),
                "None" => Ok(PyValue::None),
                _ => Err(ActionError::new(format!(
                    "{call}: '{word}' is not a literal (only strings, numbers, True/False/None and lists are accepted)"
                ))),
            };
        }
        Err(self.unexpected(call, "a value"))
    }

    fn number(&mut self, call: &str) -> Result<PyValue, ActionError> {
        let start = self.pos;
        if matches!(self.peek(), Some('-' | '+')) {
            self.pos += 1;
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_')
            || (matches!(self.peek(), Some('-' | '+'))
                && matches!(self.chars.get(self.pos.wrapping_sub(1)), Some('e' | 'E')))
        {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos]
            .iter()
            .filter(|&&c| c != '_')
            .collect();
        if let Ok(i) = text.parse::<i64>() {
            return Ok(PyValue::Int(i));
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() && !text.contains(['i', 'I', 'n', 'N']) => Ok(PyValue::Float(f)),
            _ => Err(ActionError::new(format!("{call}: bad number {text:?}"))),
        }
    }

    fn string(&mut self, call: &str, raw: bool) -> Result<PyValue, ActionError> {
        let quote = self.chars[self.pos];
        let triple = self.peek_at(1) == Some(quote) && self.peek_at(2) == Some(quote);
        self.pos += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(ActionError::new(format!("{call}: unterminated string")));
            };
            self.pos += 1;
            if c == quote
                && (!triple || (self.peek() == Some(quote) && self.peek_at(1) == Some(quote)))
            {
                if triple {
                    self.pos += 2;
                }
                return Ok(PyValue::Str(out));
            }
            if c == '\n' && !triple {
                return Err(ActionError::new(format!("{call}: unterminated string")));
            }
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(e) = self.peek() else {
                return Err(ActionError::new(format!("{call}: unterminated string")));
            };
            self.pos += 1;
            if raw {
                out.push('\\');
                out.push(e);
                continue;
            }
            match e {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                '\n' => {}
                '\\' | '\'' | '"' => out.push(e),
                'x' | 'u' | 'U' => {
                    let n = match e {
                        'x' => 2,
                        'u' => 4,
                        _ => 8,
                    };
                    let hex: String = self.chars[self.pos..].iter().take(n).collect();
                    let ch = u32::from_str_radix(&hex, 16)
                        .ok()
                        .filter(|_| hex.len() == n)
                        .and_then(char::from_u32)
                        .ok_or_else(|| {
                            ActionError::new(format!("{call}: bad escape \\{e}{hex}"))
                        })?;
                    self.pos += n;
                    out.push(ch);
                }
                other => {
                    out.push('\\');
                    out.push(other);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_literals_and_keywords() {
        let c = parse_call(
            r#"fill("45", 'hello \"x\"\n', n=-3, f=1.5e2, b=True, z=None, l=['a', (1, 2)])"#,
        )
        .unwrap();
        assert_eq!(c.name, "fill");
        assert_eq!(
            c.args,
            [
                PyValue::Str("45".into()),
                PyValue::Str("hello \"x\"\n".into())
            ]
        );
        assert_eq!(c.kwargs[0], ("n".into(), PyValue::Int(-3)));
        assert_eq!(c.kwargs[1], ("f".into(), PyValue::Float(150.0)));
        assert_eq!(c.kwargs[2], ("b".into(), PyValue::Bool(true)));
        assert_eq!(c.kwargs[3], ("z".into(), PyValue::None));
        assert_eq!(
            c.kwargs[4].1,
            PyValue::List(vec![
                PyValue::Str("a".into()),
                PyValue::List(vec![PyValue::Int(1), PyValue::Int(2)])
            ])
        );
        let c = parse_call("pyautogui.hotkey('ctrl', 'c',)").unwrap();
        assert_eq!(c.name, "pyautogui.hotkey");
        assert_eq!(c.args.len(), 2);
        assert_eq!(parse_call("go_back()").unwrap().args, []);
        assert_eq!(
            parse_call(r"f(r'a\d', '''x'y''', '\u00e9')").unwrap().args,
            [
                PyValue::Str(r"a\d".into()),
                PyValue::Str("x'y".into()),
                PyValue::Str("é".into())
            ]
        );
    }

    #[test]
    fn rejects_non_literals() {
        for (bad, says) in [
            ("click(x)", "'x' is not a literal"),
            ("click('1'", "missing ')'"),
            ("click('1) ", "unterminated string"),
            ("click", "not a call"),
            ("click('1') + 1", "after the call"),
            ("f(a=1, 2)", "positional argument after keyword"),
            ("f(1.2.3)", "bad number"),
            ("f(os.system('x'))", "not a literal"),
            ("", "expected an action name"),
        ] {
            let err = parse_call(bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
