//! `html`: an HTML page, parsed as a browser does (html5ever, the WHATWG algorithm), so any
//! input gives a DOM: unclosed, misnested and stray tags are repaired by the standard rules and
//! each parse error html5ever reports becomes a warning (its line, column 0).
//!
//! One node per element (role = the tag name, lower case) and per non-blank text run (role
//! `#text`, text = the run with whitespace collapsed to single spaces, except inside `pre`,
//! `textarea`, `script` and `style` where it is kept as written). Key: a BrowserGym `bid`
//! attribute ([`KeyKind::Bid`]), else `id` ([`KeyKind::ElementId`]), else the positional path.
//! Name: `aria-label`, else `alt`, `title`, `placeholder`. Attributes: all, in source order.
//! Comments are left out; the doctype is the document attribute `doctype`. An `<iframe
//! srcdoc="…">` document is parsed too and its nodes become the iframe's children (nested
//! srcdoc documents likewise, up to 16 levels). HTML gives no bounds. A `<template>`'s contents
//! (declarative shadow roots too) are its children; shadow roots attached by scripts are not
//! seen (no script runs). Tree building never recurses: html5ever's builder keeps
//! an explicit stack and the layout here walks with one.

mod sink;

use html5ever::tendril::TendrilSink;
use html5ever::{ParseOpts, parse_document};

use sink::{Arena, Kind, Sink};

use super::super::read::clip;
use crate::Result;
use crate::state::{KeyKind, NodeKey, ParsedState, StateNode, StateParser, TreeBuilder, Warning};

/// The `html` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct Html;

/// iframe `srcdoc` documents nest at most this deep.
const MAX_FRAMES: usize = 16;
/// At most this many parse errors become warnings (then one summary).
const MAX_ERRORS: usize = 200;

impl StateParser for Html {
    fn name(&self) -> &'static str {
        "html"
    }

    fn description(&self) -> &'static str {
        "an HTML page (html5ever); iframe srcdoc documents read as the iframe's children"
    }

    /// 0.95 for a doctype or `<html`; 0.6 for text starting with a known HTML tag; 0.3 when
    /// there are closing tags of common HTML elements.
    fn detect(&self, text: &str) -> f32 {
        let h = super::head(text, 4096).trim_start().to_ascii_lowercase();
        if h.starts_with("<!doctype html") || h.starts_with("<html") {
            return 0.95;
        }
        const TAGS: [&str; 10] = [
            "<head", "<body", "<div", "<p>", "<span", "<a ", "<form", "<table", "<ul", "<input",
        ];
        if TAGS.iter().any(|t| h.starts_with(t)) {
            return 0.6;
        }
        if ["</div>", "</p>", "</a>", "</span>", "</body>"]
            .iter()
            .any(|t| h.contains(t))
        {
            return 0.3;
        }
        0.0
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        let mut warnings = Vec::new();
        let mut b = TreeBuilder::new(self.name());
        let main = parse_arena(text, false);
        if let Some(d) = &main.doctype {
            b.doc_attr("doctype", d.clone());
        }
        report(&main, None, &mut warnings);
        let mut arenas = vec![main];
        // (arena, node, depth, frame nesting, whether text keeps its whitespace, the line of
        // the outermost iframe for nodes of srcdoc documents)
        let mut stack: Vec<(usize, usize, usize, usize, bool, Option<usize>)> = arenas[0].nodes[0]
            .children
            .iter()
            .rev()
            .map(|&c| (0, c, 0, 0, false, None))
            .collect();
        while let Some((a, i, depth, frames, raw, frame_line)) = stack.pop() {
            let node = &arenas[a].nodes[i];
            let line = frame_line.unwrap_or(node.line);
            match &node.kind {
                Kind::Text(s) => {
                    let text = if raw { s.clone() } else { collapse(s) };
                    if !text.trim().is_empty() {
                        b.push_at(
                            depth,
                            StateNode {
                                text,
                                line,
                                ..StateNode::new("#text")
                            },
                        );
                    }
                }
                Kind::Element { name, attrs } => {
                    let tag = name.local.to_string();
                    let attributes: Vec<(String, String)> = attrs
                        .iter()
                        .map(|at| {
                            let n = match &at.name.prefix {
                                Some(p) => format!("{p}:{}", at.name.local),
                                None => at.name.local.to_string(),
                            };
                            (n, at.value.to_string())
                        })
                        .collect();
                    let get = |k: &str| {
                        attributes
                            .iter()
                            .find(|(n, _)| n == k)
                            .map(|(_, v)| v.clone())
                    };
                    let key = match (get("bid"), get("id")) {
                        (Some(bid), _) if !bid.is_empty() => NodeKey::new(KeyKind::Bid, bid),
                        (_, Some(id)) if !id.is_empty() => NodeKey::new(KeyKind::ElementId, id),
                        _ => NodeKey::default(),
                    };
                    let label = ["aria-label", "alt", "title", "placeholder"]
                        .iter()
                        .find_map(|k| get(k).filter(|v| !v.is_empty()));
                    let srcdoc = (tag == "iframe").then(|| get("srcdoc")).flatten();
                    let keep_raw =
                        raw || matches!(tag.as_str(), "pre" | "textarea" | "script" | "style");
                    b.push_at(
                        depth,
                        StateNode {
                            role: tag,
                            name: label.unwrap_or_default(),
                            key,
                            attributes,
                            line,
                            ..StateNode::default()
                        },
                    );
                    // A template's contents (declarative shadow roots included) follow its
                    // children.
                    let mut children: Vec<usize> = node.children.clone();
                    if let Some(t) = node.template {
                        children.extend(arenas[a].nodes[t].children.iter().copied());
                    }
                    if let Some(doc) = srcdoc {
                        if frames >= MAX_FRAMES {
                            warnings.push(Warning {
                                line,
                                column: 0,
                                message: format!(
                                    "iframe srcdoc nested more than {MAX_FRAMES} deep: not read"
                                ),
                            });
                        } else {
                            let inner = parse_arena(&doc, true);
                            report(&inner, Some(line), &mut warnings);
                            arenas.push(inner);
                            let id = arenas.len() - 1;
                            stack.extend(
                                arenas[id].nodes[0]
                                    .children
                                    .iter()
                                    .rev()
                                    .map(|&c| (id, c, depth + 1, frames + 1, false, Some(line))),
                            );
                        }
                    }
                    stack.extend(
                        children
                            .iter()
                            .rev()
                            .map(|&c| (a, c, depth + 1, frames, keep_raw, frame_line)),
                    );
                }
                Kind::Document | Kind::Other => {}
            }
        }
        ParsedState::new(b.finish(), warnings, text, "no element")
    }
}

/// Parses one document into an arena (`srcdoc`: as an iframe srcdoc document, which needs
/// no doctype).
fn parse_arena(text: &str, srcdoc: bool) -> Arena {
    let mut opts = ParseOpts::default();
    opts.tree_builder.iframe_srcdoc = srcdoc;
    parse_document(Sink::default(), opts).one(text)
}

/// The arena's parse errors as warnings (`frame_line`: the iframe's line for a srcdoc).
fn report(arena: &Arena, frame_line: Option<usize>, warnings: &mut Vec<Warning>) {
    for (line, msg) in arena.errors.iter().take(MAX_ERRORS) {
        warnings.push(match frame_line {
            None => Warning {
                line: *line,
                column: 0,
                message: format!("HTML: {}", clip(msg)),
            },
            Some(f) => Warning {
                line: f,
                column: 0,
                message: format!("HTML in iframe srcdoc, its line {line}: {}", clip(msg)),
            },
        });
    }
    if arena.errors.len() > MAX_ERRORS {
        warnings.push(Warning::at_start(format!(
            "{} more HTML parse errors not listed",
            arena.errors.len() - MAX_ERRORS
        )));
    }
}

/// Whitespace runs → one space, ends trimmed.
fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dom_with_repairs() {
        let p = Html
            .parse("<p id=a>one <b>two<p>three <img alt=\"x\" bid=\"12\">")
            .unwrap();
        let t = &p.tree;
        t.check().unwrap();
        let shape: Vec<_> = t
            .nodes
            .iter()
            .map(|n| format!("{}{}", n.depth, n.role))
            .collect();
        assert_eq!(
            shape,
            [
                "0html", "1head", "1body", "2p", "3#text", "3b", "4#text", "2p", "3b", "4#text",
                "4img"
            ]
        );
        assert_eq!(t.nodes[3].key, NodeKey::new(KeyKind::ElementId, "a"));
        let img = t.find_role("img")[0];
        assert_eq!(
            (t.nodes[img].key.kind, t.nodes[img].name.as_str()),
            (KeyKind::Bid, "x")
        );
        assert!(!p.warnings.is_empty());
    }

    #[test]
    fn srcdoc_frames_are_children() {
        let p = Html.parse("<!DOCTYPE html><body><iframe srcdoc=\"<h2>In</h2><iframe srcdoc='<b>deep</b>'></iframe>\"></iframe>").unwrap();
        let t = &p.tree;
        assert_eq!(t.attributes, [("doctype".to_string(), "html".to_string())]);
        let deep = t.find_text("deep").unwrap();
        let frames = (0..deep).filter(|&i| t.nodes[i].role == "iframe").count();
        assert_eq!(frames, 2);
        assert!(t.nodes[deep].depth > 8);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn template_contents_are_children() {
        let p = Html
            .parse("<div id=host><template shadowrootmode=\"open\"><p>inside</p></template></div>")
            .unwrap();
        let t = &p.tree;
        let inside = t.find_text("inside").unwrap();
        let template = t.find_role("template")[0];
        assert!(inside > template && inside < t.subtree_end(template));
    }

    #[test]
    fn deep_nesting() {
        let text = "<div>".repeat(5000);
        let p = Html.parse(&text).unwrap();
        assert!(p.tree.max_depth() > 100);
    }
}
