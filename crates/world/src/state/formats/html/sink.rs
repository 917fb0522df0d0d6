//! An html5ever tree sink that builds an index arena (no `Rc`, no recursive drop): nodes in a
//! `Vec`, handles are indices, children are index lists.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};

use html5ever::interface::{ElemName, ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::StrTendril;
use html5ever::{Attribute, LocalName, Namespace, QualName, local_name, ns};

/// What a node is.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    /// The document (index 0) or a template's contents.
    Document,
    /// An element.
    Element {
        /// Its name.
        name: QualName,
        /// Its attributes in source order.
        attrs: Vec<Attribute>,
    },
    /// Character data.
    Text(String),
    /// A comment, a processing instruction or a doctype (not shown in the tree).
    Other,
}

/// One node.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub(crate) kind: Kind,
    pub(crate) parent: Option<usize>,
    pub(crate) children: Vec<usize>,
    /// A `<template>`'s contents (a detached fragment), once asked for.
    pub(crate) template: Option<usize>,
    /// 1-based source line where it was created.
    pub(crate) line: usize,
}

/// The parsed document.
#[derive(Debug, Default)]
pub(crate) struct Arena {
    pub(crate) nodes: Vec<Node>,
    /// Parse errors as (line, message).
    pub(crate) errors: Vec<(usize, String)>,
    /// The doctype name, when there was one.
    pub(crate) doctype: Option<String>,
}

/// The sink: an arena behind `RefCell`s (html5ever's sink API takes `&self`).
pub(crate) struct Sink {
    nodes: RefCell<Vec<Node>>,
    errors: RefCell<Vec<(usize, String)>>,
    doctype: RefCell<Option<String>>,
    line: Cell<usize>,
}

impl Default for Sink {
    fn default() -> Self {
        Sink {
            nodes: RefCell::new(vec![Node {
                kind: Kind::Document,
                parent: None,
                children: Vec::new(),
                template: None,
                line: 1,
            }]),
            errors: RefCell::new(Vec::new()),
            doctype: RefCell::new(None),
            line: Cell::new(1),
        }
    }
}

/// An element name owned by value (html5ever atoms are cheap to clone).
#[derive(Debug)]
pub(crate) struct OwnedName(QualName);

impl ElemName for OwnedName {
    fn ns(&self) -> &Namespace {
        &self.0.ns
    }

    fn local_name(&self) -> &LocalName {
        &self.0.local
    }
}

impl Sink {
    fn push(&self, kind: Kind) -> usize {
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(Node {
            kind,
            parent: None,
            children: Vec::new(),
            template: None,
            line: self.line.get(),
        });
        nodes.len() - 1
    }

    fn detach(nodes: &mut [Node], child: usize) {
        if let Some(p) = nodes.get(child).and_then(|n| n.parent) {
            nodes[p].children.retain(|&c| c != child);
            nodes[child].parent = None;
        }
    }

    /// Inserts `child` into `parent`'s children at `pos`, merging adjacent text.
    fn insert(&self, parent: usize, pos: usize, child: NodeOrText<usize>) {
        let mut nodes = self.nodes.borrow_mut();
        if parent >= nodes.len() {
            return;
        }
        match child {
            NodeOrText::AppendText(t) => {
                let prev = pos
                    .checked_sub(1)
                    .and_then(|p| nodes[parent].children.get(p).copied());
                if let Some(prev) = prev
                    && let Kind::Text(s) = &mut nodes[prev].kind
                {
                    s.push_str(&t);
                    return;
                }
                let line = self.line.get();
                nodes.push(Node {
                    kind: Kind::Text(t.to_string()),
                    parent: Some(parent),
                    children: Vec::new(),
                    template: None,
                    line,
                });
                let i = nodes.len() - 1;
                let pos = pos.min(nodes[parent].children.len());
                nodes[parent].children.insert(pos, i);
            }
            NodeOrText::AppendNode(c) => {
                if c >= nodes.len() || c == parent {
                    return;
                }
                Self::detach(&mut nodes, c);
                nodes[c].parent = Some(parent);
                let pos = pos.min(nodes[parent].children.len());
                nodes[parent].children.insert(pos, c);
            }
        }
    }
}

impl TreeSink for Sink {
    type Handle = usize;
    type Output = Arena;
    type ElemName<'a> = OwnedName;

    fn finish(self) -> Arena {
        Arena {
            nodes: self.nodes.into_inner(),
            errors: self.errors.into_inner(),
            doctype: self.doctype.into_inner(),
        }
    }

    fn parse_error(&self, msg: Cow<'static, str>) {
        self.errors
            .borrow_mut()
            .push((self.line.get(), msg.into_owned()));
    }

    fn get_document(&self) -> usize {
        0
    }

    fn elem_name<'a>(&'a self, target: &'a usize) -> OwnedName {
        match self.nodes.borrow().get(*target).map(|n| &n.kind) {
            Some(Kind::Element { name, .. }) => OwnedName(name.clone()),
            _ => OwnedName(QualName::new(None, ns!(), local_name!(""))),
        }
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, _: ElementFlags) -> usize {
        self.push(Kind::Element { name, attrs })
    }

    fn create_comment(&self, _text: StrTendril) -> usize {
        self.push(Kind::Other)
    }

    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> usize {
        self.push(Kind::Other)
    }

    fn append(&self, parent: &usize, child: NodeOrText<usize>) {
        let len = self
            .nodes
            .borrow()
            .get(*parent)
            .map_or(0, |n| n.children.len());
        self.insert(*parent, len, child);
    }

    fn append_based_on_parent_node(&self, element: &usize, prev: &usize, child: NodeOrText<usize>) {
        let has_parent = self
            .nodes
            .borrow()
            .get(*element)
            .is_some_and(|n| n.parent.is_some());
        if has_parent {
            self.append_before_sibling(element, child);
        } else {
            self.append(prev, child);
        }
    }

    fn append_doctype_to_document(&self, name: StrTendril, _: StrTendril, _: StrTendril) {
        *self.doctype.borrow_mut() = Some(name.to_string());
    }

    fn get_template_contents(&self, target: &usize) -> usize {
        if let Some(t) = self.nodes.borrow().get(*target).and_then(|n| n.template) {
            return t;
        }
        let contents = self.push(Kind::Document);
        if let Some(n) = self.nodes.borrow_mut().get_mut(*target) {
            n.template = Some(contents);
        }
        contents
    }

    fn same_node(&self, x: &usize, y: &usize) -> bool {
        x == y
    }

    fn set_quirks_mode(&self, _mode: QuirksMode) {}

    fn append_before_sibling(&self, sibling: &usize, child: NodeOrText<usize>) {
        let found = {
            let nodes = self.nodes.borrow();
            nodes.get(*sibling).and_then(|s| s.parent).and_then(|p| {
                let pos = nodes[p].children.iter().position(|c| c == sibling)?;
                Some((p, pos))
            })
        };
        if let Some((parent, pos)) = found {
            // A moved node leaves its old place first, which may shift the position.
            if let NodeOrText::AppendNode(c) = &child {
                let mut nodes = self.nodes.borrow_mut();
                Self::detach(&mut nodes, *c);
            }
            let pos = self.nodes.borrow()[parent]
                .children
                .iter()
                .position(|c| c == sibling)
                .unwrap_or(pos);
            self.insert(parent, pos, child);
        }
    }

    fn add_attrs_if_missing(&self, target: &usize, attrs: Vec<Attribute>) {
        if let Some(Node {
            kind: Kind::Element { attrs: have, .. },
            ..
        }) = self.nodes.borrow_mut().get_mut(*target)
        {
            for a in attrs {
                if !have.iter().any(|h| h.name == a.name) {
                    have.push(a);
                }
            }
        }
    }

    fn remove_from_parent(&self, target: &usize) {
        Self::detach(&mut self.nodes.borrow_mut(), *target);
    }

    fn reparent_children(&self, node: &usize, new_parent: &usize) {
        let mut nodes = self.nodes.borrow_mut();
        if *node >= nodes.len() || *new_parent >= nodes.len() || node == new_parent {
            return;
        }
        let moved = std::mem::take(&mut nodes[*node].children);
        for &c in &moved {
            nodes[c].parent = Some(*new_parent);
        }
        nodes[*new_parent].children.extend(moved);
    }

    fn set_current_line(&self, line: u64) {
        self.line.set(usize::try_from(line).unwrap_or(usize::MAX));
    }
}
