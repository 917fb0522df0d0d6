//! Real HTML pages turned into the page model: the elements BrowserGym's accessibility tree
//! shows (headings, text, links, buttons, fields, selects, iframes), everything else folded.

use super::{Node, Page};
use crate::state::formats::Html;
use crate::state::{StateParser, StateTree};
use crate::{Error, Result};

/// The text of `i`'s subtree, whitespace collapsed.
fn text_of(t: &StateTree, i: usize) -> String {
    let words: Vec<&str> = (i..t.subtree_end(i))
        .filter(|&j| t.nodes[j].role == "#text")
        .flat_map(|j| t.nodes[j].text.split_whitespace())
        .collect();
    words.join(" ")
}

/// An `<input>` as a node (`None` for hidden inputs).
fn input(t: &StateTree, i: usize, depth: usize, label: Option<&str>) -> Option<Node> {
    let n = &t.nodes[i];
    let kind = n.attr("type").unwrap_or("text").to_ascii_lowercase();
    let name = label
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| n.name.clone());
    let mut node = match kind.as_str() {
        "hidden" => return None,
        "checkbox" | "radio" => Node {
            checked: Some(n.attr("checked").is_some()),
            ..Node::new(
                depth,
                if kind == "radio" { "radio" } else { "checkbox" },
                name,
            )
        },
        "submit" | "button" | "reset" | "image" => Node::new(
            depth,
            "button",
            n.attr("value").unwrap_or("Submit").to_string(),
        ),
        _ => Node {
            value: Some(n.attr("value").unwrap_or("").to_string()),
            ..Node::new(depth, "textbox", name)
        },
    };
    node.disabled = n.attr("disabled").is_some();
    Some(node)
}

/// Parses `html` (any input gives a DOM) and keeps what the accessibility tree shows; bids
/// are the page's own `bid` attributes where it has them, else unset. `name` names the page in
/// errors.
///
/// # Errors
/// [`Error::Data`] naming the page when it cannot be read.
pub fn page_from_html(name: &str, html: &str) -> Result<Page> {
    let t = Html
        .parse(html)
        .map_err(|e| Error::Data(format!("web page {name}: {e}")))?
        .tree;
    // the main document's title comes first (its head precedes any iframe)
    let title = (0..t.len())
        .find(|&i| t.nodes[i].role == "title")
        .map(|i| text_of(&t, i));
    let mut nodes = Vec::new();
    // For each node pushed, the HTML element it comes from (for its `bid` attribute).
    let mut sources: Vec<usize> = Vec::new();
    // The depth a node's children go to; `None`: its children are not shown.
    let mut child: Vec<Option<usize>> = vec![None; t.len()];
    for i in 0..t.len() {
        let n = &t.nodes[i];
        let base = match n.parent {
            None => Some(0),
            Some(p) => child.get(p).copied().flatten(),
        };
        let Some(d) = base else { continue };
        match n.role.as_str() {
            "head" | "title" | "script" | "style" | "template" | "noscript" | "meta" | "link" => {}
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                nodes.push(Node::new(d, "heading", text_of(&t, i)));
            }
            "a" => {
                let text = text_of(&t, i);
                let label = if text.is_empty() {
                    n.name.clone()
                } else {
                    text
                };
                nodes.push(Node::new(d, "link", label));
            }
            "button" => nodes.push(Node::new(d, "button", text_of(&t, i))),
            "input" => nodes.extend(input(&t, i, d, None)),
            "textarea" => nodes.push(Node {
                value: Some(text_of(&t, i)),
                disabled: n.attr("disabled").is_some(),
                ..Node::new(d, "textbox", n.name.clone())
            }),
            "select" => {
                let opts: Vec<usize> = (i..t.subtree_end(i))
                    .filter(|&j| t.nodes[j].role == "option")
                    .collect();
                let sel = opts
                    .iter()
                    .find(|&&j| t.nodes[j].attr("selected").is_some())
                    .or(opts.first())
                    .map(|&j| text_of(&t, j))
                    .unwrap_or_default();
                nodes.push(Node {
                    value: Some(sel.clone()),
                    disabled: n.attr("disabled").is_some(),
                    ..Node::new(d, "combobox", n.name.clone())
                });
                sources.push(i);
                for j in opts {
                    let o = text_of(&t, j);
                    nodes.push(Node {
                        checked: Some(o == sel),
                        ..Node::new(d + 1, "option", o)
                    });
                    sources.push(j);
                }
            }
            "img" if !n.name.is_empty() => nodes.push(Node::new(d, "img", n.name.clone())),
            "label" => {
                let inputs: Vec<usize> = (i + 1..t.subtree_end(i))
                    .filter(|&j| t.nodes[j].role == "input")
                    .collect();
                if inputs.is_empty() {
                    child[i] = Some(d);
                } else {
                    let label = text_of(&t, i);
                    for j in inputs {
                        nodes.extend(input(&t, j, d, Some(&label)));
                        sources.resize(nodes.len(), j);
                    }
                }
            }
            "iframe" => {
                nodes.push(Node::new(d, "iframe", n.attr("title").unwrap_or("")));
                child[i] = Some(d + 1);
            }
            "#text" => {
                let text = n.text.split_whitespace().collect::<Vec<_>>().join(" ");
                if !text.is_empty() {
                    nodes.push(Node::new(d, "StaticText", text));
                }
            }
            _ => child[i] = Some(d),
        }
        sources.resize(nodes.len(), i);
    }
    // The page's own BrowserGym ids, where it has them (a page BrowserGym marked).
    for (node, &src) in nodes.iter_mut().zip(&sources) {
        if node.role != "StaticText" {
            node.bid = t.nodes[src]
                .attr("bid")
                .filter(|b| !b.is_empty())
                .map(str::to_string);
        }
    }
    Ok(Page {
        title: title.unwrap_or_default(),
        nodes,
    })
}
