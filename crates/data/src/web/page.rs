//! The page model behind the Web rows: the exact effect of each action on a page of
//! [`agentworld_world::state::web_page`] (pages as flat node lists, rendered as BrowserGym
//! accessibility-tree text).

pub(crate) use agentworld_world::state::web_page::{Node, Page, Target, py_str, render};

/// The actions the generator writes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Act {
    Click(String),
    Fill(String, String),
    Select(String, String),
    Type(String),
    Back,
}

impl Act {
    /// The BrowserGym call.
    pub(crate) fn text(&self) -> String {
        match self {
            Act::Click(b) => format!("click({})", py_str(b)),
            Act::Fill(b, v) => format!("fill({}, {})", py_str(b), py_str(v)),
            Act::Select(b, o) => format!("select_option({}, {})", py_str(b), py_str(o)),
            Act::Type(t) => format!("keyboard_type({})", py_str(t)),
            Act::Back => "go_back()".into(),
        }
    }
}

/// What an action did (for the row's `thinking`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Effect {
    Filled { bid: String, value: String },
    Selected { bid: String, option: String },
    Toggled { bid: String, checked: bool },
    Focused { bid: String },
    Typed { bid: String },
    Navigated { bid: String, title: String },
    Submitted { bid: String },
    Back { title: String },
    NoHistory,
    Disabled { bid: String, role: &'static str },
    Missing { bid: String },
    Inert { bid: String, role: &'static str },
    WrongKind { bid: String, role: &'static str },
    NoOption { bid: String, option: String },
    NoFocus,
}

impl Effect {
    /// Whether the page stayed exactly as it was.
    pub(crate) fn is_noop(&self) -> bool {
        matches!(
            self,
            Effect::NoHistory
                | Effect::Disabled { .. }
                | Effect::Missing { .. }
                | Effect::Inert { .. }
                | Effect::WrongKind { .. }
                | Effect::NoOption { .. }
                | Effect::NoFocus
        )
    }

    /// One sentence on the effect.
    pub(crate) fn thinking(&self) -> String {
        match self {
            Effect::Filled { bid, value } => format!(
                "[{bid}] is a textbox, so fill replaces its value with {}.",
                py_str(value)
            ),
            Effect::Selected { bid, option } => format!(
                "[{bid}] is a combobox with the option {}, so it becomes the selected value.",
                py_str(option)
            ),
            Effect::Toggled { bid, checked } => format!(
                "[{bid}] is a checkbox, so the click {} it.",
                if *checked { "checks" } else { "unchecks" }
            ),
            Effect::Focused { bid } => {
                format!("[{bid}] is a text field, so the click moves the focus to it.")
            }
            Effect::Typed { bid } => {
                format!("[{bid}] has the focus, so the typed text is appended to its value.")
            }
            Effect::Navigated { bid, title } => format!(
                "[{bid}] is a link to {}, so the browser shows that page.",
                py_str(title)
            ),
            Effect::Submitted { bid } => format!(
                "[{bid}] submits the form, so the browser shows the confirmation page with the entered values."
            ),
            Effect::Back { title } => format!(
                "go_back returns to the previous page, {}, as it was left.",
                py_str(title)
            ),
            Effect::NoHistory => "There is no earlier page, so go_back changes nothing.".into(),
            Effect::Disabled { bid, .. } => format!("[{bid}] is disabled, so nothing changes."),
            Effect::Missing { bid } => {
                format!("There is no element [{bid}] on the page, so nothing changes.")
            }
            Effect::Inert { bid, role } => {
                format!("[{bid}] is a {role} that does nothing when clicked, so nothing changes.")
            }
            Effect::WrongKind { bid, role } => format!(
                "[{bid}] is a {role}, not a field that takes this action, so nothing changes."
            ),
            Effect::NoOption { bid, option } => format!(
                "[{bid}] has no option {}, so nothing changes.",
                py_str(option)
            ),
            Effect::NoFocus => "No text field has the focus, so typing changes nothing.".into(),
        }
    }
}

/// The browser: the site's pages (their current state), the shown page and the history.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Browser {
    pub pages: Vec<Page>,
    pub current: usize,
    pub history: Vec<usize>,
}

impl Browser {
    pub(crate) fn new(pages: Vec<Page>) -> Browser {
        Browser {
            pages,
            current: 0,
            history: Vec::new(),
        }
    }

    /// The shown page.
    pub(crate) fn page(&self) -> &Page {
        &self.pages[self.current]
    }

    /// The shown page's text.
    pub(crate) fn render(&self) -> String {
        render(self.page())
    }

    fn go(&mut self, to: usize) {
        for n in &mut self.pages[self.current].nodes {
            n.focused = false;
        }
        self.history.push(self.current);
        self.current = to;
    }

    /// Applies `act` to the shown page, exactly as the page model defines it.
    pub(crate) fn apply(&mut self, act: &Act) -> Effect {
        let bid = match act {
            Act::Click(b) | Act::Fill(b, _) | Act::Select(b, _) => b.clone(),
            Act::Type(text) => {
                let page = &mut self.pages[self.current];
                return match page.nodes.iter_mut().find(|n| n.focused) {
                    Some(n) if n.role == "textbox" && !n.disabled => {
                        n.value.get_or_insert_with(String::new).push_str(text);
                        Effect::Typed {
                            bid: n.bid.clone().unwrap_or_default(),
                        }
                    }
                    _ => Effect::NoFocus,
                };
            }
            Act::Back => {
                return match self.history.pop() {
                    Some(prev) => {
                        for n in &mut self.pages[self.current].nodes {
                            n.focused = false;
                        }
                        self.current = prev;
                        Effect::Back {
                            title: self.page().title.clone(),
                        }
                    }
                    None => Effect::NoHistory,
                };
            }
        };
        let Some(i) = self.page().find(&bid) else {
            return Effect::Missing { bid };
        };
        let node = self.page().nodes[i].clone();
        if node.disabled {
            return Effect::Disabled {
                bid,
                role: node.role,
            };
        }
        let role = node.role;
        match act {
            Act::Click(_) => match (role, node.target) {
                ("checkbox", _) => {
                    let n = &mut self.pages[self.current].nodes[i];
                    let checked = !n.checked.unwrap_or(false);
                    n.checked = Some(checked);
                    Effect::Toggled { bid, checked }
                }
                ("textbox", _) => {
                    for (j, n) in self.pages[self.current].nodes.iter_mut().enumerate() {
                        n.focused = j == i;
                    }
                    Effect::Focused { bid }
                }
                (_, Target::Page(p)) if p < self.pages.len() => {
                    self.go(p);
                    Effect::Navigated {
                        bid,
                        title: self.page().title.clone(),
                    }
                }
                (_, Target::Submit) => {
                    let done = confirmation(self.page());
                    self.pages.push(done);
                    self.go(self.pages.len() - 1);
                    Effect::Submitted { bid }
                }
                _ => Effect::Inert { bid, role },
            },
            Act::Fill(_, value) => {
                if role != "textbox" {
                    return Effect::WrongKind { bid, role };
                }
                self.pages[self.current].nodes[i].value = Some(value.clone());
                Effect::Filled {
                    bid,
                    value: value.clone(),
                }
            }
            Act::Select(_, option) => {
                if role != "combobox" {
                    return Effect::WrongKind { bid, role };
                }
                let page = &mut self.pages[self.current];
                let opts: Vec<usize> = (i + 1..page.nodes.len())
                    .take_while(|&j| page.nodes[j].depth > node.depth)
                    .filter(|&j| page.nodes[j].role == "option")
                    .collect();
                if !opts.iter().any(|&j| page.nodes[j].name == *option) {
                    return Effect::NoOption {
                        bid,
                        option: option.clone(),
                    };
                }
                for &j in &opts {
                    let on = page.nodes[j].name == *option;
                    page.nodes[j].checked = Some(on);
                }
                page.nodes[i].value = Some(option.clone());
                Effect::Selected {
                    bid,
                    option: option.clone(),
                }
            }
            _ => Effect::Inert { bid, role },
        }
    }
}

/// The page a form's submission shows: a heading and one line per submitted value (enabled
/// fields with text, selections, checked boxes).
fn confirmation(form: &Page) -> Page {
    let mut nodes = vec![Node::new(0, "heading", "Thank you")];
    nodes.push(Node::new(0, "StaticText", "We received the following:"));
    // disabled fields are not submitted
    for n in form.nodes.iter().filter(|n| !n.disabled) {
        let line = match (n.role, &n.value, n.checked) {
            ("textbox" | "combobox", Some(v), _) if !v.is_empty() => format!("{}: {v}", n.name),
            ("checkbox", _, Some(true)) => format!("{}: yes", n.name),
            _ => continue,
        };
        nodes.push(Node::new(0, "StaticText", line));
    }
    let title = match form.title.split_once(" - ") {
        Some((site, _)) => format!("{site} - Received"),
        None => format!("{} - Received", form.title),
    };
    let mut page = Page { title, nodes };
    page.assign_bids(form.max_bid() + 1, || false);
    page
}
