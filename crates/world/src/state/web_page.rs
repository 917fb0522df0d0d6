//! Web pages as the demo world model reads them: a page model (pages as flat node lists),
//! real HTML folded into it ([`html`]), and its rendering as BrowserGym accessibility-tree
//! text (`axtree`). [`html_to_axtree`] turns any HTML page into that text; the training-data
//! generators (`agentworld-data`) build their pages and apply actions on the same model.

pub mod html;
#[cfg(test)]
mod tests;

use crate::Result;

/// Where activating a node leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Nowhere we know of (a plain element, or a real page's link to the outside).
    None,
    /// Another page of the same site (an index into the site's list of pages).
    Page(usize),
    /// The form's submit button: leads to a confirmation page built from the form's values.
    Submit,
}

/// One element of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Depth under the `RootWebArea` (its children are 0).
    pub depth: usize,
    /// The BrowserGym id (`None` for `StaticText`).
    pub bid: Option<String>,
    /// The accessibility role (`textbox`, `checkbox`, `link`, …).
    pub role: &'static str,
    /// The accessible name (the text for `StaticText`).
    pub name: String,
    /// A textbox's text or a combobox's selected option.
    pub value: Option<String>,
    /// A checkbox's state, or whether an option is selected.
    pub checked: Option<bool>,
    /// Disabled elements ignore every action.
    pub disabled: bool,
    /// Whether the element has keyboard focus.
    pub focused: bool,
    /// Where clicking it leads.
    pub target: Target,
}

impl Node {
    /// A node with only depth, role and name set: no bid or value, unchecked flags, enabled,
    /// unfocused, leading nowhere.
    pub fn new(depth: usize, role: &'static str, name: impl Into<String>) -> Node {
        Node {
            depth,
            bid: None,
            role,
            name: name.into(),
            value: None,
            checked: None,
            disabled: false,
            focused: false,
            target: Target::None,
        }
    }
}

/// A page: its title (the `RootWebArea` name) and its elements in document order.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// The `RootWebArea` name.
    pub title: String,
    /// The elements in document order.
    pub nodes: Vec<Node>,
}

impl Page {
    /// The node with this bid.
    pub fn find(&self, bid: &str) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.bid.as_deref() == Some(bid))
    }

    /// Numbers every node but `StaticText` in document order, from `base`, skipping a number
    /// after a node when `gap(i)` says so; nodes under an `iframe` get a frame letter prefix.
    pub fn assign_bids(&mut self, base: usize, mut gap: impl FnMut() -> bool) {
        let mut n = base;
        let mut frames = 0u8;
        // (depth of the iframe, its prefix)
        let mut stack: Vec<(usize, String)> = Vec::new();
        let mut counters: Vec<usize> = Vec::new();
        for node in &mut self.nodes {
            while stack.last().is_some_and(|(d, _)| *d >= node.depth) {
                stack.pop();
                counters.pop();
            }
            if node.role != "StaticText" {
                let id = match (stack.last(), counters.last_mut()) {
                    (Some((_, p)), Some(c)) => {
                        *c += 1;
                        format!("{p}{}", *c - 1)
                    }
                    _ => {
                        n += 1 + usize::from(gap());
                        (n - 1).to_string()
                    }
                };
                node.bid = Some(id);
            }
            if node.role == "iframe" {
                let p = char::from(b'a' + frames % 26).to_string();
                frames += 1;
                stack.push((node.depth, p));
                counters.push(0);
            }
        }
    }

    /// The largest numeric bid (0 when none).
    pub fn max_bid(&self) -> usize {
        self.nodes
            .iter()
            .filter_map(|n| n.bid.as_deref()?.parse::<usize>().ok())
            .max()
            .unwrap_or(0)
    }
}

/// A Python string literal as `repr()` writes it
/// ([`agentworld_text::chat_template::py_str_repr`]).
pub fn py_str(s: &str) -> String {
    agentworld_text::chat_template::py_str_repr(s)
}

/// The page as BrowserGym accessibility-tree text.
pub fn render(page: &Page) -> String {
    let mut out = format!("RootWebArea {}", py_str(&page.title));
    if !page.nodes.iter().any(|n| n.focused) {
        out.push_str(", focused");
    }
    for n in &page.nodes {
        out.push('\n');
        for _ in 0..=n.depth {
            out.push('\t');
        }
        if let Some(b) = &n.bid {
            out.push_str(&format!("[{b}] "));
        }
        out.push_str(n.role);
        out.push(' ');
        out.push_str(&py_str(&n.name));
        if let Some(v) = &n.value
            && (n.role != "textbox" || !v.is_empty())
        {
            out.push_str(&format!(", value={}", py_str(v)));
        }
        match (n.role, n.checked) {
            ("option", Some(true)) => out.push_str(", selected=True"),
            ("option", _) => {}
            (_, Some(c)) => out.push_str(&format!(", checked='{c}'")),
            _ => {}
        }
        if n.focused {
            out.push_str(", focused");
        }
        if n.disabled {
            out.push_str(", disabled=True");
        }
    }
    out
}

/// An HTML page as the BrowserGym accessibility-tree text the demo model reads (`axtree`):
/// headings, text, links, buttons, fields, selects, images and inline frames. A page that
/// carries BrowserGym's `bid` attributes keeps them (elements without one are numbered after
/// the largest), so actions written against the page still name the same elements; otherwise
/// bids are numbered from 1 in document order (frame contents get a letter prefix), as
/// BrowserGym numbers a page it marks. `name` names the page in errors.
///
/// # Errors
/// [`crate::Error::Data`] naming the page when it cannot be read.
pub fn html_to_axtree(name: &str, html: &str) -> Result<String> {
    let mut page = html::page_from_html(name, html)?;
    if page.nodes.iter().any(|n| n.bid.is_some()) {
        let mut next = page.max_bid();
        for node in page.nodes.iter_mut().filter(|n| n.role != "StaticText") {
            if node.bid.is_none() {
                next += 1;
                node.bid = Some(next.to_string());
            }
        }
    } else {
        page.assign_bids(1, || false);
    }
    Ok(render(&page))
}
