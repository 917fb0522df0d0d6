//! `uiautomator`: the XML that `adb shell uiautomator dump` writes (`<hierarchy><node …>`).
//! Read by the Android tree reader; see [`parse_android_xml`](super::parse_android_xml).

use crate::Result;
use crate::state::{ParsedState, StateParser};

/// The `uiautomator` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct Uiautomator;

impl StateParser for Uiautomator {
    fn name(&self) -> &'static str {
        "uiautomator"
    }

    fn description(&self) -> &'static str {
        "Android uiautomator dump: <hierarchy><node class text resource-id bounds=\"[x1,y1][x2,y2]\" …>"
    }

    /// 0.95 with `<hierarchy` and `<node`, 0.8 with `<node` and `bounds=` alone.
    fn detect(&self, text: &str) -> f32 {
        match super::android_xml::markers(text) {
            (true, true, _) => 0.95,
            (false, true, _) if text.contains("bounds=\"[") => 0.8,
            _ => 0.0,
        }
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        super::parse_android_xml(text)
    }
}
