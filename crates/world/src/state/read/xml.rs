//! A tolerant XML reader: quick-xml events into a flat, pre-order element list.
//!
//! Recovered, with a warning: a syntax error (reading resumes at the next `<` after it), an end
//! tag that closes elements left open (they are closed), a stray end tag (ignored), elements
//! still open at the end of input (closed), a duplicated attribute (the first is kept), an
//! attribute that cannot be read (the rest of the tag's attributes are dropped), an unknown
//! entity (kept as written), text outside every element (ignored). Unquoted and valueless
//! attributes are read as HTML does. Namespace prefixes are kept in names (`st:enabled`).

use quick_xml::events::attributes::AttrError;
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

use super::{LineIndex, clip};
use crate::state::Warning;

/// One element.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct XmlElement {
    /// Depth (root elements are 0).
    pub(crate) depth: usize,
    /// Parent index.
    pub(crate) parent: Option<usize>,
    /// The tag as written, prefix included.
    pub(crate) name: String,
    /// Attributes in source order, values unescaped.
    pub(crate) attrs: Vec<(String, String)>,
    /// The element's own character data (not its children's), whitespace-only runs dropped.
    pub(crate) text: String,
    /// 1-based line of the start tag.
    pub(crate) line: usize,
}

impl XmlElement {
    /// The value of attribute `name`.
    pub(crate) fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What [`read`] found.
#[derive(Debug, Default)]
pub(crate) struct XmlDoc {
    /// Elements in pre-order.
    pub(crate) elements: Vec<XmlElement>,
    /// What was skipped or repaired.
    pub(crate) warnings: Vec<Warning>,
}

/// Reads every element of `text` it can.
pub(crate) fn read(text: &str) -> XmlDoc {
    let ix = LineIndex::new(text);
    let mut r = Run {
        ix: &ix,
        doc: XmlDoc::default(),
        open: Vec::new(),
    };
    let mut base = 0;
    'outer: while base < text.len() {
        let mut reader = Reader::from_str(&text[base..]);
        let cfg = reader.config_mut();
        cfg.check_end_names = false;
        cfg.allow_unmatched_ends = true;
        loop {
            let at = base + reader.buffer_position() as usize;
            match reader.read_event() {
                Ok(Event::Start(e)) => r.start(&e, at, false),
                Ok(Event::Empty(e)) => r.start(&e, at, true),
                Ok(Event::End(e)) => r.end(e.name().as_ref(), at),
                Ok(Event::Text(t)) => r.text(&t.into_inner(), at),
                Ok(Event::CData(t)) => r.text(&t.into_inner(), at),
                Ok(Event::GeneralRef(g)) => {
                    let char_ref = g.resolve_char_ref();
                    let name = g.into_inner().into_owned();
                    let resolved = match char_ref {
                        Ok(Some(c)) => Some(c.to_string()),
                        _ => predefined(&name).map(str::to_string),
                    };
                    let s = resolved.unwrap_or_else(|| {
                        r.warn(
                            at,
                            format!("unknown entity &{}; kept as written", clip(&name)),
                        );
                        format!("&{name};")
                    });
                    r.text(&s, at)
                }
                Ok(Event::Eof) => break 'outer,
                Ok(Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_)) => {}
                Err(e) => {
                    let err_at = base + reader.error_position() as usize;
                    let resume = text[err_at.min(text.len())..]
                        .char_indices()
                        .skip(1)
                        .find(|(_, c)| *c == '<')
                        .map(|(i, _)| err_at + i);
                    let what = match resume {
                        Some(_) => "skipped to the next tag",
                        None => "the rest is skipped",
                    };
                    r.warn(err_at, format!("XML error: {e}; {what}"));
                    match resume {
                        Some(next) if next > base => base = next,
                        _ => break 'outer,
                    }
                    continue 'outer;
                }
            }
        }
    }
    if !r.open.is_empty() {
        let n = r.open.len();
        r.warn(
            text.len(),
            format!("end of input with {n} element(s) not closed; closed here"),
        );
    }
    r.doc
}

/// The five predefined XML entities.
fn predefined(name: &str) -> Option<&'static str> {
    Some(match name {
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        _ => return None,
    })
}

struct Run<'a> {
    ix: &'a LineIndex<'a>,
    doc: XmlDoc,
    /// Indices of the open elements.
    open: Vec<usize>,
}

impl Run<'_> {
    fn warn(&mut self, at: usize, message: String) {
        self.doc.warnings.push(self.ix.warning(at, message));
    }

    fn start(&mut self, e: &BytesStart<'_>, at: usize, empty: bool) {
        let name = e.name().as_ref().to_string();
        let attrs = self.attributes(e, at);
        self.doc.elements.push(XmlElement {
            depth: self.open.len(),
            parent: self.open.last().copied(),
            name,
            attrs,
            text: String::new(),
            line: self.ix.line(at),
        });
        if !empty {
            self.open.push(self.doc.elements.len() - 1);
        }
    }

    fn attributes(&mut self, e: &BytesStart<'_>, at: usize) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for attr in e.html_attributes() {
            let attr = match attr {
                Ok(a) => a,
                Err(AttrError::Duplicated(_, _)) => {
                    self.warn(
                        at,
                        "duplicated attribute ignored (the first is kept)".into(),
                    );
                    continue;
                }
                Err(err) => {
                    self.warn(
                        at,
                        format!(
                            "attribute not readable ({err}); rest of the tag's attributes dropped"
                        ),
                    );
                    break;
                }
            };
            let key = attr.key.as_ref().to_string();
            let value = match attr.normalized_value(XmlVersion::Implicit1_0) {
                Ok(v) => v.into_owned(),
                Err(err) => {
                    self.warn(
                        at,
                        format!("attribute {}: {err}; raw value kept", clip(&key)),
                    );
                    attr.value.to_string()
                }
            };
            out.push((key, value));
        }
        out
    }

    fn end(&mut self, name: &str, at: usize) {
        let Some(pos) = self
            .open
            .iter()
            .rposition(|&i| self.doc.elements[i].name == name)
        else {
            self.warn(at, format!("stray end tag </{}> ignored", clip(name)));
            return;
        };
        for &i in &self.open[pos + 1..] {
            let msg = format!(
                "<{}> not closed before </{}>; closed here",
                clip(&self.doc.elements[i].name),
                clip(name)
            );
            self.doc.warnings.push(self.ix.warning(at, msg));
        }
        self.open.truncate(pos);
    }

    fn text(&mut self, s: &str, at: usize) {
        if s.trim().is_empty() {
            return;
        }
        match self.open.last() {
            Some(&i) => self.doc.elements[i].text.push_str(s),
            None => self.warn(
                at,
                format!("text outside the elements ignored: {:?}", clip(s.trim())),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(d: &XmlDoc) -> Vec<(usize, &str)> {
        d.elements
            .iter()
            .map(|e| (e.depth, e.name.as_str()))
            .collect()
    }

    #[test]
    fn well_formed() {
        let d = read(
            "<?xml version=\"1.0\"?>\n<a x=\"1\" st:y='&amp;&#65;'>\n  <b/>hi &lt;<c>t</c></a>",
        );
        assert!(d.warnings.is_empty(), "{:?}", d.warnings);
        assert_eq!(names(&d), [(0, "a"), (1, "b"), (1, "c")]);
        assert_eq!(d.elements[0].attr("st:y"), Some("&A"));
        assert_eq!(d.elements[0].text, "hi <");
        assert_eq!(d.elements[2].text, "t");
        assert_eq!(d.elements[2].parent, Some(0));
        assert_eq!(d.elements[1].line, 3);
    }

    #[test]
    fn repairs() {
        let d = read("<a><b><c></a></zz>tail<d k=v flag>x &nope; y</d><e");
        let msgs: Vec<&str> = d.warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(names(&d), [(0, "a"), (1, "b"), (2, "c"), (0, "d")]);
        assert!(
            msgs.iter()
                .filter(|m| m.contains("not closed before"))
                .count()
                == 2,
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|m| m.contains("stray end tag </zz>")),
            "{msgs:?}"
        );
        assert!(
            msgs.iter().any(|m| m.contains("outside the elements")),
            "{msgs:?}"
        );
        assert!(msgs.iter().any(|m| m.contains("XML error")), "{msgs:?}");
        assert_eq!(d.elements[3].attr("k"), Some("v"));
        assert_eq!(d.elements[3].attr("flag"), Some(""));
        assert_eq!(d.elements[3].text, "x &nope; y");
    }

    #[test]
    fn resumes_after_an_error() {
        let d = read("<a><b x=\"1\" x=\"2\"/><!-- ok --><c \"bad\"/><d/></a>");
        let got = names(&d);
        assert!(got.contains(&(1, "d")), "{got:?} {:?}", d.warnings);
        assert!(!d.warnings.is_empty());
    }

    #[test]
    fn truncated_input_closes_open_elements() {
        let d = read("<a><b><c>");
        assert_eq!(d.elements.len(), 3);
        assert!(
            d.warnings
                .last()
                .unwrap()
                .message
                .contains("3 element(s) not closed")
        );
        assert!(read("").elements.is_empty());
        assert!(read("<<<<>>>>&&&").elements.len() <= 8);
    }
}
