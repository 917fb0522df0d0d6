//! Example states and actions, fetched from `examples/` (trunk copies the repository's
//! `examples/` folder next to the app).

use agentworld_world::Domain;

/// One example: a state file and an action to start with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    /// Its domain.
    pub domain: Domain,
    /// What it is.
    pub label: &'static str,
    /// The state file, relative to the app.
    pub path: &'static str,
    /// A first action.
    pub action: &'static str,
}

/// Every example, in menu order.
pub const EXAMPLES: &[Example] = &[
    Example {
        domain: Domain::Android,
        label: "Settings: Network & internet (uiautomator dump)",
        path: "examples/android/settings.xml",
        action: r##"{"action": "type", "target": "#search_src_text", "text": "bluetooth"}"##,
    },
    Example {
        domain: Domain::Android,
        label: "Settings: element list (AndroidWorld)",
        path: "examples/android/androidworld_elements.txt",
        action: r#"{"action": "tap", "target": {"index": 3}}"#,
    },
    Example {
        domain: Domain::Web,
        label: "Tea shop cart (HTML with bids)",
        path: "examples/web/shop.html",
        action: "click('27')",
    },
    Example {
        domain: Domain::Web,
        label: "Newsletter form (accessibility tree, the demo model's form)",
        path: "examples/web/newsletter_axtree.txt",
        action: "click('19')",
    },
    Example {
        domain: Domain::Web,
        label: "BrowserGym accessibility tree",
        path: "examples/web/browsergym_axtree.txt",
        action: "click('9')",
    },
    Example {
        domain: Domain::Web,
        label: "WebArena accessibility tree",
        path: "examples/web/webarena_axtree.txt",
        action: "click('1254')",
    },
    Example {
        domain: Domain::Os,
        label: "Ubuntu desktop with gedit (OSWorld XML)",
        path: "examples/os/osworld_a11y.xml",
        action: "pyautogui.click(1735, 52)",
    },
    Example {
        domain: Domain::Os,
        label: "The same desktop as an OSWorld TSV",
        path: "examples/os/osworld_a11y.tsv",
        action: "pyautogui.hotkey('ctrl', 's')",
    },
    Example {
        domain: Domain::Os,
        label: "A small desktop (OSWorld table, the demo model's form)",
        path: "examples/os/desktop.tsv",
        action: "pyautogui.click(516, 212)",
    },
    Example {
        domain: Domain::Terminal,
        label: "A shell in ~/docs",
        path: "examples/terminal/screen1.txt",
        action: r#"[{"keystrokes": "ls -l\n", "duration": 0.5}]"#,
    },
];

/// The examples of `domain`.
pub fn of(domain: Domain) -> impl Iterator<Item = (usize, &'static Example)> {
    EXAMPLES
        .iter()
        .enumerate()
        .filter(move |(_, e)| e.domain == domain)
}

/// The domains the playground draws, in menu order.
pub const DOMAINS: [Domain; 4] = [Domain::Android, Domain::Web, Domain::Os, Domain::Terminal];
