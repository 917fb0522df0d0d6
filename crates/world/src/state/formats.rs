//! The state formats, one file each, all behind [`StateParser`].
//!
//! | name | domain | what |
//! |---|---|---|
//! | `uiautomator` | android | `uiautomator dump` XML |
//! | `appium` | android | Appium page source (class names as tags) |
//! | `android-compact` | android | our compact line form |
//! | `androidworld` | android | AndroidWorld element list (`UI element 3: UIElement(…)` or `[3] label (flags)`) |
//! | `droidbot` | android | DroidBot state JSON (flat `views` with parent/children indices) |
//! | `html` | web | an HTML page, with html5ever (iframe `srcdoc` documents read as children) |
//! | `axtree` | web | WebArena / BrowserGym accessibility-tree text |
//! | `som` | web | VisualWebArena Set-of-Marks text `[id] [TAG] [text]` |
//! | `mind2web` | web | Mind2Web / SeeAct candidate snippets (truncated, unbalanced HTML) |
//! | `osworld-xml` | os | OSWorld accessibility XML (`desktop-frame`, namespaced attributes) |
//! | `osworld-tsv` | os | OSWorld's linearised table (`tag\tname\ttext\tclass\t…`) |
//! | `atspi` | os | AT-SPI XML trees (at-spi2-core test fixtures) |
//! | `terminal` | terminal | a terminal screen, one node per line |
//! | `json` | mcp, search, swe | JSON tool results, one node per value |

mod android_xml;
mod androidworld;
mod appium;
mod atspi;
mod axtree;
mod compact;
mod droidbot;
mod html;
mod mind2web;
mod osworld_tsv;
mod osworld_xml;
mod som;
mod terminal;
mod tool_json;
mod uiautomator;

pub use android_xml::parse_android_xml;
pub use androidworld::AndroidWorld;
pub use appium::Appium;
pub use atspi::Atspi;
pub use axtree::AxTree;
pub use compact::AndroidCompact;
pub use droidbot::DroidBot;
pub use html::Html;
pub use mind2web::Mind2Web;
pub use osworld_tsv::{HEADER as OSWORLD_TSV_HEADER, OsworldTsv};
pub use osworld_xml::OsworldXml;
pub use som::SetOfMarks;
pub use terminal::Terminal;
pub use tool_json::ToolJson;
pub use uiautomator::Uiautomator;

use super::StateParser;

/// One instance of every parser, in registry order.
pub(crate) fn all() -> Vec<Box<dyn StateParser>> {
    vec![
        Box::new(Uiautomator),
        Box::new(Appium),
        Box::new(AndroidCompact),
        Box::new(AndroidWorld),
        Box::new(DroidBot),
        Box::new(Html),
        Box::new(AxTree),
        Box::new(SetOfMarks),
        Box::new(Mind2Web),
        Box::new(OsworldXml),
        Box::new(OsworldTsv),
        Box::new(Atspi),
        Box::new(Terminal),
        Box::new(ToolJson),
    ]
}

/// Of the first 400 non-blank lines not excluded by `skip`, the fraction that `matches`
/// accepts (0 when there are none).
pub(crate) fn line_fraction(
    text: &str,
    skip: impl Fn(&str) -> bool,
    matches: impl Fn(&str) -> bool,
) -> f32 {
    let (mut seen, mut hit) = (0u32, 0u32);
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !skip(l))
        .take(400)
    {
        seen += 1;
        hit += u32::from(matches(line));
    }
    if seen == 0 {
        0.0
    } else {
        hit as f32 / seen as f32
    }
}

/// The first `n` bytes of `text` (cut back to a character boundary), for cheap detection.
pub(crate) fn head(text: &str, n: usize) -> &str {
    let mut end = n.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
