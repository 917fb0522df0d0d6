//! Made-up pages: random small sites whose layout and words are new in every row, so that
//! training pages are not all variations of a handful of templates.
//!
//! The built-in families ([`super::site`]) vary names and the order of fields, but their
//! shapes repeat: a model trained on them learns those pages (a contact form has a heading, two
//! or three fields, a Topic select, a Send button) and writes a remembered node in place of the
//! one in its prompt. A made-up page cannot be remembered: a title and heading, then 3 to 8
//! blocks (a paragraph, a field, a checkbox, a select with made-up options, a list or a
//! navigation of links, an image, a button), some nested in a `list` or `navigation`, with
//! names mixing made-up words ([`made_up_phrase`]) and common UI words. Links lead to up to two
//! detail pages that link back; a button submits the form when the page has fields. Every
//! element behaves as the page model ([`super::page`]) defines, so the transitions stay exact.

use super::page::{Browser, Node, Page, Target};
use crate::rename::{made_up_phrase, word_set};
use crate::rng::Rng;

/// Common words of page text, mixed with made-up ones.
const UI_WORDS: [&str; 32] = [
    "account", "search", "filter", "latest", "news", "profile", "order", "details", "share",
    "help", "contact", "notes", "price", "date", "status", "review", "report", "team", "plan",
    "shipping", "today", "events", "more", "open", "saved", "new", "guide", "members", "update",
    "photos", "schedule", "support",
];

/// Button labels.
const BUTTONS: [&str; 8] = [
    "Submit", "Send", "Save", "Continue", "Apply", "Confirm", "Next", "Go",
];

/// `lo` to `hi` words, the first capitalised ([`made_up_phrase`]), never a held-out word.
fn phrase(rng: &mut Rng, lo: usize, hi: usize) -> String {
    static HELD_OUT: std::sync::OnceLock<std::collections::HashSet<String>> =
        std::sync::OnceLock::new();
    let avoid = HELD_OUT.get_or_init(|| word_set(&super::site::TEST_WORDS.lists()));
    made_up_phrase(rng, lo, hi, &UI_WORDS, avoid)
}

/// A short made-up value: words, a number, or a code.
fn value(rng: &mut Rng) -> String {
    match rng.below(4) {
        0 => format!("{}", rng.below(10_000)),
        1 => format!("{}-{}", phrase(rng, 1, 1), 10 + rng.below(990)),
        _ => phrase(rng, 1, 3),
    }
}

/// A select: a combobox of 2 to 4 made-up options, one of them selected, then its options.
fn select(rng: &mut Rng, disabled: bool) -> Vec<Node> {
    let k = 2 + rng.below(3);
    let mut options: Vec<String> = Vec::new();
    while options.len() < k {
        let o = phrase(rng, 1, 2);
        if !options.contains(&o) {
            options.push(o);
        }
    }
    let sel = rng.below(k);
    let mut nodes = vec![Node {
        value: Some(options[sel].clone()),
        disabled,
        ..Node::new(0, "combobox", phrase(rng, 1, 2))
    }];
    for (i, o) in options.into_iter().enumerate() {
        nodes.push(Node {
            checked: Some(i == sel),
            ..Node::new(1, "option", o)
        });
    }
    nodes
}

/// A detail page: a heading, one or two paragraphs, maybe a button, a link back to page 0.
fn detail(rng: &mut Rng, site: &str, name: &str, home: &str) -> Page {
    let mut nodes = vec![Node::new(0, "heading", name)];
    for _ in 0..1 + rng.below(2) {
        nodes.push(Node::new(0, "StaticText", phrase(rng, 2, 6)));
    }
    if rng.chance(0.4) {
        let mut b = Node::new(0, "button", BUTTONS[rng.below(BUTTONS.len())]);
        b.disabled = rng.chance(0.5);
        nodes.push(b);
    }
    nodes.push(Node {
        target: Target::Page(0),
        ..Node::new(0, "link", home)
    });
    Page {
        title: format!("{site} - {name}"),
        nodes,
    }
}

/// A made-up site (see the module docs): its first page and 0 to 2 detail pages, bids not
/// yet assigned.
pub(crate) fn made_up_site(rng: &mut Rng) -> Vec<Page> {
    let site = phrase(rng, 1, 1);
    let page_name = phrase(rng, 1, 2);
    let mut details: Vec<String> = Vec::new();
    let mut nodes = vec![Node::new(0, "heading", page_name.clone())];
    let mut fields = 0;
    let blocks = 3 + rng.below(6);
    // (block kind, weight): paragraph, textbox, checkbox, select, links, image, button
    let weights = [5, 5, 4, 3, 3, 1, 2];
    for _ in 0..blocks {
        match rng.weighted(&weights) {
            0 => nodes.push(Node::new(0, "StaticText", phrase(rng, 2, 7))),
            1 => {
                let mut n = Node {
                    value: Some(String::new()),
                    ..Node::new(0, "textbox", phrase(rng, 1, 2))
                };
                if rng.chance(0.3) {
                    n.value = Some(value(rng));
                }
                n.disabled = rng.chance(0.15);
                fields += 1;
                nodes.push(n);
            }
            2 => {
                let mut n = Node {
                    checked: Some(rng.chance(0.4)),
                    ..Node::new(0, "checkbox", phrase(rng, 1, 4))
                };
                n.disabled = rng.chance(0.15);
                fields += 1;
                nodes.push(n);
            }
            3 => {
                nodes.extend(select(rng, false));
                fields += 1;
            }
            4 => {
                let nav = rng.chance(0.5);
                nodes.push(Node::new(0, if nav { "navigation" } else { "list" }, ""));
                for _ in 0..2 + rng.below(3) {
                    let name = phrase(rng, 1, 3);
                    // up to two links lead to detail pages, the rest nowhere we know of
                    let target = if details.len() < 2 && rng.chance(0.6) {
                        details.push(name.clone());
                        Target::Page(details.len())
                    } else {
                        Target::None
                    };
                    let depth = if nav {
                        1
                    } else {
                        nodes.push(Node::new(1, "listitem", ""));
                        2
                    };
                    nodes.push(Node {
                        target,
                        ..Node::new(depth, "link", name)
                    });
                }
            }
            5 => nodes.push(Node::new(0, "img", phrase(rng, 1, 3))),
            _ => {
                let mut b = Node::new(0, "button", BUTTONS[rng.below(BUTTONS.len())]);
                b.disabled = rng.chance(0.2);
                nodes.push(b);
            }
        }
    }
    if fields > 0 && rng.chance(0.7) {
        let mut b = Node {
            target: Target::Submit,
            ..Node::new(0, "button", BUTTONS[rng.below(BUTTONS.len())])
        };
        b.disabled = rng.chance(0.2);
        nodes.push(b);
    }
    let mut pages = vec![Page {
        title: format!("{site} - {page_name}"),
        nodes,
    }];
    for name in &details {
        pages.push(detail(rng, &site, name, &page_name));
    }
    pages
}

/// A made-up site opened on its first page, bids numbered from a random base per page.
pub(crate) fn build(rng: &mut Rng) -> Browser {
    let mut pages = made_up_site(rng);
    for p in &mut pages {
        let base = 1 + rng.below(60);
        let mut r = rng.clone();
        p.assign_bids(base, || r.chance(0.2));
        rng.next_u64();
    }
    Browser::new(pages)
}

/// A drill page ([`super::WebDataConfig::drill_share`]): a made-up title and heading, then 3
/// to 7 form fields (text boxes, checkboxes, selects; a tenth of them disabled, text boxes
/// with a value three times in ten) and maybe a paragraph, one text box focused three pages in
/// ten; one page, bids numbered from a random base. Several fields share a role, so which
/// line an action edits is told only by its bid.
pub(crate) fn drill(rng: &mut Rng) -> Browser {
    let mut nodes = vec![Node::new(0, "heading", phrase(rng, 1, 2))];
    for _ in 0..3 + rng.below(5) {
        let disabled = rng.chance(0.1);
        match rng.weighted(&[4, 4, 2, 1]) {
            0 => nodes.push(Node {
                value: Some(if rng.chance(0.3) {
                    value(rng)
                } else {
                    String::new()
                }),
                disabled,
                ..Node::new(0, "textbox", phrase(rng, 1, 2))
            }),
            1 => nodes.push(Node {
                checked: Some(rng.chance(0.5)),
                disabled,
                ..Node::new(0, "checkbox", phrase(rng, 1, 3))
            }),
            2 => nodes.extend(select(rng, disabled)),
            _ => nodes.push(Node::new(0, "StaticText", phrase(rng, 2, 6))),
        }
    }
    if rng.chance(0.3) {
        let boxes: Vec<usize> = (0..nodes.len())
            .filter(|&i| nodes[i].role == "textbox" && !nodes[i].disabled)
            .collect();
        if let Some(&i) = rng.pick(&boxes) {
            nodes[i].focused = true;
        }
    }
    let mut page = Page {
        title: format!("{} - {}", phrase(rng, 1, 1), phrase(rng, 1, 2)),
        nodes,
    };
    let base = 1 + rng.below(60);
    let mut r = rng.clone();
    page.assign_bids(base, || r.chance(0.2));
    rng.next_u64();
    Browser::new(vec![page])
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentworld_world::state::StateParser;
    use agentworld_world::state::formats::AxTree;

    #[test]
    fn made_up_pages_parse_and_differ() {
        let mut seen = std::collections::HashSet::new();
        for seed in 0..50 {
            let mut rng = Rng::new(seed);
            let b = build(&mut rng);
            for p in &b.pages {
                let text = super::super::page::render(p);
                let parsed = AxTree.parse(&text).expect("a made-up page parses");
                assert!(parsed.warnings.is_empty(), "{text}\n{:?}", parsed.warnings);
                // every link that names a page names one the site has
                for n in &p.nodes {
                    if let Target::Page(i) = n.target {
                        assert!(i < b.pages.len(), "{text}");
                    }
                }
            }
            seen.insert(b.render());
        }
        assert_eq!(seen.len(), 50, "every seed draws a new page");
    }
}
