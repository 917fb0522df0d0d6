//! A state in the representation a model reads, from its card's `state_formats`
//! (`agentworld.json`): the demo model reads Android trees in `android-compact` form, Web pages
//! as BrowserGym accessibility trees (`axtree`) and desktops as OSWorld tables
//! (`osworld-tsv`). A state given as markup (a uiautomator dump, HTML, an OSWorld or AT-SPI XML
//! tree) is converted; anything else is sent as written. The `simulate` command and the web
//! playground both go through [`for_model`], so they send a model the same text.

use crate::domain::Domain;
use crate::error::{Error, Result};
use crate::state::Registry;
use crate::state::android::{parse_xml, render_compact};
use crate::state::desktop::DesktopTree;
use crate::state::web_page::html_to_axtree;

/// A state ready for the model, with what was done to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelState {
    /// The text to put in the prompt's `**Current State:**`.
    pub text: String,
    /// One line per conversion or reader warning ("HTML converted to an accessibility tree").
    pub notes: Vec<String>,
}

/// `state` (a `domain` state as the user gave it) in `format`, the model's format for the
/// domain (`None`: the model reads states as written).
///
/// # Errors
/// [`Error::State`] saying which format was expected, when the state looks like markup of the
/// domain's kind but cannot be read.
pub fn for_model(domain: Domain, state: &str, format: Option<&str>) -> Result<ModelState> {
    let as_written = || ModelState {
        text: state.to_string(),
        notes: Vec::new(),
    };
    if !state.trim_start().starts_with('<') {
        return Ok(as_written());
    }
    match (domain, format) {
        (Domain::Web, Some("axtree")) => {
            let text = html_to_axtree("the state", state).map_err(|e| {
                Error::State(format!(
                    "it looks like HTML but cannot be read: {e}; give the page's HTML or its \
                     accessibility tree (`[bid] role 'name'` lines)"
                ))
            })?;
            Ok(ModelState {
                text,
                notes: vec![
                    "HTML converted to an accessibility tree (the page's bids kept, else \
                     numbered in document order)"
                        .into(),
                ],
            })
        }
        (Domain::Os, Some("osworld-tsv")) => {
            let registry = Registry::standard();
            let parsed = ["osworld-xml", "atspi"]
                .iter()
                .filter_map(|f| registry.parse(f, state).ok())
                .find(|p| p.warnings.is_empty())
                .ok_or_else(|| {
                    Error::State(
                        "it looks like a desktop accessibility tree (XML) but does not parse as \
                         osworld-xml or atspi; give the OSWorld table (osworld-tsv) instead"
                            .into(),
                    )
                })?;
            Ok(ModelState {
                text: DesktopTree::from_tree(&parsed.tree).to_tsv(),
                notes: vec![format!(
                    "{} tree converted to an OSWorld table",
                    parsed.tree.format
                )],
            })
        }
        (Domain::Android, Some("android-compact")) => {
            let parsed = parse_xml(state).map_err(|e| {
                Error::State(format!(
                    "it looks like a uiautomator dump but does not parse: {e}; fix the XML \
                     there (`agentworld parse FILE` reads it leniently and shows what it \
                     recovers), dump the screen again, or give it in android-compact form"
                ))
            })?;
            let mut notes: Vec<String> = parsed.warnings.iter().map(|w| w.to_string()).collect();
            notes.push("UI dump converted to android-compact".into());
            Ok(ModelState {
                text: render_compact(&parsed.tree),
                notes,
            })
        }
        _ => Ok(as_written()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_converted_to_the_models_format() {
        let html =
            r#"<html><body><h1>Join</h1><input type="text" aria-label="Email"></body></html>"#;
        let web = for_model(Domain::Web, html, Some("axtree")).unwrap();
        assert!(web.text.contains("heading 'Join'"), "{}", web.text);
        assert!(web.text.contains("textbox 'Email'"), "{}", web.text);
        assert_eq!(web.notes.len(), 1);

        let dump = r#"<hierarchy><node class="android.widget.FrameLayout" bounds="[0,0][1080,2400]"><node class="android.widget.Button" text="OK" resource-id="com.x:id/ok" clickable="true" bounds="[0,0][100,100]"/></node></hierarchy>"#;
        let android = for_model(Domain::Android, dump, Some("android-compact")).unwrap();
        assert!(
            android.text.starts_with("FrameLayout [0,0][1080,2400]"),
            "{}",
            android.text
        );
        assert!(
            android.text.contains("Button #ok \"OK\""),
            "{}",
            android.text
        );
    }

    #[test]
    fn other_states_are_sent_as_written() {
        let tree = "RootWebArea 'A'\n\t[1] button 'Go'";
        assert_eq!(
            for_model(Domain::Web, tree, Some("axtree")).unwrap().text,
            tree
        );
        let html = "<html><body><p>x</p></body></html>";
        assert_eq!(for_model(Domain::Web, html, None).unwrap().text, html);
        assert_eq!(
            for_model(Domain::Terminal, "<b>", Some("axtree"))
                .unwrap()
                .text,
            "<b>"
        );
    }

    #[test]
    fn unreadable_markup_says_what_was_expected() {
        let e = for_model(Domain::Os, "<desktop><oops", Some("osworld-tsv")).unwrap_err();
        assert!(e.to_string().contains("osworld-tsv"), "{e}");
        let e =
            for_model(Domain::Android, "<hierarchy><node", Some("android-compact")).unwrap_err();
        assert!(e.to_string().contains("uiautomator dump"), "{e}");
        assert!(e.to_string().contains("android-compact form"), "{e}");
        // A state the user gave, not a data-generation failure.
        assert!(matches!(e, Error::State(_)), "{e:?}");
        let e = for_model(Domain::Web, "<html><body></div>", Some("axtree"));
        if let Err(e) = e {
            assert!(matches!(e, Error::State(_)), "{e:?}");
        }
    }
}
