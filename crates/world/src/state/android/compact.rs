//! `android-compact`: a short, line-per-node text form of an Android tree for small models.
//!
//! ```text
//! FrameLayout [0,0][1080,1794]
//!   TextView #title "Settings" [42,100][500,160]
//!   Switch #wifi "Wi-Fi" checkable checked clickable [900,200][1040,260]
//! ```
//!
//! Grammar (one node per line, pre-order; `SP` is one space):
//!
//! ```text
//! line   = indent class [SP "#" id] [SP quoted] [SP "desc=" quoted] *(SP flag) [SP bounds]
//! indent = 2 spaces per depth level (the first line has depth 0; a line is at most one level
//!          deeper than the line before it)
//! class  = Name          ; android.widget.Name, or android.view.Name for View, ViewGroup,
//!                        ; SurfaceView, TextureView, ViewStub (Name = [A-Za-z0-9_$]+)
//!        | dotted.Name   ; any other class, written whole
//!        | "~" quoted    ; a class that fits neither form (no dot, empty, spaces)
//! id     = the resource-id without "package:id/" ("android:" kept for framework ids), written
//!          bare when it has no whitespace and does not start with a quote, else quoted
//! quoted = '"' chars '"' with escapes \\ \" \n \r \t and \u{HEX} for other control chars;
//!          everything else (emoji, CJK) is written as is
//! flag   = disabled | checkable | checked | clickable | long-clickable | scrollable
//!        | focused | selected | password      (written only when not the default, in this order)
//! bounds = "[" x1 "," y1 "][" x2 "," y2 "]"
//! ```
//!
//! Kept: depth, class, short resource-id, text, content-desc, the nine flags above, bounds.
//! Dropped: `focusable` (editability is read from the class), package, the package part of
//! resource-ids, `index` and every extra attribute. Parsing gives back exactly the kept fields
//! ([`KeptFields`]); a node read from compact text has an empty package and its short id as
//! resource-id. The parser accepts the tokens after the class in any order, and tolerates a
//! truncated last line (what was read before the cut is kept, with a warning).

mod escape;
mod parse;

pub use parse::parse_compact;

use serde::{Deserialize, Serialize};

use super::node::{VIEW_CLASSES, short_id};
use super::{AndroidNode, AndroidTree, Bounds, NodeFlags};

/// The format's name, `android-compact`. The grammar:
///
/// ```text
/// line   = indent class [SP "#" id] [SP quoted] [SP "desc=" quoted] *(SP flag) [SP bounds]
/// indent = 2 spaces per depth; class = Name (android.widget./android.view.) | dotted.Name | "~" quoted
/// id     = resource-id without "package:id/" ("android:" kept); quoted = "…" with \\ \" \n \r \t \u{HEX}
/// flag   = disabled | checkable | checked | clickable | long-clickable | scrollable | focused | selected | password
/// bounds = [x1,y1][x2,y2]
/// ```
pub const COMPACT_FORMAT: &str = "android-compact";

/// The flag words, in the order they are written.
pub(crate) const FLAG_WORDS: [&str; 9] = [
    "disabled",
    "checkable",
    "checked",
    "clickable",
    "long-clickable",
    "scrollable",
    "focused",
    "selected",
    "password",
];

/// The fields of a node that `android-compact` keeps; two nodes render to the same line
/// exactly when these are equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KeptFields {
    /// Depth.
    pub depth: usize,
    /// Full class name.
    pub class: String,
    /// Short resource-id ([`AndroidNode::short_id`]).
    pub id: String,
    /// Text.
    pub text: String,
    /// Content description.
    pub desc: String,
    /// Flags, with `focusable` cleared.
    pub flags: NodeFlags,
    /// Bounds.
    pub bounds: Option<Bounds>,
}

impl KeptFields {
    /// The kept fields of `node`.
    pub fn of(node: &AndroidNode) -> Self {
        KeptFields {
            depth: node.depth,
            class: node.class.clone(),
            id: short_id(&node.resource_id),
            text: node.text.clone(),
            desc: node.content_desc.clone(),
            flags: NodeFlags {
                focusable: false,
                ..node.flags
            },
            bounds: node.bounds,
        }
    }
}

/// Renders `tree` in `android-compact`, lines joined by `\n`, no trailing newline.
pub fn render_compact(tree: &AndroidTree) -> String {
    let mut out = String::new();
    for (i, n) in tree.nodes.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        render_line(&mut out, n);
    }
    out
}

/// One node's `android-compact` line, indentation included.
pub fn render_compact_line(node: &AndroidNode) -> String {
    let mut out = String::new();
    render_line(&mut out, node);
    out
}

/// Renders one node's line (indentation included).
pub(crate) fn render_line(out: &mut String, n: &AndroidNode) {
    for _ in 0..n.depth {
        out.push_str("  ");
    }
    out.push_str(&class_token(&n.class));
    if !n.resource_id.is_empty() {
        let id = short_id(&n.resource_id);
        out.push_str(" #");
        if id.starts_with('"') || id.chars().any(char::is_whitespace) {
            out.push_str(&escape::quote(&id));
        } else {
            out.push_str(&id);
        }
    }
    if !n.text.is_empty() {
        out.push(' ');
        out.push_str(&escape::quote(&n.text));
    }
    if !n.content_desc.is_empty() {
        out.push_str(" desc=");
        out.push_str(&escape::quote(&n.content_desc));
    }
    let f = &n.flags;
    let values = [
        !f.enabled,
        f.checkable,
        f.checked,
        f.clickable,
        f.long_clickable,
        f.scrollable,
        f.focused,
        f.selected,
        f.password,
    ];
    for (word, on) in FLAG_WORDS.iter().zip(values) {
        if on {
            out.push(' ');
            out.push_str(word);
        }
    }
    if let Some(b) = n.bounds {
        out.push(' ');
        out.push_str(&b.to_string());
    }
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// The full class a bare compact class name stands for.
pub(crate) fn expand_class(short: &str) -> String {
    if VIEW_CLASSES.contains(&short) {
        format!("android.view.{short}")
    } else {
        format!("android.widget.{short}")
    }
}

/// The class token of the grammar.
pub(crate) fn class_token(class: &str) -> String {
    for prefix in ["android.widget.", "android.view."] {
        if let Some(rest) = class.strip_prefix(prefix)
            && is_ident(rest)
            && expand_class(rest) == class
        {
            return rest.to_string();
        }
    }
    let raw_ok = class.contains('.')
        && !class.starts_with(['~', '"', '#', '['])
        && !class.chars().any(char::is_whitespace);
    if raw_ok {
        class.to_string()
    } else {
        format!("~{}", escape::quote(class))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(depth: usize, class: &str) -> AndroidNode {
        AndroidNode {
            depth,
            class: class.into(),
            ..Default::default()
        }
    }

    #[test]
    fn renders_the_documented_example() {
        let mut root = n(0, "android.widget.FrameLayout");
        root.bounds = Bounds::parse("[0,0][1080,1794]");
        let mut title = n(1, "android.widget.TextView");
        title.resource_id = "com.android.settings:id/title".into();
        title.text = "Settings".into();
        title.flags.focusable = true;
        title.bounds = Bounds::parse("[42,100][500,160]");
        let mut wifi = n(1, "android.widget.Switch");
        wifi.resource_id = "com.android.settings:id/wifi".into();
        wifi.text = "Wi-Fi".into();
        wifi.flags.checkable = true;
        wifi.flags.checked = true;
        wifi.flags.clickable = true;
        wifi.bounds = Bounds::parse("[900,200][1040,260]");
        let tree = AndroidTree::new(vec![root, title, wifi]).unwrap();
        assert_eq!(
            render_compact(&tree),
            "FrameLayout [0,0][1080,1794]\n  TextView #title \"Settings\" [42,100][500,160]\n  Switch #wifi \"Wi-Fi\" checkable checked clickable [900,200][1040,260]"
        );
    }

    #[test]
    fn class_tokens() {
        assert_eq!(class_token("android.widget.TextView"), "TextView");
        assert_eq!(class_token("android.view.ViewGroup"), "ViewGroup");
        assert_eq!(
            class_token("android.view.TextView"),
            "android.view.TextView"
        );
        assert_eq!(class_token("android.widget.View"), "android.widget.View");
        assert_eq!(
            class_token("androidx.compose.ui.platform.ComposeView"),
            "androidx.compose.ui.platform.ComposeView"
        );
        assert_eq!(class_token("TextView"), "~\"TextView\"");
        assert_eq!(class_token(""), "~\"\"");
        assert_eq!(class_token("my class.X"), "~\"my class.X\"");
        assert_eq!(class_token("android.widget.Foo$Bar"), "Foo$Bar");
    }

    #[test]
    fn flags_and_desc() {
        let mut b = n(0, "android.widget.Button");
        b.content_desc = "Send\nnow".into();
        b.flags.enabled = false;
        b.flags.password = true;
        b.flags.focusable = true;
        b.resource_id = "android:id/button1".into();
        let mut s = String::new();
        render_line(&mut s, &b);
        assert_eq!(
            s,
            "Button #android:button1 desc=\"Send\\nnow\" disabled password"
        );
        let mut q = n(2, "android.view.View");
        q.resource_id = "my tag".into();
        let mut s = String::new();
        render_line(&mut s, &q);
        assert_eq!(s, "    View #\"my tag\"");
    }
}
