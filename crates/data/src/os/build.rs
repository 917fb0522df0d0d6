//! Building desktops for a row: the mini desktop (a panel of launchers and up to two app
//! windows with made-up contents) and real AT-SPI trees under our panel, varied with the
//! [`Rng`] from split-specific word lists.

use super::desktop::{AppKind, Control, DesktopNode, DesktopTree};
use crate::rng::Rng;

/// The word lists one split draws from (training and held-out lists never overlap).
#[derive(Debug, Clone, Copy)]
pub struct Words {
    /// File name stems.
    pub files: &'static [&'static str],
    /// Folder names.
    pub folders: &'static [&'static str],
    /// Check box labels.
    pub options: &'static [&'static str],
    /// Settings window titles.
    pub titles: &'static [&'static str],
    /// Disabled button labels.
    pub buttons: &'static [&'static str],
    /// Text typed into fields.
    pub phrases: &'static [&'static str],
}

/// Training words.
pub const TRAIN_WORDS: Words = Words {
    files: &[
        "notes", "report", "budget", "draft", "todo", "letter", "recipes", "travel", "invoice",
        "agenda", "summary", "ideas",
    ],
    folders: &[
        "Documents",
        "Music",
        "Pictures",
        "Projects",
        "Downloads",
        "Desktop",
    ],
    options: &[
        "Mute",
        "Autosave",
        "Wi-Fi",
        "Bluetooth",
        "Night Light",
        "Show Hidden Files",
        "Spell Check",
        "Auto Update",
        "Sound Effects",
        "Line Numbers",
    ],
    titles: &["Settings", "Preferences", "Options"],
    buttons: &["Apply", "Reset", "Save"],
    phrases: &[
        "hello",
        "world",
        "meeting at noon",
        "buy milk",
        "call mom",
        "draft two",
        "fix the bug",
        "lunch",
        "ok",
        "see notes",
    ],
};

/// Held-out words: test rows only.
pub const TEST_WORDS: Words = Words {
    files: &[
        "minutes", "poems", "journal", "receipts", "syllabus", "roster",
    ],
    folders: &["Archive", "Videos", "Templates"],
    options: &["Airplane Mode", "Large Text", "Location", "Do Not Disturb"],
    titles: &["Configuration", "Control Panel"],
    buttons: &["Confirm", "Submit"],
    phrases: &["see you soon", "pay rent", "ship it", "quarterly plan"],
};

const LAUNCHABLE: [AppKind; 3] = [AppKind::Editor, AppKind::Settings, AppKind::Files];

/// The panel: 2 or 3 launchers of the launchable apps, in a random order, at the top.
pub fn panel(rng: &mut Rng) -> DesktopTree {
    let mut kinds = LAUNCHABLE.to_vec();
    rng.shuffle(&mut kinds);
    kinds.truncate(rng.range(2, 3) as usize);
    let mut x = rng.range(4, 24) as i32;
    let mut t = DesktopTree::default();
    for k in kinds {
        let w = k.launcher_name().len() as i32 * 8 + 24;
        let b = (x, 4, w, 24);
        t.nodes.push(DesktopNode::new(
            "push-button",
            k.launcher_name(),
            b,
            Control::Launcher(k),
        ));
        x += w + rng.range(6, 16) as i32;
    }
    t
}

/// Adds a window of `kind` with made-up contents at a random place.
pub fn window(t: &mut DesktopTree, kind: AppKind, words: &Words, rng: &mut Rng) {
    let pick = |rng: &mut Rng, l: &'static [&'static str]| *rng.pick(l).unwrap_or(&"x");
    let (w, h) = match kind {
        AppKind::Editor => (rng.range(360, 520) as i32, rng.range(200, 320) as i32),
        AppKind::Settings => (rng.range(320, 420) as i32, rng.range(180, 240) as i32),
        AppKind::Files | AppKind::Find => (rng.range(340, 440) as i32, rng.range(180, 260) as i32),
    };
    let x = rng.range(20, 1900 - w as i64) as i32;
    let y = rng.range(48, 1060 - h as i64) as i32;
    match kind {
        AppKind::Editor => {
            let title = format!("{}.txt - Text Editor", pick(rng, words.files));
            let id = t.push_window(kind, &title, (x, y, w, h));
            let mut f =
                DesktopNode::new("text", "", (x + 8, y + 36, w - 16, h - 44), Control::Field);
            if rng.chance(0.5) {
                f.text = pick(rng, words.phrases).to_string();
            }
            t.push_in(id, f);
        }
        AppKind::Settings => {
            let id = t.push_window(kind, pick(rng, words.titles), (x, y, w, h));
            let mut opts = words.options.to_vec();
            rng.shuffle(&mut opts);
            for (k, name) in opts.iter().take(rng.range(1, 3) as usize).enumerate() {
                let b = (x + 16, y + 44 + 32 * k as i32, 200, 24);
                let mut c = DesktopNode::new("check-box", name, b, Control::CheckBox);
                c.description = if rng.chance(0.5) {
                    "checked"
                } else {
                    "unchecked"
                }
                .into();
                t.push_in(id, c);
            }
            if rng.chance(0.8) {
                let b = (x + w - 100, y + h - 40, 84, 28);
                let mut d = DesktopNode::new(
                    "push-button",
                    pick(rng, words.buttons),
                    b,
                    Control::Disabled,
                );
                d.description = "disabled".into();
                t.push_in(id, d);
            }
        }
        AppKind::Files => {
            let title = format!("{} - Files", pick(rng, words.folders));
            let id = t.push_window(kind, &title, (x, y, w, h));
            let mut names = words.files.to_vec();
            rng.shuffle(&mut names);
            for (k, stem) in names.iter().take(rng.range(1, 3) as usize).enumerate() {
                let ext = pick(rng, &["txt", "pdf", "odt", "png"]);
                let b = (x + 8, y + 40 + 28 * k as i32, w - 16, 24);
                let item =
                    DesktopNode::new("list-item", &format!("{stem}.{ext}"), b, Control::Static);
                t.push_in(id, item);
            }
        }
        AppKind::Find => {
            let id = t.push_window(kind, "Find", (x, y, w, h));
            let mut f = DesktopNode::new(
                "text",
                "Search",
                (x + 16, y + 40, w - 32, 28),
                Control::Field,
            );
            if rng.chance(0.4) {
                f.text = pick(rng, words.phrases).to_string();
            }
            t.push_in(id, f);
            let mut c = DesktopNode::new(
                "check-box",
                "Match case",
                (x + 16, y + 80, 160, 24),
                Control::CheckBox,
            );
            c.description = if rng.chance(0.5) {
                "checked"
            } else {
                "unchecked"
            }
            .into();
            t.push_in(id, c);
            let mut d = DesktopNode::new(
                "push-button",
                "Find",
                (x + w - 100, y + h - 40, 84, 28),
                Control::Disabled,
            );
            d.description = "disabled".into();
            t.push_in(id, d);
        }
    }
    // a pre-opened window may have the focus in its field
    if rng.chance(0.3)
        && let Some(i) = t.nodes.iter().rposition(|n| n.control == Control::Field)
    {
        t.nodes[i].description = "focused".into();
    }
}

/// A mini desktop: the panel and up to two windows. Test desktops always hold the held-out
/// [`AppKind::Find`] window, training desktops never do. Returns the source name
/// (`mini:` and the window kinds) and the desktop.
pub fn mini(rng: &mut Rng, test: bool, words: &Words) -> (String, DesktopTree) {
    let mut t = panel(rng);
    let mut kinds: Vec<AppKind> = Vec::new();
    if test {
        kinds.push(AppKind::Find);
    }
    for _ in 0..rng.range(0, 2 - kinds.len() as i64) {
        let k = *rng.pick(&LAUNCHABLE).unwrap_or(&AppKind::Editor);
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    rng.shuffle(&mut kinds);
    for &k in &kinds {
        window(&mut t, k, words, rng);
    }
    let name = if kinds.is_empty() {
        "mini:panel".to_string()
    } else {
        let keys: Vec<&str> = kinds.iter().map(|k| k.key()).collect();
        format!("mini:{}", keys.join("+"))
    };
    (name, t)
}

/// A real tree under our panel: the tree's first nodes that fit `budget` characters of table,
/// shifted by a random offset.
pub fn real(rng: &mut Rng, tree: &DesktopTree, budget: usize) -> Option<DesktopTree> {
    let mut t = panel(rng);
    let (dx, dy) = (rng.range(0, 120) as i32, rng.range(0, 120) as i32);
    let keep = rng.range(2, tree.nodes.len() as i64) as usize;
    for n in tree.nodes.iter().take(keep) {
        let mut n = n.clone();
        n.bounds = n.bounds.map(|(x, y, w, h)| (x + dx, y + dy + 40, w, h));
        t.nodes.push(n);
        if t.to_tsv().len() > budget {
            t.nodes.pop();
            break;
        }
    }
    (t.nodes.iter().any(|n| n.control == Control::Static)).then_some(t)
}

/// Common words of window contents, mixed with made-up ones.
const UI_WORDS: [&str; 24] = [
    "volume", "display", "network", "recent", "backup", "sync", "theme", "fonts", "account",
    "privacy", "power", "keyboard", "mouse", "printer", "updates", "storage", "history",
    "language", "clock", "search", "sharing", "sound", "users", "startup",
];

/// `lo` to `hi` words, the first capitalised, never a held-out word.
fn phrase(rng: &mut Rng, lo: usize, hi: usize) -> String {
    use crate::rename::{made_up_phrase, word_set};
    static HELD_OUT: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    let w = &TEST_WORDS;
    let avoid = HELD_OUT.get_or_init(|| {
        word_set(&[
            w.files, w.folders, w.options, w.titles, w.buttons, w.phrases,
        ])
    });
    made_up_phrase(rng, lo, hi, &UI_WORDS, avoid)
}

/// Adds a made-up window of `kind` (its launcher's app, so relaunching it does nothing): a
/// made-up title and 1 to 6 controls in one or two columns (labels, check boxes, text fields,
/// disabled buttons, list items, paragraphs with text), at a random place and size.
fn made_up_window(t: &mut DesktopTree, kind: AppKind, rng: &mut Rng) {
    made_up_window_of(t, kind, rng, &MADE_UP)
}

/// What a made-up window holds: how many controls (`1 + below(controls)`, or from
/// `at_least`), the weights of label, check box, text field, disabled button, list item and
/// paragraph, and the chance that one of its fields has the focus.
struct Mix {
    at_least: usize,
    controls: usize,
    weights: [u32; 6],
    focus: f64,
}

/// The made-up desktops' windows ([`made_up`]).
const MADE_UP: Mix = Mix {
    at_least: 1,
    controls: 6,
    weights: [3, 3, 2, 1, 2, 1],
    focus: 0.3,
};

/// The drills' windows ([`drill`]): more controls, mostly check boxes and text fields.
const DRILL: Mix = Mix {
    at_least: 3,
    controls: 6,
    weights: [1, 4, 3, 1, 1, 0],
    focus: 0.5,
};

fn made_up_window_of(t: &mut DesktopTree, kind: AppKind, rng: &mut Rng, mix: &Mix) {
    let (w, h) = (rng.range(300, 640) as i32, rng.range(160, 400) as i32);
    let x = rng.range(20, 1900 - w as i64) as i32;
    let y = rng.range(48, 1060 - h as i64) as i32;
    let title = match rng.below(3) {
        0 => format!("{} - {}", phrase(rng, 1, 2), phrase(rng, 1, 1)),
        1 => format!(
            "{}.{}",
            phrase(rng, 1, 1).to_lowercase(),
            ["txt", "cfg", "log", "md"][rng.below(4)]
        ),
        _ => phrase(rng, 1, 3),
    };
    let id = t.push_window(kind, &title, (x, y, w, h));
    let columns = if w > 480 && rng.chance(0.4) { 2 } else { 1 };
    let col_w = (w - 32) / columns;
    let row_h = rng.range(24, 36) as i32;
    let rows = ((h - 52) / row_h).max(1) as usize;
    let n = (mix.at_least + rng.below(mix.controls)).min(rows * columns as usize);
    for k in 0..n {
        let (col, row) = (k / rows, k % rows);
        let b = (
            x + 16 + col as i32 * col_w,
            y + 40 + row as i32 * row_h,
            col_w - 16 - rng.range(0, 40) as i32,
            row_h - 4,
        );
        // (tag, control): label, check box, text field, disabled, list item, paragraph
        let node = match rng.weighted(&mix.weights) {
            0 => DesktopNode::new("label", &phrase(rng, 1, 3), b, Control::Static),
            1 => {
                let mut c = DesktopNode::new("check-box", &phrase(rng, 1, 3), b, Control::CheckBox);
                c.description = if rng.chance(0.5) {
                    "checked"
                } else {
                    "unchecked"
                }
                .into();
                c
            }
            2 => {
                let name = if rng.chance(0.5) {
                    phrase(rng, 1, 2)
                } else {
                    String::new()
                };
                let mut f = DesktopNode::new("text", &name, b, Control::Field);
                if rng.chance(0.5) {
                    f.text = phrase(rng, 1, 4).to_lowercase();
                }
                f
            }
            3 => {
                let mut d =
                    DesktopNode::new("push-button", &phrase(rng, 1, 1), b, Control::Disabled);
                d.description = "disabled".into();
                d
            }
            4 => DesktopNode::new("list-item", &phrase(rng, 1, 2), b, Control::Static),
            _ => {
                let mut p = DesktopNode::new("paragraph", &phrase(rng, 1, 2), b, Control::Static);
                p.text = phrase(rng, 2, 6);
                p
            }
        };
        t.push_in(id, node);
    }
    // at most one focused field on the desktop: only this window's, and only when none is
    if rng.chance(mix.focus)
        && t.focused().is_none()
        && let Some(i) = t
            .nodes
            .iter()
            .rposition(|n| n.control == Control::Field && n.window == Some(id))
    {
        t.nodes[i].description = "focused".into();
    }
}

/// A made-up desktop: the panel and one or two made-up windows (see [`made_up_window`]), so
/// that training desktops are not all the mini desktop's few layouts. Returns the source name
/// (`synthetic`) and the desktop.
pub fn made_up(rng: &mut Rng) -> (String, DesktopTree) {
    let mut t = panel(rng);
    let mut kinds = LAUNCHABLE.to_vec();
    rng.shuffle(&mut kinds);
    for &k in kinds.iter().take(rng.range(1, 2) as usize) {
        made_up_window(&mut t, k, rng);
    }
    ("synthetic".to_string(), t)
}

/// A drill desktop ([`super::OsDataConfig::drill_share`]): the panel and one made-up window of
/// 3 to 8 controls, mostly check boxes and text fields, one field focused half the time, so
/// that which line a click edits is told only by its position. Returns the source name
/// (`drill`) and the desktop.
pub fn drill(rng: &mut Rng) -> (String, DesktopTree) {
    let mut t = panel(rng);
    let kind = LAUNCHABLE[rng.below(LAUNCHABLE.len())];
    made_up_window_of(&mut t, kind, rng, &DRILL);
    ("drill".to_string(), t)
}
