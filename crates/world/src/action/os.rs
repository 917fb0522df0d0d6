//! OS actions: the pyautogui subset OSWorld agents write, plus the `WAIT` / `DONE` / `FAIL`
//! control words.
//!
//! Source: OSWorld's action space `pyautogui` (xlang-ai/OSWorld, `desktop_env`) and the
//! pyautogui API (<https://pyautogui.readthedocs.io>): `click`, `doubleClick`, `tripleClick`,
//! `rightClick`, `middleClick`, `moveTo`, `moveRel`, `dragTo`, `dragRel`, `mouseDown`,
//! `mouseUp`, `scroll`, `hscroll`, `vscroll`, `typewrite`, `write`, `press`, `hotkey`,
//! `keyDown`, `keyUp`. Statements are separated by newlines or `;`. `import pyautogui`,
//! `import time`, `time.sleep(s)`, blank lines and `#` comments are accepted too; anything
//! else is an error naming the line. Nothing is ever executed.

use super::ActionError;
use super::pycall::{Kind, Param, PyValue, Signature, opt, parse_call, req};

const BUTTONS: &[&str] = &["left", "middle", "right", "primary", "secondary"];

const fn sig(name: &'static str, params: &'static [Param]) -> Signature {
    Signature {
        name,
        params,
        varargs: false,
    }
}

const CLICK: &[Param] = &[
    opt("x", Kind::Num),
    opt("y", Kind::Num),
    opt("clicks", Kind::Int),
    opt("interval", Kind::Num),
    opt("button", Kind::Choice(BUTTONS)),
    opt("duration", Kind::Num),
];
/// `doubleClick` / `tripleClick`: a point, the gap between clicks, the button, the move time.
const MULTI_CLICK: &[Param] = &[
    opt("x", Kind::Num),
    opt("y", Kind::Num),
    opt("interval", Kind::Num),
    opt("button", Kind::Choice(BUTTONS)),
    opt("duration", Kind::Num),
];
/// `moveRel`: an offset and the move time.
const OFFSET: &[Param] = &[
    opt("xOffset", Kind::Num),
    opt("yOffset", Kind::Num),
    opt("duration", Kind::Num),
];
const POINT: &[Param] = &[
    opt("x", Kind::Num),
    opt("y", Kind::Num),
    opt("duration", Kind::Num),
];
const TEXT: &[Param] = &[req("message", Kind::StrOrList), opt("interval", Kind::Num)];
const SCROLL: &[Param] = &[
    req("clicks", Kind::Num),
    opt("x", Kind::Num),
    opt("y", Kind::Num),
];
const BUTTON_AT: &[Param] = &[
    opt("x", Kind::Num),
    opt("y", Kind::Num),
    opt("button", Kind::Choice(BUTTONS)),
    opt("duration", Kind::Num),
];

/// The pyautogui functions accepted, without the `pyautogui.` prefix.
pub const PYAUTOGUI: &[Signature] = &[
    sig("click", CLICK),
    sig("doubleClick", MULTI_CLICK),
    sig("tripleClick", MULTI_CLICK),
    sig("rightClick", POINT),
    sig("middleClick", POINT),
    sig("moveTo", POINT),
    sig("moveRel", OFFSET),
    sig("dragTo", BUTTON_AT),
    sig(
        "dragRel",
        &[
            opt("xOffset", Kind::Num),
            opt("yOffset", Kind::Num),
            opt("duration", Kind::Num),
            opt("button", Kind::Choice(BUTTONS)),
        ],
    ),
    sig("mouseDown", BUTTON_AT),
    sig("mouseUp", BUTTON_AT),
    sig("scroll", SCROLL),
    sig("hscroll", SCROLL),
    sig("vscroll", SCROLL),
    sig("typewrite", TEXT),
    sig("write", TEXT),
    sig(
        "press",
        &[
            req("keys", Kind::StrOrList),
            opt("presses", Kind::Int),
            opt("interval", Kind::Num),
        ],
    ),
    Signature {
        name: "hotkey",
        params: &[req("keys", Kind::Str)],
        varargs: true,
    },
    sig("keyDown", &[req("key", Kind::Str)]),
    sig("keyUp", &[req("key", Kind::Str)]),
];

/// One statement of an OS action.
#[derive(Debug, Clone, PartialEq)]
pub enum OsStep {
    /// A pyautogui call: the function (no prefix) and its arguments by parameter name.
    Call {
        /// `click`, `hotkey`, …
        name: String,
        /// Given arguments, in parameter order.
        args: Vec<(String, PyValue)>,
    },
    /// `time.sleep(seconds)`.
    Sleep(f64),
}

impl OsStep {
    /// The screen point a call acts at, when it gives both `x` and `y`.
    pub fn point(&self) -> Option<(f64, f64)> {
        let OsStep::Call { args, .. } = self else {
            return None;
        };
        let get = |k: &str| {
            args.iter()
                .find(|(n, _)| n == k)
                .and_then(|(_, v)| v.as_f64())
        };
        Some((get("x")?, get("y")?))
    }
}

/// A parsed OS action.
#[derive(Debug, Clone, PartialEq)]
pub enum OsAction {
    /// pyautogui code: the statements, in order.
    Code(Vec<OsStep>),
    /// `WAIT`: let time pass.
    Wait,
    /// `DONE`: the task is finished.
    Done,
    /// `FAIL`: the task cannot be done.
    Fail,
}

/// Parses OS action text: a control word, or pyautogui statements.
pub fn parse(text: &str) -> Result<OsAction, ActionError> {
    match text.trim() {
        "WAIT" => return Ok(OsAction::Wait),
        "DONE" => return Ok(OsAction::Done),
        "FAIL" => return Ok(OsAction::Fail),
        _ => {}
    }
    let mut steps = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for stmt in split_statements(line) {
            let stmt = stmt.trim();
            if stmt.is_empty() || stmt.starts_with('#') {
                continue;
            }
            if let Some(step) =
                statement(stmt).map_err(|e| ActionError::new(format!("line {}: {e}", n + 1)))?
            {
                steps.push(step);
            }
        }
    }
    if steps.is_empty() {
        return Err(ActionError::new(
            "no pyautogui call (expected code, WAIT, DONE or FAIL)",
        ));
    }
    Ok(OsAction::Code(steps))
}

fn statement(stmt: &str) -> Result<Option<OsStep>, ActionError> {
    if matches!(stmt, "import pyautogui" | "import time") {
        return Ok(None);
    }
    if !stmt.contains('(') {
        return Err(ActionError::new(format!(
            "not a pyautogui call: {:?}",
            stmt.chars().take(40).collect::<String>()
        )));
    }
    let call = parse_call(stmt)?;
    if call.name == "time.sleep" {
        const SLEEP: Signature = Signature {
            name: "time.sleep",
            params: &[req("secs", Kind::Num)],
            varargs: false,
        };
        let secs = SLEEP.bind(&call)?;
        let s = secs[0].1.as_f64().unwrap_or(0.0);
        if s < 0.0 {
            return Err(ActionError::new(
                "time.sleep: argument 1 (secs) must not be negative",
            ));
        }
        return Ok(Some(OsStep::Sleep(s)));
    }
    let Some(name) = call.name.strip_prefix("pyautogui.") else {
        return Err(ActionError::new(format!(
            "'{}' is not a pyautogui call",
            call.name
        )));
    };
    let Some(sig) = PYAUTOGUI.iter().find(|s| s.name == name) else {
        return Err(
            super::web::unknown(name, PYAUTOGUI.iter().map(|s| s.name)).prefixed("pyautogui")
        );
    };
    let args = sig.bind(&call)?;
    if matches!(
        name,
        "click"
            | "doubleClick"
            | "rightClick"
            | "moveTo"
            | "dragTo"
            | "tripleClick"
            | "middleClick"
    ) {
        let has = |k| args.iter().any(|(n, _)| *n == k);
        if has("x") != has("y") {
            return Err(ActionError::new(format!(
                "{name}: x and y must be given together"
            )));
        }
    }
    Ok(Some(OsStep::Call {
        name: name.to_string(),
        args: args.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    }))
}

/// Splits a line at `;` outside string literals, dropping a trailing `#` comment.
fn split_statements(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut literals = super::Literals::default();
    let mut start = 0;
    let mut end = line.len();
    for (i, c) in line.char_indices() {
        if literals.inside(c) {
            continue;
        }
        if c == '#' {
            end = i;
            break;
        }
        if c == ';' {
            out.push(&line[start..i]);
            start = i + 1;
        }
    }
    out.push(&line[start..end]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn parses_code_and_control_words() {
        assert_eq!(parse(" WAIT\n").unwrap(), OsAction::Wait);
        assert_eq!(parse("DONE").unwrap(), OsAction::Done);
        assert_eq!(parse("FAIL").unwrap(), OsAction::Fail);
        let code = "import pyautogui\nimport time\npyautogui.click(100, 200); time.sleep(0.5)\n\
                    pyautogui.typewrite('a;b # not a comment', interval=0.1)  # comment\n\
                    pyautogui.hotkey('ctrl', 'shift', 't')\npyautogui.press(['enter', 'tab'])\n\
                    pyautogui.scroll(-5, x=10, y=20)\npyautogui.dragTo(300, 400, duration=1.0, button='left')\n\
                    pyautogui.keyDown('shift'); pyautogui.keyUp('shift')\npyautogui.write(\"x\")\n\
                    pyautogui.doubleClick(x=1, y=2)\npyautogui.rightClick()\npyautogui.moveTo(5, 6)";
        let OsAction::Code(steps) = parse(code).unwrap() else {
            panic!("code")
        };
        assert_eq!(steps.len(), 13);
        assert_eq!(steps[0].point(), Some((100.0, 200.0)));
        assert_eq!(steps[1], OsStep::Sleep(0.5));
        let OsStep::Call { name, args } = &steps[2] else {
            panic!()
        };
        assert_eq!(name, "typewrite");
        assert_eq!(args[0].1, PyValue::Str("a;b # not a comment".into()));
        let OsStep::Call { args, .. } = &steps[3] else {
            panic!()
        };
        assert_eq!(args[0].1.type_name(), "list");
    }

    #[test]
    fn errors_name_the_line_and_argument() {
        assert_eq!(
            err("pyautogui.click(1, 2)\nimport os"),
            "line 2: not a pyautogui call: \"import os\""
        );
        assert!(
            err("os.system('rm -rf /')").contains("line 1: 'os.system' is not a pyautogui call")
        );
        assert!(err("pyautogui.clik(1, 2)").contains("did you mean click?"));
        assert!(err("pyautogui.click('a', 2)").contains("click: argument 1 (x) must be a number"));
        assert!(err("pyautogui.click(1)").contains("x and y must be given together"));
        assert!(err("pyautogui.typewrite()").contains("argument 1 (message) missing"));
        assert!(err("pyautogui.click(1, 2, button='side')").contains("argument 5 (button)"));
        assert!(err("x = 1").contains("line 1"));
        assert!(err("for i in range(3): pyautogui.click(1, 2)").contains("line 1"));
        assert!(err("time.sleep(-1)").contains("must not be negative"));
        assert!(err("").contains("no pyautogui call"));
        assert!(err("# only a comment").contains("no pyautogui call"));
    }
}
