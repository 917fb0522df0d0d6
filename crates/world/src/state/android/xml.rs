//! Reading uiautomator dumps and Appium page source with quick-xml and an explicit stack.
//!
//! Tolerated, with a [`Warning`]: text after the root's closing tag (`UI hierchary dumped to:
//! /dev/tty`), text inside elements, a duplicated attribute (the first wins), a boolean that is
//! not `true`/`false` (the default is kept), malformed bounds (dropped), an unknown entity in a
//! value (kept raw), a document whose root is a node instead of `<hierarchy>`, a nested
//! `<hierarchy>` (treated as a node container). Zero-size bounds, numeric character references
//! (`&#127807;`, `&#10;`) and extra attributes are normal and give no warning.
//!
//! Errors (with line and column): malformed XML, mismatched or missing end tags, invalid
//! UTF-8, and a document with no element.

use quick_xml::events::attributes::AttrError;
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use super::{AndroidNode, AndroidTree, Bounds, Parsed, SourceFormat, Warning};
use crate::{Error, Result};

/// Reads a dump given as bytes: UTF-8 (a BOM is skipped); invalid UTF-8 is an error with its
/// position.
pub fn parse_xml_bytes(bytes: &[u8]) -> Result<Parsed> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_xml(text),
        Err(e) => {
            let valid = std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or("");
            let (line, column) = line_col(valid, valid.len());
            Err(Error::Xml {
                line,
                column,
                message: "invalid UTF-8".into(),
            })
        }
    }
}

/// Reads a uiautomator dump or an Appium page source into one tree.
pub fn parse_xml(input: &str) -> Result<Parsed> {
    let input = input.strip_prefix('\u{feff}').unwrap_or(input);
    let mut reader = Reader::from_str(input);
    reader.config_mut().check_end_names = true;
    let mut p = Parser {
        input,
        tree: empty_tree(),
        warnings: Vec::new(),
        open: Vec::new(),
        depth: 0,
        seen_root: false,
    };
    loop {
        let at = reader.buffer_position() as usize;
        let event = reader
            .read_event()
            .map_err(|e| p.error(reader.error_position() as usize, e.to_string()))?;
        match event {
            Event::Start(e) => p.start(&e, at, false)?,
            Event::Empty(e) => p.start(&e, at, true)?,
            Event::End(_) => {
                if let Some(Open::Node) = p.open.pop() {
                    p.depth -= 1;
                }
                if p.open.is_empty() {
                    p.after_root(reader.buffer_position() as usize);
                    break;
                }
            }
            Event::Text(t) => {
                let raw = t.into_inner();
                if !raw.trim().is_empty() {
                    let what = if p.seen_root {
                        "text inside an element ignored"
                    } else {
                        "text before the root ignored"
                    };
                    p.warn(at, format!("{what}: {:?}", clip(raw.trim())));
                }
            }
            Event::GeneralRef(_) | Event::CData(_) => {
                p.warn(at, "character data inside an element ignored".into())
            }
            Event::Eof => {
                if !p.seen_root {
                    return Err(p.error(input.len(), "no <hierarchy> or node element found".into()));
                }
                if !p.open.is_empty() {
                    return Err(p.error(
                        input.len(),
                        format!(
                            "unexpected end of input: {} element(s) not closed",
                            p.open.len()
                        ),
                    ));
                }
                break;
            }
            Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) => {}
        }
        if p.seen_root && p.open.is_empty() {
            p.after_root(reader.buffer_position() as usize);
            break;
        }
    }
    Ok(Parsed {
        tree: p.tree,
        warnings: p.warnings,
    })
}

fn empty_tree() -> AndroidTree {
    AndroidTree {
        source: SourceFormat::Uiautomator,
        root_attributes: Vec::new(),
        nodes: Vec::new(),
    }
}

/// What an open element is.
enum Open {
    Hierarchy,
    Node,
}

struct Parser<'a> {
    input: &'a str,
    tree: AndroidTree,
    warnings: Vec<Warning>,
    /// The explicit element stack (no recursion anywhere).
    open: Vec<Open>,
    /// Number of open node elements = depth of the next node.
    depth: usize,
    seen_root: bool,
}

impl Parser<'_> {
    fn start(&mut self, e: &BytesStart<'_>, at: usize, empty: bool) -> Result<()> {
        let name = e.name().as_ref().to_string();
        let attrs = self.attributes(e, at)?;
        if self.seen_root && self.open.is_empty() {
            return Ok(());
        }
        let is_hierarchy = name == "hierarchy";
        if !self.seen_root {
            self.seen_root = true;
            if is_hierarchy {
                self.tree.root_attributes = attrs;
                if !empty {
                    self.open.push(Open::Hierarchy);
                }
                return Ok(());
            }
            self.warn(
                at,
                format!(
                    "root element is <{}>, not <hierarchy>; read as a node",
                    clip(&name)
                ),
            );
        } else if is_hierarchy {
            self.warn(at, "nested <hierarchy> read as a node".into());
        }
        if name != "node" && name != "hierarchy" {
            self.tree.source = SourceFormat::Appium;
        }
        let node = self.node(&name, attrs, at);
        self.tree.nodes.push(node);
        if !empty {
            self.open.push(Open::Node);
            self.depth += 1;
        }
        Ok(())
    }

    fn attributes(&mut self, e: &BytesStart<'_>, at: usize) -> Result<Vec<(String, String)>> {
        let mut out: Vec<(String, String)> = Vec::new();
        for attr in e.attributes() {
            let attr = match attr {
                Ok(a) => a,
                Err(AttrError::Duplicated(_, _)) => {
                    self.warn(
                        at,
                        "duplicated attribute ignored (the first is kept)".into(),
                    );
                    continue;
                }
                Err(err) => return Err(self.error(at, format!("bad attribute: {err}"))),
            };
            let key = attr.key.as_ref().to_string();
            let value = match attr.normalized_value(XmlVersion::Implicit1_0) {
                Ok(v) => v.into_owned(),
                Err(err) => {
                    self.warn(at, format!("attribute {key}: {err}; raw value kept"));
                    attr.value.to_string()
                }
            };
            out.push((key, value));
        }
        Ok(out)
    }

    fn node(&mut self, tag: &str, attrs: Vec<(String, String)>, at: usize) -> AndroidNode {
        let mut n = AndroidNode {
            depth: self.depth,
            ..AndroidNode::default()
        };
        let mut class = None;
        for (key, value) in attrs {
            match key.as_str() {
                "class" => class = Some(value),
                "text" => n.text = value,
                "content-desc" => n.content_desc = value,
                "resource-id" => n.resource_id = value,
                "package" => n.package = value,
                "bounds" => match Bounds::parse(&value) {
                    Some(b) => n.bounds = Some(b),
                    None => self.warn(at, format!("malformed bounds {:?} dropped", clip(&value))),
                },
                _ => {
                    let parsed = match value.as_str() {
                        "true" => Some(true),
                        "false" => Some(false),
                        _ => None,
                    };
                    match (n.flags.get_mut(&key), parsed) {
                        (Some(flag), Some(v)) => *flag = v,
                        (Some(_), None) => self.warn(
                            at,
                            format!("{key}={:?} is not a boolean; default kept", clip(&value)),
                        ),
                        (None, _) => n.extra.push((key, value)),
                    }
                }
            }
        }
        n.class = match class {
            Some(c) => c,
            None if tag != "node" => tag.to_string(),
            None => String::new(),
        };
        n
    }

    fn after_root(&mut self, at: usize) {
        let rest = self.input.get(at..).unwrap_or("").trim();
        if !rest.is_empty() {
            self.warn(
                at,
                format!("text after the root element ignored: {:?}", clip(rest)),
            );
        }
    }

    fn warn(&mut self, offset: usize, message: String) {
        let (line, column) = line_col(self.input, offset);
        self.warnings.push(Warning {
            line,
            column,
            message,
        });
    }

    fn error(&self, offset: usize, message: String) -> Error {
        let (line, column) = line_col(self.input, offset);
        Error::Xml {
            line,
            column,
            message,
        }
    }
}

/// At most 60 characters of `s`, for messages.
fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(60).collect();
    if s.chars().count() > 60 {
        out.push('…');
    }
    out
}

/// 1-based line and character column of a byte offset.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="p" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][1080,1920]"><node index="0" text="&#127807; Tea" resource-id="p:id/title" class="android.widget.TextView" package="p" content-desc="a&#10;b" checkable="false" checked="false" clickable="true" enabled="false" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="true" bounds="[0,0][0,0]" NAF="true" drawing-order="2" /></node></hierarchy>"#;

    #[test]
    fn reads_a_uiautomator_dump() {
        let p = parse_xml(DUMP).unwrap();
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
        let t = &p.tree;
        assert_eq!(t.source, SourceFormat::Uiautomator);
        assert_eq!(
            t.root_attributes,
            [("rotation".to_string(), "0".to_string())]
        );
        assert_eq!(t.len(), 2);
        let n = &t.nodes[1];
        assert_eq!(
            (n.depth, n.text.as_str(), n.content_desc.as_str()),
            (1, "🌿 Tea", "a\nb")
        );
        assert_eq!(n.bounds, Some(Bounds::default()));
        assert!(n.flags.clickable && !n.flags.enabled && n.flags.selected && n.flags.focusable);
        assert_eq!(n.extra("NAF"), Some("true"));
        assert_eq!(n.extra("drawing-order"), Some("2"));
        assert_eq!(n.extra("index"), Some("0"));
    }

    #[test]
    fn reads_appium_tags() {
        let src = "<hierarchy rotation=\"0\" width=\"1080\">\n  <android.widget.FrameLayout class=\"android.widget.FrameLayout\" bounds=\"[0,0][10,10]\">\n    <android.widget.Button text=\"OK\" />\n  </android.widget.FrameLayout>\n</hierarchy>\n";
        let p = parse_xml(src).unwrap();
        assert_eq!(p.tree.source, SourceFormat::Appium);
        assert_eq!(p.tree.nodes[1].class, "android.widget.Button");
        assert_eq!(p.tree.nodes[1].depth, 1);
        assert!(p.warnings.is_empty());
    }

    #[test]
    fn trailing_text_is_a_warning() {
        let src = format!("{DUMP}UI hierchary dumped to: /dev/tty\n");
        let p = parse_xml(&src).unwrap();
        assert_eq!(p.tree.len(), 2);
        assert_eq!(p.warnings.len(), 1);
        assert!(
            p.warnings[0].message.contains("UI hierchary dumped to"),
            "{:?}",
            p.warnings
        );
        assert_eq!(p.warnings[0].line, 1);
    }

    #[test]
    fn oddities_are_warnings() {
        let src = "<hierarchy>\n<node class=\"A\" checked=\"yes\" bounds=\"[1,2]\" text=\"a\" text=\"b\">hello<node class=\"B\" text=\"&nbsp;\"/></node></hierarchy>";
        let p = parse_xml(src).unwrap();
        let msgs: Vec<&str> = p.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(p.tree.len(), 2);
        assert!(
            msgs.iter().any(|m| m.contains("duplicated attribute")),
            "{msgs:?}"
        );
        assert!(msgs.iter().any(|m| m.contains("not a boolean")), "{msgs:?}");
        assert!(
            msgs.iter().any(|m| m.contains("malformed bounds")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|m| m.contains("text inside an element")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|m| m.contains("raw value kept")),
            "{msgs:?}"
        );
        assert_eq!(p.tree.nodes[0].text, "a");
        assert_eq!(p.tree.nodes[1].text, "&nbsp;");
        assert!(p.warnings.iter().all(|w| w.line == 2));
    }

    #[test]
    fn node_root_without_hierarchy() {
        let p = parse_xml("<node class=\"X\"><node class=\"Y\"/></node>").unwrap();
        assert_eq!(p.tree.len(), 2);
        assert!(p.warnings[0].message.contains("not <hierarchy>"));
    }

    #[test]
    fn errors_have_positions() {
        let err =
            parse_xml("<hierarchy>\n  <node class=\"A\">\n  </nod>\n</hierarchy>").unwrap_err();
        assert!(matches!(err, Error::Xml { line: 3, .. }), "{err}");
        let err = parse_xml("<hierarchy>\n<node class=\"A\">").unwrap_err();
        assert!(matches!(err, Error::Xml { line: 2, .. }), "{err}");
        assert!(err.to_string().contains("not closed"), "{err}");
        let err = parse_xml("  \n ").unwrap_err().to_string();
        assert!(err.contains("no <hierarchy>"), "{err}");
        let err = parse_xml("<hierarchy><node class=A/></hierarchy>")
            .unwrap_err()
            .to_string();
        assert!(err.contains("line 1"), "{err}");
        let err = parse_xml_bytes(b"<hierarchy>\n<node text=\"\xff\"/></hierarchy>").unwrap_err();
        assert!(
            matches!(
                err,
                Error::Xml {
                    line: 2,
                    column: 13,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn line_col_counts_characters() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é€x", "é€".len()), (1, 3));
        assert_eq!(line_col("abc", 99), (1, 4));
    }
}
