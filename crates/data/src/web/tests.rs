use super::page::{Act, Browser, Effect, Node, Page, Target};
use super::*;
use crate::row_tokens;
use agentworld_world::messages::OBSERVATION_MARKER;
use agentworld_world::state::StateParser;
use agentworld_world::state::formats::AxTree;

fn real_pages() -> Vec<WebPage> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/cases/web/browsergym"
    );
    if std::path::Path::new(dir).is_dir() {
        WebPage::load_dir(dir).unwrap_or_default()
    } else {
        Vec::new()
    }
}

fn cfg(n: usize, pages: Vec<WebPage>) -> WebDataConfig {
    WebDataConfig {
        n,
        seed: 7,
        pages,
        ..Default::default()
    }
}

/// The state of the first prompt, then each response's observation.
fn states(row: &Row) -> Vec<String> {
    let first = row.prompt[0]
        .split_once("**Current State:**\n")
        .map(|(_, s)| s.to_string())
        .expect("first prompt has a state");
    let mut out = vec![first];
    for r in &row.response {
        let s = r
            .strip_prefix(OBSERVATION_MARKER)
            .and_then(|s| s.strip_prefix('\n'))
            .expect("observation marker");
        out.push(s.to_string());
    }
    out
}

fn actions(row: &Row) -> Vec<String> {
    row.prompt
        .iter()
        .map(|p| {
            let (_, rest) = p.split_once("```json\n").expect("action fence");
            rest.split_once("\n```").expect("fence end").0.to_string()
        })
        .collect()
}

fn check_rows(rows: &[Row], cfg: &WebDataConfig) {
    for row in rows {
        row.validate().unwrap();
        assert!(row.thinking.as_deref().is_some_and(|t| t.ends_with('.')));
        assert!(row_tokens(row) <= cfg.max_row_tokens, "{}", row.id);
        let limit = if row.prompt.len() > 1 {
            cfg.max_multi_turn_state_chars
        } else {
            cfg.max_state_chars
        };
        assert!((1..=cfg.max_turns).contains(&row.prompt.len()));
        for s in states(row) {
            assert!(s.len() <= limit, "{}: {} chars", row.id, s.len());
            let p = AxTree.parse(&s).unwrap();
            assert!(p.warnings.is_empty(), "{}: {:?}\n{s}", row.id, p.warnings);
        }
        for a in actions(row) {
            agentworld_world::action::web::parse(&a).unwrap_or_else(|e| panic!("{a}: {e}"));
        }
    }
}

#[test]
fn rows_are_deterministic_valid_and_in_budget() {
    let c = cfg(300, real_pages());
    let rows = generate_web(&c).unwrap();
    assert_eq!(rows.len(), 300);
    let again = generate_web(&c).unwrap();
    assert_eq!(rows, again);
    check_rows(&rows, &c);
    assert!(rows.iter().any(|r| r.prompt.len() > 1));
    assert!(rows.iter().any(|r| r.prompt.len() == 1));
    let other = generate_web(&WebDataConfig { seed: 8, ..c }).unwrap();
    assert_ne!(rows, other);
}

#[test]
fn built_in_site_alone_gives_rows() {
    let c = cfg(120, Vec::new());
    let rows = generate_web(&c).unwrap();
    check_rows(&rows, &c);
}

#[test]
fn held_out_sources_and_words_never_train() {
    let rows = generate_web(&cfg(400, real_pages())).unwrap();
    let source = |r: &Row| r.extra["source"].as_str().unwrap_or("").to_string();
    let train: std::collections::BTreeSet<String> = rows
        .iter()
        .filter(|r| r.split == Some(Split::Train))
        .map(source)
        .collect();
    let test: Vec<&Row> = rows
        .iter()
        .filter(|r| r.split == Some(Split::Test))
        .collect();
    assert_eq!(test.len(), 40);
    for r in &test {
        assert!(!train.contains(&source(r)), "{}", source(r));
    }
    // held-out words never show up in training rows
    let held: Vec<&str> = site::TEST_WORDS
        .first
        .iter()
        .chain(site::TEST_WORDS.company)
        .copied()
        .collect();
    for r in rows.iter().filter(|r| r.split == Some(Split::Train)) {
        let text = r.prompt.concat() + &r.response.concat();
        for w in &held {
            assert!(!text.contains(w), "{} uses held-out {w}", r.id);
        }
    }
}

fn form() -> Browser {
    let nodes = vec![
        Node::new(0, "heading", "Contact"),
        Node {
            value: Some(String::new()),
            ..Node::new(0, "textbox", "Name")
        },
        Node {
            checked: Some(false),
            ..Node::new(0, "checkbox", "Subscribe")
        },
        Node {
            value: Some("a".into()),
            ..Node::new(0, "combobox", "Topic")
        },
        Node {
            checked: Some(true),
            ..Node::new(1, "option", "a")
        },
        Node {
            checked: Some(false),
            ..Node::new(1, "option", "b")
        },
        Node {
            disabled: true,
            value: Some("x".into()),
            ..Node::new(0, "textbox", "Account")
        },
        Node {
            target: Target::Page(1),
            ..Node::new(0, "link", "Next")
        },
    ];
    let mut p0 = Page {
        title: "Form".into(),
        nodes,
    };
    p0.assign_bids(10, || false);
    let mut p1 = Page {
        title: "Next".into(),
        nodes: vec![Node::new(0, "heading", "Second")],
    };
    p1.assign_bids(1, || false);
    Browser::new(vec![p0, p1])
}

fn changed_lines(a: &str, b: &str) -> Vec<(String, String)> {
    assert_eq!(a.lines().count(), b.lines().count());
    a.lines()
        .zip(b.lines())
        .filter(|(x, y)| x != y)
        .map(|(x, y)| (x.to_string(), y.to_string()))
        .collect()
}

#[test]
fn exact_transitions() {
    let mut b = form();
    let s0 = b.render();
    assert_eq!(
        s0,
        "RootWebArea 'Form', focused\n\t[10] heading 'Contact'\n\t[11] textbox 'Name'\n\t[12] checkbox 'Subscribe', checked='false'\n\t[13] combobox 'Topic', value='a'\n\t\t[14] option 'a', selected=True\n\t\t[15] option 'b'\n\t[16] textbox 'Account', value='x', disabled=True\n\t[17] link 'Next'"
    );
    // fill changes only that node's value
    assert!(matches!(
        b.apply(&Act::Fill("11".into(), "Ana".into())),
        Effect::Filled { .. }
    ));
    let s1 = b.render();
    assert_eq!(
        changed_lines(&s0, &s1),
        [(
            "\t[11] textbox 'Name'".to_string(),
            "\t[11] textbox 'Name', value='Ana'".to_string()
        )]
    );
    // checkbox toggles, twice back
    b.apply(&Act::Click("12".into()));
    assert!(
        b.render()
            .contains("[12] checkbox 'Subscribe', checked='true'")
    );
    b.apply(&Act::Click("12".into()));
    assert_eq!(b.render(), s1);
    // select moves the selection
    b.apply(&Act::Select("13".into(), "b".into()));
    let s2 = b.render();
    assert!(s2.contains("value='b'") && s2.contains("[15] option 'b', selected=True"));
    assert!(b.apply(&Act::Select("13".into(), "zz".into())).is_noop());
    // disabled, missing, inert, wrong kind: unchanged
    for act in [
        Act::Fill("16".into(), "y".into()),
        Act::Click("16".into()),
        Act::Click("99".into()),
        Act::Click("10".into()),
        Act::Fill("12".into(), "y".into()),
        Act::Type("zzz".into()),
    ] {
        let e = b.apply(&act);
        assert!(e.is_noop(), "{act:?} gave {e:?}");
        assert_eq!(b.render(), s2, "{act:?}");
    }
    // click focuses, then keyboard_type appends
    b.apply(&Act::Click("11".into()));
    let s3 = b.render();
    assert!(s3.starts_with("RootWebArea 'Form'\n"));
    assert!(s3.contains("[11] textbox 'Name', value='Ana', focused"));
    b.apply(&Act::Type(" Lopez".into()));
    assert!(b.render().contains("value='Ana Lopez', focused"));
    // navigation and back: the page as it was left, focus dropped
    let before_nav = b.render().replace(", focused", "");
    let e = b.apply(&Act::Click("17".into()));
    assert!(matches!(e, Effect::Navigated { .. }));
    assert_eq!(
        b.render(),
        "RootWebArea 'Next', focused\n\t[1] heading 'Second'"
    );
    b.apply(&Act::Back);
    let back = b.render();
    assert_eq!(
        back,
        before_nav.replacen("RootWebArea 'Form'", "RootWebArea 'Form', focused", 1)
    );
    assert_eq!(b.apply(&Act::Back), Effect::NoHistory);
    assert_eq!(b.render(), back);
}

#[test]
fn navigation_then_back_restores_state() {
    let mut b = form();
    let s0 = b.render();
    b.apply(&Act::Click("17".into()));
    assert_ne!(b.render(), s0);
    b.apply(&Act::Back);
    assert_eq!(b.render(), s0);
}

#[test]
fn submit_shows_values_and_back_returns() {
    let mut rng = Rng::new(3);
    let mut b = site::build(site::Family::Contact, &mut rng, &TRAIN_WORDS);
    let s0 = b.render();
    let (i, submit) = b
        .page()
        .nodes
        .iter()
        .enumerate()
        .find(|(_, n)| n.target == Target::Submit)
        .map(|(i, n)| (i, n.clone()))
        .unwrap();
    let _ = i;
    let bid = submit.bid.clone().unwrap();
    let e = b.apply(&Act::Click(bid));
    if submit.disabled {
        assert!(e.is_noop());
        assert_eq!(b.render(), s0);
    } else {
        assert!(matches!(e, Effect::Submitted { .. }), "{e:?}");
        assert!(b.render().contains("heading 'Thank you'"));
        b.apply(&Act::Back);
        assert_eq!(b.render(), s0);
    }
}

#[test]
fn sample_and_stats() {
    let c = WebDataConfig {
        n: 500,
        seed: 1,
        pages: real_pages(),
        ..Default::default()
    };
    let rows = generate_web(&c).unwrap();
    for r in rows.iter().take(3) {
        println!(
            "==== {} {:?} source={} tokens~{}",
            r.id,
            r.split,
            r.extra["source"],
            row_tokens(r)
        );
        for (p, o) in r.prompt.iter().zip(&r.response) {
            println!("--- prompt\n{p}\n--- response\n{o}");
        }
        println!("--- thinking: {}", r.thinking.as_deref().unwrap_or(""));
    }
    let first_states: Vec<usize> = rows.iter().map(|r| states(r)[0].len()).collect();
    let tokens: Vec<usize> = rows.iter().map(row_tokens).collect();
    let turns: Vec<usize> = rows.iter().map(|r| r.prompt.len()).collect();
    let noops = rows
        .iter()
        .filter(|r| {
            let s = states(r);
            s[s.len() - 2] == s[s.len() - 1]
        })
        .count();
    let real = rows
        .iter()
        .filter(|r| {
            !r.extra["source"]
                .as_str()
                .unwrap_or("")
                .starts_with("builtin")
        })
        .count();
    println!(
        "rows {} | first state chars avg {:.0} max {} | row_tokens avg {:.0} max {} | turns avg {:.2} multi {} | last-turn no-ops {} | real-page rows {}",
        rows.len(),
        first_states.iter().sum::<usize>() as f64 / rows.len() as f64,
        first_states.iter().max().unwrap_or(&0),
        tokens.iter().sum::<usize>() as f64 / rows.len() as f64,
        tokens.iter().max().unwrap_or(&0),
        turns.iter().sum::<usize>() as f64 / rows.len() as f64,
        turns.iter().filter(|&&t| t > 1).count(),
        noops,
        real
    );
}

#[test]
fn made_up_sites_replace_training_rows_only() {
    // At share 1 every training row is on a made-up site and stays valid (states parse,
    // actions parse, budgets hold); held-out rows are those of share 0, row for row.
    let none = cfg(120, real_pages());
    let all = WebDataConfig {
        synthetic_share: 1.0,
        ..none.clone()
    };
    let (none_rows, all_rows) = (generate_web(&none).unwrap(), generate_web(&all).unwrap());
    check_rows(&all_rows, &all);
    for (a, b) in all_rows.iter().zip(&none_rows) {
        match a.split {
            Some(Split::Train) => assert_eq!(a.extra["source"], "synthetic", "{}", a.id),
            _ => assert_eq!(a, b),
        }
    }
    // Made-up rows change the state in most rows, and the edits are the page model's.
    let changed = all_rows
        .iter()
        .filter(|r| r.split == Some(Split::Train))
        .filter(|r| {
            let s = states(r);
            s.windows(2).any(|w| w[0] != w[1])
        })
        .count();
    assert!(
        changed > 60,
        "{changed} of 108 made-up rows change the page"
    );
    // No made-up word is a held-out word (words that share-0 training rows hold too are
    // format or shared words).
    let held = crate::rename::word_set(&site::TEST_WORDS.lists());
    // At share 0.5, the rows left on real and built-in pages are the rows of share 0.
    let half = generate_web(&WebDataConfig {
        synthetic_share: 0.5,
        ..none.clone()
    })
    .unwrap();
    crate::assert_made_up_share(&held, &none_rows, &all_rows, &half, 31..90);
}

#[test]
fn drills_are_one_edit_on_a_made_up_form_in_training_rows_only() {
    // At share 1 every training row is a drill: one turn, a valid state, an action that names
    // a bid the page has (never a navigation), and at most the lines of that element and the
    // root (the focus moving) changed. Held-out rows are those of share 0, row for row.
    let none = cfg(200, real_pages());
    let all = WebDataConfig {
        drill_share: 1.0,
        ..none.clone()
    };
    let (none_rows, all_rows) = (generate_web(&none).unwrap(), generate_web(&all).unwrap());
    check_rows(&all_rows, &all);
    let mut edited = 0;
    for (a, b) in all_rows.iter().zip(&none_rows) {
        if a.split != Some(Split::Train) {
            assert_eq!(a, b);
            continue;
        }
        assert_eq!(a.extra["source"], "drill", "{}", a.id);
        assert_eq!(a.prompt.len(), 1, "{}", a.id);
        let act = &actions(a)[0];
        assert!(
            ["fill(", "click(", "select_option(", "keyboard_type("]
                .iter()
                .any(|p| act.starts_with(p)),
            "{act}"
        );
        let s = states(a);
        // the element the action names: its bid, or the focused field typing goes to
        let named = if act.starts_with("keyboard_type(") {
            s[0].lines()
                .find(|l| l.contains(", focused") && l.contains("textbox"))
                .map(|l| l.trim_start().to_string())
        } else {
            let bid = act.split('\'').nth(1).unwrap_or_default();
            assert!(
                s[0].contains(&format!("[{bid}] ")),
                "{act} names nothing in\n{}",
                s[0]
            );
            Some(format!("[{bid}] "))
        };
        let (before, after): (Vec<&str>, Vec<&str>) =
            (s[0].lines().collect(), s[1].lines().collect());
        assert_eq!(before.len(), after.len(), "{}", a.id);
        let changed: Vec<usize> = (0..before.len())
            .filter(|&i| before[i] != after[i])
            .collect();
        for &i in &changed {
            let line = before[i].trim_start();
            // the root or the field that had the focus gives it up (or the root takes it back)
            let focus_moved =
                before[i].replace(", focused", "") == after[i].replace(", focused", "");
            let ok = (focus_moved && (i == 0 || before[i].contains(", focused")))
                || named.as_deref().is_some_and(|n| line.starts_with(n))
                || (act.starts_with("select_option(") && line.contains("] option '"));
            assert!(ok, "{act} changed {line:?}:\n{}\n---\n{}", s[0], s[1]);
        }
        edited += usize::from(!changed.is_empty());
    }
    let train = all_rows
        .iter()
        .filter(|r| r.split == Some(Split::Train))
        .count();
    assert!(
        edited * 10 >= train * 7,
        "{edited} of {train} drills edit the page"
    );
    // At share 0.5, drills take about half of the rows left after made-up sites.
    let half = generate_web(&WebDataConfig {
        drill_share: 0.5,
        synthetic_share: 0.5,
        ..none.clone()
    })
    .unwrap();
    let count = |src: &str| half.iter().filter(|r| r.extra["source"] == src).count();
    let (made, drills) = (count("synthetic"), count("drill"));
    assert!(
        (60..120).contains(&made) && (25..70).contains(&drills),
        "{made} {drills}"
    );
}
