//! `appium`: Appium page source for Android, whose elements are named after their class
//! (`<android.widget.FrameLayout …>`) under `<hierarchy … width height>`. Read by the Android
//! tree reader; see [`parse_android_xml`](super::parse_android_xml).

use crate::Result;
use crate::state::{ParsedState, StateParser};

/// The `appium` parser.
#[derive(Debug, Clone, Copy, Default)]
pub struct Appium;

impl StateParser for Appium {
    fn name(&self) -> &'static str {
        "appium"
    }

    fn description(&self) -> &'static str {
        "Appium page source for Android: elements named after their class (<android.widget.Button …>)"
    }

    /// 0.95 with class-name tags (`<android.…`) and no `<node`; 0.5 for a bare `<hierarchy>`.
    fn detect(&self, text: &str) -> f32 {
        match super::android_xml::markers(text) {
            (_, false, true) => 0.95,
            (true, false, false) => 0.5,
            _ => 0.0,
        }
    }

    fn parse(&self, text: &str) -> Result<ParsedState> {
        super::parse_android_xml(text)
    }
}
