//! Content renaming: training rows whose content words (labels, names, typed values) are
//! replaced by made-up words, one replacement throughout a row.
//!
//! Why: the generators draw content from small word lists and a handful of real dumps, so a
//! whole domain's training rows hold a few hundred distinct words (368 for Android, 292 for Web,
//! 198 for the desktop in the demo's data). A small model then learns to write the screens it
//! has memorised instead of copying the one in front of it, and fails on held-out states,
//! whose words it has never seen. With every row's content renamed, memorising cannot predict
//! the observation: only copying from the context can, which is what a world model must do.
//!
//! A word is a maximal run of ASCII letters of at least [`MIN_WORD`] letters. Kept as they are:
//! words found in at least `keep_share` of the domain's rows *and* in rows of at least two
//! sources (dumps, pages, built-in families: format keywords, roles, classes, the thinking
//! sentences' wording, but not one real page's text), words of the system prompt, the words of
//! each thinking sentence outside its quotes, and every word of an action that
//! is not inside a string literal, plus JSON keys and the `action` field (so `pyautogui.moveTo`
//! or `{"action": "long_press"}` stay what they are). The rest is renamed consistently across
//! the row's prompts, observations and thinking, keeping each word's case pattern. A renamed
//! row whose actions no longer parse as they did (same structure, renamed strings) is kept in
//! its original form.
//!
//! Transitions stay exact only where the dynamics do not read the words: the GUI domains'
//! generators compute edits, toggles and navigation from structure alone. Terminal rows are
//! real bash output (`sort`, `wc -c` and `tr` read the words), so they are never renamed.

use std::collections::{HashMap, HashSet};

use crate::rng::Rng;
use agentworld_world::action::parse_action;
use agentworld_world::{Domain, Row};

/// Shortest run of letters treated as a word.
pub const MIN_WORD: usize = 3;

/// How rows are renamed.
#[derive(Debug, Clone, PartialEq)]
pub struct RenameConfig {
    /// Share of each GUI domain's rows renamed (0 to 1).
    pub share: f64,
    /// Words found in at least this share of a domain's rows are kept.
    pub keep_share: f64,
    /// Seed of the choice of rows and of the made-up words.
    pub seed: u64,
}

impl Default for RenameConfig {
    fn default() -> Self {
        Self {
            share: 0.8,
            keep_share: 0.05,
            seed: 0,
        }
    }
}

/// The spans (byte ranges) of words in `text`. The letter of an escape (`\n`, `\t`, `\u…`
/// in a quoted compact-form text) is not part of a word: renaming `\nTab` as a word would
/// break the line break.
fn words(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            if bytes[i] == b'\\' {
                i += 2;
            } else if bytes[i].is_ascii_alphabetic() {
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
                    i += 1;
                }
                if i - start >= MIN_WORD {
                    return Some((start, i));
                }
            } else {
                i += 1;
            }
        }
        None
    })
}

/// Every text of a row the model reads or writes.
fn texts(row: &Row) -> impl Iterator<Item = &str> {
    row.prompt
        .iter()
        .chain(&row.response)
        .map(String::as_str)
        .chain(row.thinking.as_deref())
}

/// The action of each turn prompt (inside its ```` ```json ```` fence).
fn actions(row: &Row) -> Vec<&str> {
    row.prompt
        .iter()
        .filter_map(|p| {
            let start = p.find("```json\n")? + "```json\n".len();
            let end = start + p[start..].find("\n```")?;
            Some(&p[start..end])
        })
        .collect()
}

/// Words of an action that are structure rather than content: outside string literals, JSON
/// keys, and the value of an `action` field.
fn action_keywords(action: &str, out: &mut HashSet<String>) {
    let mut add = |s: &str| {
        for (a, b) in words(s) {
            out.insert(s[a..b].to_string());
        }
    };
    match serde_json::from_str::<serde_json::Value>(action) {
        // Code written as one JSON string (`"click('12')"`, pyautogui): its own literals are
        // content, the rest is structure.
        Ok(serde_json::Value::String(code)) => add(&outside_literals(&code)),
        Ok(value) => {
            fn walk(v: &serde_json::Value, add: &mut dyn FnMut(&str)) {
                match v {
                    serde_json::Value::Object(m) => {
                        for (k, v) in m {
                            add(k);
                            if let (true, Some(s)) = (k == "action" || k == "name", v.as_str()) {
                                add(s);
                            }
                            walk(v, add);
                        }
                    }
                    serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, add)),
                    _ => {}
                }
            }
            walk(&value, &mut add);
        }
        Err(_) => add(&outside_literals(action)),
    }
}

/// `code` with the contents of its `'…'` and `"…"` literals blanked out.
fn outside_literals(code: &str) -> String {
    let mut literals = agentworld_world::action::Literals::default();
    code.chars()
        .map(|c| if literals.inside(c) { ' ' } else { c })
        .collect()
}

const ONSETS: [&str; 24] = [
    "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "br",
    "cl", "dr", "st", "tr", "sh",
];
const VOWELS: [&str; 8] = ["a", "e", "i", "o", "u", "ai", "ou", "ea"];
const CODAS: [&str; 8] = ["", "", "n", "r", "s", "l", "m", "t"];

/// A pronounceable made-up word of about `len` letters, in the case pattern of `like`.
pub fn made_up_word(rng: &mut Rng, len: usize, like: &str) -> String {
    let mut w = String::new();
    let target = len.clamp(MIN_WORD, 12);
    while w.len() < target {
        w.push_str(rng.pick(&ONSETS).unwrap_or(&"b"));
        w.push_str(rng.pick(&VOWELS).unwrap_or(&"a"));
        w.push_str(rng.pick(&CODAS).unwrap_or(&""));
    }
    let upper = like.len() > 1 && like.chars().all(|c| c.is_ascii_uppercase());
    let capital = like.chars().next().is_some_and(|c| c.is_ascii_uppercase());
    if upper {
        w.to_ascii_uppercase()
    } else if capital {
        let mut c = w.chars();
        c.next()
            .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
            .unwrap_or_default()
    } else {
        w
    }
}

/// `lo` to `hi` words (first capitalised) for made-up states: each a made-up word three times
/// in five, else one of `common` (real words of that kind of screen, so text is not all
/// invented). A made-up word equal to one of `avoid` (case aside: the held-out words, which
/// training rows must never hold) is drawn again.
pub fn made_up_phrase(
    rng: &mut Rng,
    lo: usize,
    hi: usize,
    common: &[&str],
    avoid: &HashSet<String>,
) -> String {
    let n = lo + rng.below(hi.saturating_sub(lo) + 1);
    (0..n)
        .map(|i| {
            let like = if i == 0 { "Aa" } else { "a" };
            match rng.pick(common) {
                Some(w) if !rng.chance(0.6) => {
                    if i == 0 {
                        let mut c = w.chars();
                        c.next()
                            .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                            .unwrap_or_default()
                    } else {
                        w.to_string()
                    }
                }
                _ => loop {
                    let len = 3 + rng.below(6);
                    let w = made_up_word(rng, len, like);
                    if !avoid.contains(&w.to_ascii_lowercase()) {
                        break w;
                    }
                },
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words (lower case) of `lists`, for [`made_up_phrase`]'s `avoid`.
pub fn word_set(lists: &[&[&str]]) -> HashSet<String> {
    lists
        .iter()
        .flat_map(|l| l.iter())
        .flat_map(|text| words(text).map(move |(a, b)| text[a..b].to_ascii_lowercase()))
        .collect()
}

/// `text` with every word in `map` replaced.
fn apply(text: &str, map: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (a, b) in words(text) {
        if let Some(new) = map.get(&text[a..b]) {
            out.push_str(&text[last..a]);
            out.push_str(new);
            last = b;
        }
    }
    out.push_str(&text[last..]);
    out
}

/// Where a row's state came from (its `source` field: a dump, page or built-in family), for
/// telling a format's words (found across sources) from one source's content.
fn source(row: &Row) -> &str {
    row.extra
        .get("source")
        .and_then(|v| v.as_str())
        .unwrap_or(&row.id)
}

/// The kept words of one domain's rows (see the module docs).
fn kept_words(rows: &[&Row], keep_share: f64) -> HashSet<String> {
    let mut df: HashMap<&str, usize> = HashMap::new();
    let mut sources: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut kept = HashSet::new();
    for row in rows {
        let mut seen = HashSet::new();
        for t in texts(row) {
            for (a, b) in words(t) {
                seen.insert(&t[a..b]);
            }
        }
        for w in seen {
            *df.entry(w).or_default() += 1;
            sources.entry(w).or_default().insert(source(row));
        }
        for (a, b) in words(&row.system_str) {
            kept.insert(row.system_str[a..b].to_string());
        }
        for action in actions(row) {
            action_keywords(action, &mut kept);
        }
        // The thinking sentence quotes what it names; its other words are its wording.
        if let Some(thinking) = &row.thinking {
            let wording = outside_literals(thinking);
            for (a, b) in words(&wording) {
                kept.insert(wording[a..b].to_string());
            }
        }
    }
    let need = (keep_share * rows.len() as f64).ceil().max(1.0) as usize;
    let content = generator_content_words();
    kept.extend(
        df.into_iter()
            .filter(|&(w, n)| {
                n >= need && sources.get(w).is_some_and(|s| s.len() >= 2) && !content.contains(w)
            })
            .map(|(w, _)| w.to_string()),
    );
    kept
}

/// The words the generators themselves draw content from (the built-in site's names, products,
/// cities and adjectives; the Android texts of augmented and made-up screens): content
/// however often they occur. Found in many rows of many sources, they passed for format words
/// and were kept, and the model learned them: on held-out Web pages it wrote a training
/// site's name ("Coralbay", 693 training page titles) in place of the real one.
fn generator_content_words() -> HashSet<&'static str> {
    let site = &crate::web::site::TRAIN_WORDS;
    let lists: [&[&'static str]; 9] = [
        site.first,
        site.last,
        site.company,
        site.product,
        site.adjective,
        site.city,
        &crate::android::augment::UI_TEXTS,
        &crate::android::moves::ITEM_TEXTS,
        &crate::android::screen::SHORT_TEXTS,
    ];
    lists
        .into_iter()
        .flatten()
        .flat_map(|text| words(text).map(move |(a, b)| &text[a..b]))
        .collect()
}

/// Renames one row's content words; `None` when nothing is renamed or the renamed actions no
/// longer parse as the original ones do.
fn rename_row(row: &Row, kept: &HashSet<String>, rng: &mut Rng) -> Option<Row> {
    let domain = row.domain().ok()?;
    let mut map: HashMap<String, String> = HashMap::new();
    let mut used: HashSet<String> = HashSet::new();
    let all: HashSet<&str> = texts(row)
        .flat_map(|t| words(t).map(move |(a, b)| &t[a..b]))
        .collect();
    let mut compounds = Vec::new();
    for t in texts(row) {
        for (a, b) in words(t) {
            let w = &t[a..b];
            if kept.contains(w) || map.contains_key(w) {
                continue;
            }
            // Text appended to a field joins two words ("pizza" + "café" = "pizzacafé"): the
            // joined word is renamed as its two parts, after them.
            let split = (MIN_WORD..=w.len().saturating_sub(MIN_WORD))
                .find(|&i| all.contains(&w[..i]) && all.contains(&w[i..]));
            if let Some(i) = split {
                compounds.push((w, i));
                continue;
            }
            let new = loop {
                let candidate = made_up_word(rng, w.len(), w);
                if !kept.contains(&candidate) && used.insert(candidate.clone()) {
                    break candidate;
                }
            };
            map.insert(w.to_string(), new);
        }
    }
    for (w, i) in compounds {
        let part = |p: &str| map.get(p).cloned().unwrap_or_else(|| p.to_string());
        let joined = part(&w[..i]) + &part(&w[i..]);
        map.insert(w.to_string(), joined);
    }
    if map.is_empty() {
        return None;
    }
    let mut out = row.clone();
    for p in out.prompt.iter_mut().chain(out.response.iter_mut()) {
        *p = apply(p, &map);
    }
    out.current_prompt = apply(&row.current_prompt, &map);
    out.thinking = row.thinking.as_deref().map(|t| apply(t, &map));
    // The actions must mean what they meant: same parse, renamed strings.
    for (old, new) in actions(row).into_iter().zip(actions(&out)) {
        match (parse_action(domain, old), parse_action(domain, new)) {
            (Ok(a), Ok(b)) if apply(&format!("{a:?}"), &map) == format!("{b:?}") => {}
            (Err(_), Err(_)) => {}
            _ => return None,
        }
    }
    Some(out)
}

/// Renames about `config.share` of the GUI rows (Web, Android, OS) in place; terminal and
/// other rows are left as they are. Returns how many rows were renamed.
pub fn rename_content(rows: &mut [Row], config: &RenameConfig) -> usize {
    let mut renamed = 0;
    for domain in [Domain::Web, Domain::Android, Domain::Os] {
        let members: Vec<usize> = (0..rows.len())
            .filter(|&i| rows[i].domain().ok() == Some(domain))
            .collect();
        let kept = kept_words(
            &members.iter().map(|&i| &rows[i]).collect::<Vec<_>>(),
            config.keep_share,
        );
        let mut rng = Rng::fork(config.seed, domain as u64 + 1);
        for i in members {
            if !rng.chance(config.share) {
                continue;
            }
            if let Some(new) = rename_row(&rows[i], &kept, &mut rng) {
                rows[i] = new;
                renamed += 1;
            }
        }
    }
    renamed
}

#[cfg(test)]
mod tests;
