//! The recipe's data phase: the system prompts of each domain, where the real states come
//! from, and the rows generated from them (see the [`super`] module's step 1).

use std::path::{Path, PathBuf};

use agentworld_data::android::Dump;
use agentworld_data::{
    AndroidDataConfig, AtspiTree, OsDataConfig, TerminalDataConfig, WebDataConfig, WebPage,
    generate_android, generate_os, generate_terminal, generate_web,
};
use agentworld_world::{Row, Split};

use super::DemoRecipe;
use crate::error::Result;

/// System prompt the demo model is trained with for the terminal domain (our own words).
pub const TERMINAL_PROMPT: &str = "You are a Terminal World Model. Given the agent's keystrokes, predict the next terminal screen exactly as a Linux shell would show it. Think in one sentence, then write the screen in one <predicted_observation> block.";

/// System prompt the demo model is trained with for the Android domain (our own words).
pub const ANDROID_PROMPT: &str = "You are an Android World Model. The screen is a UI hierarchy in android-compact form: one node per line, indented by depth. Given the agent's UI action, predict the next hierarchy in the same form, changing only what the action changes. Think in one sentence, then write it in one <predicted_observation> block.";

/// System prompt the demo model is trained with for the Web domain (our own words).
pub const WEB_PROMPT: &str = "You are a Web World Model. The page is an accessibility tree in BrowserGym form: one `[bid] role 'name'` node per line, indented by depth. Given the agent's browser action, predict the next tree in the same form: an edit changes only its element, a link click loads the linked page, go_back returns to the previous one. Think in one sentence, then write it in one <predicted_observation> block.";

/// System prompt the demo model is trained with for the OS (desktop) domain (our own words).
pub const OS_PROMPT: &str = "You are a Desktop World Model. The screen is the accessibility table OSWorld agents read: a header line, then one node per line with tab-separated tag, name, text, class, description, position and size. Given the agent's pyautogui action, predict the next table in the same form: a click toggles a check box or focuses a field, typing fills the focused field, a launcher opens its window, Close removes it. Think in one sentence, then write it in one <predicted_observation> block.";

/// The domains the demo model knows, with the system prompt it is trained with.
pub const PROMPTS: [(&str, &str); 4] = [
    ("terminal", TERMINAL_PROMPT),
    ("android", ANDROID_PROMPT),
    ("web", WEB_PROMPT),
    ("os", OS_PROMPT),
];

/// Where the demo data's real states come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoSources {
    /// uiautomator dumps (`*.xml`).
    pub android_dumps: PathBuf,
    /// Real HTML pages (`*.html`).
    pub web_pages: PathBuf,
    /// Real AT-SPI desktop trees (`*.xml`).
    pub os_trees: PathBuf,
}

impl DemoSources {
    /// The folders of `../shared/cases` (`android/`, `web/browsergym/`, `os/`).
    pub fn from_cases(cases: &Path) -> Self {
        Self {
            android_dumps: cases.join("android"),
            web_pages: cases.join("web/browsergym"),
            os_trees: cases.join("os"),
        }
    }
}

/// Generates the data set; returns (train, held-out) rows.
///
/// # Errors
/// Sandbox or dump failures.
pub fn make_data(recipe: &DemoRecipe, sources: &DemoSources) -> Result<(Vec<Row>, Vec<Row>)> {
    let terminal = generate_terminal(&TerminalDataConfig {
        n: recipe.terminal_rows,
        seed: recipe.seed,
        system_prompt: TERMINAL_PROMPT.into(),
        ..Default::default()
    })?;
    let android = generate_android(&AndroidDataConfig {
        n: recipe.android_rows,
        seed: recipe.seed,
        dumps: Dump::load_dir(&sources.android_dumps)?,
        synthetic_share: recipe.android_synthetic_share,
        system_prompt: ANDROID_PROMPT.into(),
        ..Default::default()
    })?;
    let web = generate_web(&WebDataConfig {
        n: recipe.web_rows,
        seed: recipe.seed,
        pages: WebPage::load_dir(&sources.web_pages)?,
        // The page with a checkbox and a text field, so held-out real-page rows are not all
        // no-ops (the last page by name, example.html, has only a link).
        held_out: Some(vec!["basic_iframe_site_inner-iframe".into()]),
        synthetic_share: recipe.web_synthetic_share,
        drill_share: recipe.drill_share,
        system_prompt: WEB_PROMPT.into(),
        ..Default::default()
    })?;
    let os = generate_os(&OsDataConfig {
        n: recipe.os_rows,
        seed: recipe.seed,
        trees: AtspiTree::load_dir(&sources.os_trees)?,
        synthetic_share: recipe.os_synthetic_share,
        drill_share: recipe.drill_share,
        system_prompt: OS_PROMPT.into(),
        ..Default::default()
    })?;
    let (test, train): (Vec<Row>, Vec<Row>) = terminal
        .into_iter()
        .chain(android)
        .chain(web)
        .chain(os)
        .partition(|r| r.split == Some(Split::Test));
    Ok((train, test))
}
