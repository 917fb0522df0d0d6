//! One UI node: its standard attributes, flags, bounds and the extra attributes a dump carried.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A node's rectangle on screen, `[left,top][right,bottom]` in pixels.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Bounds {
    /// x1.
    pub left: i32,
    /// y1.
    pub top: i32,
    /// x2.
    pub right: i32,
    /// y2.
    pub bottom: i32,
}

impl Bounds {
    /// Parses `[x1,y1][x2,y2]` (spaces around numbers allowed); `None` if malformed.
    pub fn parse(s: &str) -> Option<Bounds> {
        let s = s.trim().strip_prefix('[')?.strip_suffix(']')?;
        let (a, b) = s.split_once("][")?;
        let pair = |p: &str| -> Option<(i32, i32)> {
            let (x, y) = p.split_once(',')?;
            Some((x.trim().parse().ok()?, y.trim().parse().ok()?))
        };
        let ((left, top), (right, bottom)) = (pair(a)?, pair(b)?);
        Some(Bounds {
            left,
            top,
            right,
            bottom,
        })
    }

    /// Width (0 when inverted).
    pub fn width(&self) -> i32 {
        (self.right - self.left).max(0)
    }

    /// Height (0 when inverted).
    pub fn height(&self) -> i32 {
        (self.bottom - self.top).max(0)
    }

    /// Area in pixels, 0 for zero-size or inverted bounds.
    pub fn area(&self) -> i64 {
        self.width() as i64 * self.height() as i64
    }

    /// Whether (`x`, `y`) lies inside (left/top inclusive, right/bottom exclusive).
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.left && x < self.right && y >= self.top && y < self.bottom
    }

    /// The centre point.
    pub fn center(&self) -> (i32, i32) {
        (
            self.left + (self.right - self.left) / 2,
            self.top + (self.bottom - self.top) / 2,
        )
    }
}

impl fmt::Display for Bounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{},{}][{},{}]",
            self.left, self.top, self.right, self.bottom
        )
    }
}

/// The boolean attributes of a node. Defaults: everything `false` except `enabled`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NodeFlags {
    /// `checkable`.
    pub checkable: bool,
    /// `checked`.
    pub checked: bool,
    /// `clickable`.
    pub clickable: bool,
    /// `enabled` (default `true`).
    pub enabled: bool,
    /// `focusable`.
    pub focusable: bool,
    /// `focused`.
    pub focused: bool,
    /// `scrollable`.
    pub scrollable: bool,
    /// `long-clickable`.
    pub long_clickable: bool,
    /// `password`.
    pub password: bool,
    /// `selected`.
    pub selected: bool,
}

impl Default for NodeFlags {
    fn default() -> Self {
        NodeFlags {
            checkable: false,
            checked: false,
            clickable: false,
            enabled: true,
            focusable: false,
            focused: false,
            scrollable: false,
            long_clickable: false,
            password: false,
            selected: false,
        }
    }
}

impl NodeFlags {
    /// The flags as (uiautomator attribute name, value), in dump order.
    pub fn entries(&self) -> [(&'static str, bool); 10] {
        [
            ("checkable", self.checkable),
            ("checked", self.checked),
            ("clickable", self.clickable),
            ("enabled", self.enabled),
            ("focusable", self.focusable),
            ("focused", self.focused),
            ("scrollable", self.scrollable),
            ("long-clickable", self.long_clickable),
            ("password", self.password),
            ("selected", self.selected),
        ]
    }

    /// The flag with uiautomator attribute name `name`, for reading and writing.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "checkable" => &mut self.checkable,
            "checked" => &mut self.checked,
            "clickable" => &mut self.clickable,
            "enabled" => &mut self.enabled,
            "focusable" => &mut self.focusable,
            "focused" => &mut self.focused,
            "scrollable" => &mut self.scrollable,
            "long-clickable" => &mut self.long_clickable,
            "password" => &mut self.password,
            "selected" => &mut self.selected,
            _ => return None,
        })
    }
}

/// One node of an [`AndroidTree`](super::AndroidTree).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AndroidNode {
    /// Depth below the hierarchy root (top-level windows are 0).
    pub depth: usize,
    /// Java class, e.g. `android.widget.TextView`.
    pub class: String,
    /// `text`.
    pub text: String,
    /// `content-desc`.
    pub content_desc: String,
    /// `resource-id`, e.g. `com.android.settings:id/switch_widget`.
    pub resource_id: String,
    /// `package`.
    pub package: String,
    /// `bounds`, when present and well formed.
    pub bounds: Option<Bounds>,
    /// The boolean attributes.
    pub flags: NodeFlags,
    /// Every other attribute (`index`, `NAF`, `drawing-order`, `hint`, `displayed`, …), in
    /// source order.
    pub extra: Vec<(String, String)>,
}

/// Classes of `android.view` that the compact form writes without their package.
pub(crate) const VIEW_CLASSES: [&str; 5] = [
    "View",
    "ViewGroup",
    "SurfaceView",
    "TextureView",
    "ViewStub",
];

impl AndroidNode {
    /// The class without its package (`android.widget.Switch` → `Switch`).
    pub fn simple_class(&self) -> &str {
        self.class.rsplit('.').next().unwrap_or(&self.class)
    }

    /// The resource-id without its `package:id/` prefix, except that framework ids keep an
    /// `android:` prefix (`android:id/content` → `android:content`); ids without `:id/` (such
    /// as Compose test tags) are returned whole.
    pub fn short_id(&self) -> String {
        short_id(&self.resource_id)
    }

    /// Whether text can be typed into the node: an EditText-like class (`EditText`,
    /// `AppCompatEditText`, `TextInputEditText`, `AutoCompleteTextView`, …).
    pub fn is_editable(&self) -> bool {
        let c = self.simple_class();
        c.ends_with("EditText") || c.ends_with("AutoCompleteTextView") || c == "SearchAutoComplete"
    }

    /// Whether a tap acts on the node itself (clickable, long-clickable, checkable or editable).
    pub fn is_interactive(&self) -> bool {
        self.flags.clickable
            || self.flags.long_clickable
            || self.flags.checkable
            || self.is_editable()
    }

    /// The value of an extra attribute.
    pub fn extra(&self, name: &str) -> Option<&str> {
        self.extra
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A short human label: `#id`, else the quoted text or content-desc, else the class.
    pub fn label(&self) -> String {
        if !self.resource_id.is_empty() {
            format!("#{}", self.short_id())
        } else if !self.text.is_empty() {
            format!("{:?}", self.text)
        } else if !self.content_desc.is_empty() {
            format!("{:?}", self.content_desc)
        } else {
            self.simple_class().to_string()
        }
    }
}

/// See [`AndroidNode::short_id`].
pub fn short_id(resource_id: &str) -> String {
    match resource_id.split_once(":id/") {
        Some(("android", name)) if !name.is_empty() && !name.contains(":id/") => {
            format!("android:{name}")
        }
        Some((_, name)) if !name.is_empty() && !name.contains(":id/") => name.to_string(),
        _ => resource_id.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_parse_and_geometry() {
        let b = Bounds::parse("[42,100][500,160]").unwrap();
        assert_eq!(
            b,
            Bounds {
                left: 42,
                top: 100,
                right: 500,
                bottom: 160
            }
        );
        assert_eq!(b.to_string(), "[42,100][500,160]");
        assert_eq!(
            (b.width(), b.height(), b.area(), b.center()),
            (458, 60, 27480, (271, 130))
        );
        assert!(b.contains(42, 100) && !b.contains(500, 100));
        assert_eq!(Bounds::parse("[0,0][0,0]").unwrap().area(), 0);
        assert_eq!(Bounds::parse(" [-5, 3][ 7,9] ").unwrap().left, -5);
        for bad in [
            "",
            "[1,2][3]",
            "[1,2,3,4]",
            "[a,b][c,d]",
            "1,2][3,4]",
            "[1,2][3,4",
        ] {
            assert_eq!(Bounds::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn ids_and_classes() {
        assert_eq!(
            short_id("com.android.settings:id/switch_widget"),
            "switch_widget"
        );
        assert_eq!(short_id("android:id/content"), "android:content");
        assert_eq!(short_id("search_field"), "search_field");
        assert_eq!(short_id("weird:id/"), "weird:id/");
        assert_eq!(short_id("a:id/b:id/c"), "a:id/b:id/c");
        let n = AndroidNode {
            class: "com.google.android.material.textfield.TextInputEditText".into(),
            ..Default::default()
        };
        assert!(n.is_editable() && n.is_interactive());
        assert_eq!(n.simple_class(), "TextInputEditText");
        let t = AndroidNode {
            class: "android.widget.TextView".into(),
            text: "Hi".into(),
            ..Default::default()
        };
        assert!(!t.is_editable() && !t.is_interactive());
        assert_eq!(t.label(), "\"Hi\"");
    }

    #[test]
    fn flags_default_and_lookup() {
        let mut f = NodeFlags::default();
        assert!(f.enabled && !f.clickable);
        *f.get_mut("long-clickable").unwrap() = true;
        assert!(f.long_clickable);
        assert!(f.get_mut("NAF").is_none());
        assert_eq!(f.entries().iter().filter(|(_, v)| *v).count(), 2);
    }
}
