//! The desktop model: a flat list of nodes (OSWorld's table is flat), the behaviour of our own
//! controls, the `osworld-tsv` rendering and exact transitions for pyautogui actions.
//!
//! State conventions (all in columns the `osworld-tsv` parser keeps):
//! - a check box's `description` is `checked` or `unchecked`;
//! - the text field with the keyboard focus has `description` `focused` (at most one);
//! - a disabled button has `description` `disabled`;
//! - the `text` column is always quoted (`""` when empty), as OSWorld writes it.
//!
//! Hit testing: a click at (x, y) lands on the last node in table order whose box contains the
//! point (later rows are drawn on top; a window's controls follow its frame).

use crate::action::os::{OsAction, OsStep, parse};
use crate::action::pycall::PyValue;
use crate::state::StateParser;
use crate::state::formats::{Atspi, OSWORLD_TSV_HEADER};

/// The apps of the mini desktop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppKind {
    /// A text editor: one text field.
    Editor,
    /// A settings dialog: check boxes and a disabled button.
    Settings,
    /// A file list.
    Files,
    /// A find dialog (held out: only in test rows, never launched).
    Find,
}

impl AppKind {
    /// The launcher's name on the panel.
    pub fn launcher_name(self) -> &'static str {
        match self {
            AppKind::Editor => "Text Editor",
            AppKind::Settings => "Settings",
            AppKind::Files => "Files",
            AppKind::Find => "Find",
        }
    }

    /// A short key used in source names.
    pub fn key(self) -> &'static str {
        match self {
            AppKind::Editor => "editor",
            AppKind::Settings => "settings",
            AppKind::Files => "files",
            AppKind::Find => "find",
        }
    }
}

/// What a click on a node does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Nothing (labels, list items, real-tree nodes).
    Static,
    /// A window frame of this app (a click on it changes nothing).
    Frame(AppKind),
    /// A panel button opening this app's window (nothing when one is already open).
    Launcher(AppKind),
    /// A window's close button: removes the window's rows.
    Close,
    /// A check box: toggles `checked` / `unchecked`.
    CheckBox,
    /// A text field: takes the focus; typing appends to the focused field.
    Field,
    /// A disabled control: nothing.
    Disabled,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopNode {
    /// AT-SPI role with dashes (`push-button`).
    pub tag: String,
    /// Accessible name.
    pub name: String,
    /// Text content.
    pub text: String,
    /// Class column (usually empty).
    pub class: String,
    /// Description column (also carries `checked` / `unchecked` / `focused` / `disabled`).
    pub description: String,
    /// x, y, width, height; `None` writes empty geometry columns.
    pub bounds: Option<(i32, i32, i32, i32)>,
    /// Behaviour on click.
    pub control: Control,
    /// The window the node belongs to (closing it removes the node).
    pub window: Option<u32>,
}

impl DesktopNode {
    /// A node with empty text, class and description.
    pub fn new(tag: &str, name: &str, bounds: (i32, i32, i32, i32), control: Control) -> Self {
        DesktopNode {
            tag: tag.into(),
            name: name.into(),
            text: String::new(),
            class: String::new(),
            description: String::new(),
            bounds: Some(bounds),
            control,
            window: None,
        }
    }

    /// The click point: the centre of the box.
    pub fn center(&self) -> Option<(i32, i32)> {
        let (x, y, w, h) = self.bounds?;
        (w > 0 && h > 0).then_some((x + w / 2, y + h / 2))
    }

    fn contains(&self, px: i32, py: i32) -> bool {
        self.bounds
            .is_some_and(|(x, y, w, h)| px >= x && px < x + w && py >= y && py < y + h)
    }
}

/// A desktop: rows in table order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DesktopTree {
    /// The rows, drawn in order (later on top).
    pub nodes: Vec<DesktopNode>,
}

/// Replaces tabs and line breaks by spaces and drops leading quotes, so a plain column
/// reads back as written.
fn plain(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if matches!(c, '\t' | '\n' | '\r') {
                ' '
            } else {
                c
            }
        })
        .collect();
    s.trim_start_matches('"').trim().to_string()
}

impl DesktopTree {
    /// The `osworld-tsv` table: the header, then one row per node.
    pub fn to_tsv(&self) -> String {
        let mut out = String::from(OSWORLD_TSV_HEADER);
        for n in &self.nodes {
            let text = n.text.replace(['\t', '\n', '\r'], " ").replace('"', "\"\"");
            let (at, size) = match n.bounds {
                Some((x, y, w, h)) => (format!("({x}, {y})"), format!("({w}, {h})")),
                None => (String::new(), String::new()),
            };
            out.push_str(&format!(
                "\n{}\t{}\t\"{text}\"\t{}\t{}\t{at}\t{size}",
                plain(&n.tag),
                plain(&n.name),
                plain(&n.class),
                plain(&n.description),
            ));
        }
        out
    }

    /// A desktop from an AT-SPI XML tree (at-spi2-core fixture form): every node static, role
    /// spaces written as dashes. Any reader warning (malformed XML) is an error.
    pub fn from_atspi(xml: &str) -> Result<DesktopTree, String> {
        let parsed = Atspi.parse(xml).map_err(|e| e.to_string())?;
        if let Some(w) = parsed.warnings.first() {
            return Err(format!("line {}: {}", w.line, w.message));
        }
        Ok(DesktopTree::from_tree(&parsed.tree))
    }

    /// A desktop from any parsed desktop tree (AT-SPI, OSWorld XML): every node static, in
    /// tree order, role spaces written as dashes, `description` from the attribute of that name.
    pub fn from_tree(tree: &crate::state::StateTree) -> DesktopTree {
        let nodes = tree
            .nodes
            .iter()
            .map(|n| DesktopNode {
                tag: plain(&n.role).replace(' ', "-"),
                name: plain(&n.name),
                text: n.text.clone(),
                class: String::new(),
                description: plain(n.attr("description").unwrap_or_default()),
                bounds: n.bounds.map(|r| (r.left, r.top, r.width(), r.height())),
                control: Control::Static,
                window: None,
            })
            .collect();
        DesktopTree { nodes }
    }

    /// The node a click at (x, y) lands on: the last one whose box contains the point.
    pub fn hit(&self, x: i32, y: i32) -> Option<usize> {
        self.nodes.iter().rposition(|n| n.contains(x, y))
    }

    /// The focused text field.
    pub fn focused(&self) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.control == Control::Field && n.description == "focused")
    }

    /// Whether a window of `kind` is open.
    pub fn is_open(&self, kind: AppKind) -> bool {
        self.nodes.iter().any(|n| n.control == Control::Frame(kind))
    }

    /// The title of the window a node belongs to.
    pub fn window_title(&self, i: usize) -> Option<&str> {
        let w = self.nodes.get(i)?.window?;
        self.nodes
            .iter()
            .find(|n| n.window == Some(w) && matches!(n.control, Control::Frame(_)))
            .map(|n| n.name.as_str())
    }

    /// Adds a window: its frame and close button; returns its id.
    pub fn push_window(&mut self, kind: AppKind, title: &str, b: (i32, i32, i32, i32)) -> u32 {
        let id = self
            .nodes
            .iter()
            .filter_map(|n| n.window)
            .max()
            .map_or(1, |m| m + 1);
        let (x, y, w, _) = b;
        let mut frame = DesktopNode::new("frame", title, b, Control::Frame(kind));
        frame.window = Some(id);
        let mut close = DesktopNode::new(
            "push-button",
            "Close",
            (x + w - 32, y + 4, 28, 24),
            Control::Close,
        );
        close.window = Some(id);
        self.nodes.push(frame);
        self.nodes.push(close);
        id
    }

    /// Adds a control to window `id`.
    pub fn push_in(&mut self, id: u32, mut node: DesktopNode) {
        node.window = Some(id);
        self.nodes.push(node);
    }

    /// Opens `kind`'s window with its default contents, placed from the launcher's box: x =
    /// launcher x + 40 (kept on a 1920-wide screen), y = 80.
    pub fn launch(&mut self, kind: AppKind, launcher: (i32, i32, i32, i32)) {
        let (w, h) = match kind {
            AppKind::Editor => (480, 300),
            AppKind::Settings => (360, 200),
            AppKind::Files | AppKind::Find => (400, 240),
        };
        let x = (launcher.0 + 40).min(1920 - w);
        let y = 80;
        match kind {
            AppKind::Editor => {
                let id = self.push_window(kind, "Untitled - Text Editor", (x, y, w, h));
                let field =
                    DesktopNode::new("text", "", (x + 8, y + 36, w - 16, h - 44), Control::Field);
                self.push_in(id, field);
            }
            AppKind::Settings => {
                let id = self.push_window(kind, "Settings", (x, y, w, h));
                for (k, (name, on)) in [("Dark Mode", false), ("Notifications", true)]
                    .iter()
                    .enumerate()
                {
                    let mut c = DesktopNode::new(
                        "check-box",
                        name,
                        (x + 16, y + 44 + 32 * k as i32, 200, 24),
                        Control::CheckBox,
                    );
                    c.description = if *on { "checked" } else { "unchecked" }.into();
                    self.push_in(id, c);
                }
                let mut apply = DesktopNode::new(
                    "push-button",
                    "Apply",
                    (x + w - 100, y + h - 40, 84, 28),
                    Control::Disabled,
                );
                apply.description = "disabled".into();
                self.push_in(id, apply);
            }
            AppKind::Files => {
                let id = self.push_window(kind, "Home - Files", (x, y, w, h));
                for (k, name) in ["Documents", "Downloads"].iter().enumerate() {
                    let b = (x + 8, y + 40 + 28 * k as i32, w - 16, 24);
                    self.push_in(id, DesktopNode::new("list-item", name, b, Control::Static));
                }
            }
            AppKind::Find => {
                let id = self.push_window(kind, "Find", (x, y, w, h));
                let b = (x + 16, y + 40, w - 32, 28);
                self.push_in(id, DesktopNode::new("text", "Search", b, Control::Field));
                let mut c = DesktopNode::new(
                    "check-box",
                    "Match case",
                    (x + 16, y + 80, 160, 24),
                    Control::CheckBox,
                );
                c.description = "unchecked".into();
                self.push_in(id, c);
                let mut f = DesktopNode::new(
                    "push-button",
                    "Find",
                    (x + w - 100, y + h - 40, 84, 28),
                    Control::Disabled,
                );
                f.description = "disabled".into();
                self.push_in(id, f);
            }
        }
    }

    /// A click at (x, y), exactly (see the module docs).
    pub fn click(&mut self, x: i32, y: i32) {
        let Some(i) = self.hit(x, y) else { return };
        match self.nodes[i].control {
            Control::Static | Control::Frame(_) | Control::Disabled => {}
            Control::CheckBox => {
                let d = &mut self.nodes[i].description;
                *d = if d == "checked" {
                    "unchecked"
                } else {
                    "checked"
                }
                .into();
            }
            Control::Field => {
                for (j, n) in self.nodes.iter_mut().enumerate() {
                    if n.control == Control::Field {
                        n.description = if j == i {
                            "focused".into()
                        } else {
                            String::new()
                        };
                    }
                }
            }
            Control::Close => {
                let w = self.nodes[i].window;
                self.nodes.retain(|n| n.window != w);
            }
            Control::Launcher(kind) => {
                if !self.is_open(kind)
                    && let Some(b) = self.nodes[i].bounds
                {
                    self.launch(kind, b);
                }
            }
        }
    }

    /// The state after an action: clicks (left button, one click, at a point), `moveTo`,
    /// `typewrite`/`write` of a string (appended to the focused field; nothing without one),
    /// `press('backspace')` (deletes the focused field's last character), `hotkey('ctrl',
    /// 'c')` (nothing visible), `time.sleep`, `WAIT`, `DONE`, `FAIL` (nothing). Anything else
    /// is an error: its effect is not modelled.
    pub fn apply(&self, action: &str) -> Result<DesktopTree, String> {
        let mut next = self.clone();
        let steps = match parse(action).map_err(|e| e.to_string())? {
            OsAction::Code(steps) => steps,
            OsAction::Wait | OsAction::Done | OsAction::Fail => return Ok(next),
        };
        for step in &steps {
            let OsStep::Call { name, args } = step else {
                continue;
            };
            let arg = |k: &str| args.iter().find(|(n, _)| n == k).map(|(_, v)| v);
            let unsupported = || Err(format!("{name}: effect not modelled"));
            match name.as_str() {
                "click" => {
                    let button_ok = arg("button").is_none_or(
                        |b| matches!(b, PyValue::Str(s) if s == "left" || s == "primary"),
                    );
                    let once = arg("clicks").is_none_or(|c| c.as_f64() == Some(1.0));
                    match step.point() {
                        Some((x, y)) if button_ok && once => {
                            next.click(x.round() as i32, y.round() as i32)
                        }
                        _ => return unsupported(),
                    }
                }
                "moveTo" => {}
                "typewrite" | "write" => match arg("message") {
                    Some(PyValue::Str(s)) => {
                        if let Some(f) = next.focused() {
                            next.nodes[f].text.push_str(s);
                        }
                    }
                    _ => return unsupported(),
                },
                "press" => match (arg("keys"), arg("presses")) {
                    (Some(PyValue::Str(k)), None) if k == "backspace" => {
                        if let Some(f) = next.focused() {
                            next.nodes[f].text.pop();
                        }
                    }
                    _ => return unsupported(),
                },
                "hotkey" => {
                    // varargs may come bound as one list
                    let keys: Vec<String> = args
                        .iter()
                        .flat_map(|(_, v)| match v {
                            PyValue::List(l) => l.clone(),
                            other => vec![other.clone()],
                        })
                        .map(|v| match v {
                            PyValue::Str(s) => s.to_lowercase(),
                            _ => String::new(),
                        })
                        .collect();
                    if keys != ["ctrl", "c"] {
                        return unsupported();
                    }
                }
                _ => return unsupported(),
            }
        }
        Ok(next)
    }
}
