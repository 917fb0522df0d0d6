use super::*;
use crate::estimate_tokens;
use agentworld_world::action::os::parse;
use agentworld_world::messages::strip_observation_marker;
use agentworld_world::state::StateParser;
use agentworld_world::state::desktop::{AppKind, Control, DesktopNode, DesktopTree};
use agentworld_world::state::formats::OsworldTsv;

fn real_trees() -> Vec<AtspiTree> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/cases/os");
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = read
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| AtspiTree {
            name: p.file_name().unwrap().to_string_lossy().into_owned(),
            xml: std::fs::read_to_string(p).unwrap(),
        })
        .collect()
}

fn cfg(n: usize) -> OsDataConfig {
    OsDataConfig {
        n,
        seed: 7,
        trees: real_trees(),
        ..OsDataConfig::default()
    }
}

/// The state text of turn 1 and every observation of a row.
fn states(row: &Row) -> Vec<String> {
    let first = row.prompt[0]
        .split_once("**Current State:**\n")
        .map(|(_, s)| s.to_string())
        .unwrap();
    std::iter::once(first)
        .chain(row.response.iter().map(|r| strip_observation_marker(r)))
        .collect()
}

fn action(prompt: &str) -> &str {
    let a = prompt.split_once("```json\n").unwrap().1;
    a.split_once("\n```").unwrap().0
}

#[test]
fn deterministic_valid_and_parsable() {
    let rows = generate_os(&cfg(300)).unwrap();
    assert_eq!(rows, generate_os(&cfg(300)).unwrap());
    assert_ne!(
        rows,
        generate_os(&OsDataConfig {
            seed: 8,
            ..cfg(300)
        })
        .unwrap()
    );
    let c = cfg(300);
    for row in &rows {
        row.validate().unwrap();
        assert!(row_tokens(row) <= c.max_row_tokens, "{}", row.id);
        assert!(row.thinking.as_deref().is_some_and(|t| t.ends_with('.')));
        assert!((1..=c.max_turns).contains(&row.prompt.len()));
        let limit = if row.prompt.len() > 1 {
            c.max_multi_turn_state_chars
        } else {
            c.max_state_chars
        };
        for s in states(row) {
            assert!(s.len() <= limit, "{}: {} chars", row.id, s.len());
            let p = OsworldTsv.parse(&s).unwrap();
            assert!(p.warnings.is_empty(), "{}: {:?}\n{s}", row.id, p.warnings);
            assert_eq!(p.tree.len(), s.lines().count() - 1);
        }
        for (t, prompt) in row.prompt.iter().enumerate() {
            parse(action(prompt)).unwrap();
            assert_eq!(prompt.contains("**Current State:**"), t == 0);
        }
    }
}

#[test]
fn held_out_sources_never_train() {
    let rows = generate_os(&cfg(400)).unwrap();
    let source = |r: &Row| r.extra["source"].as_str().unwrap().to_string();
    let train: std::collections::HashSet<String> = rows
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
    assert!(train.iter().all(|s| !s.contains("find")));
    // held-out words never appear in training rows
    for r in rows.iter().filter(|r| r.split == Some(Split::Train)) {
        for w in TEST_WORDS.phrases.iter().chain(TEST_WORDS.options) {
            assert!(!r.prompt.concat().contains(w) && !r.response.concat().contains(w));
        }
    }
    if real_trees().len() >= 2 {
        assert!(test.iter().any(|r| source(r).ends_with(".xml")));
        assert!(train.iter().any(|s| s.ends_with(".xml")));
    }
}

fn editor_and_settings() -> DesktopTree {
    let mut rng = Rng::new(1);
    let mut t = build::panel(&mut rng);
    // open everything the panel offers
    for i in 0..t.nodes.len() {
        if let Control::Launcher(k) = t.nodes[i].control {
            let b = t.nodes[i].bounds.unwrap();
            if !t.is_open(k) {
                t.launch(k, b);
            }
        }
    }
    t
}

fn click_at(t: &DesktopTree, i: usize) -> DesktopTree {
    let (x, y) = t.nodes[i].center().unwrap();
    t.apply(&format!("pyautogui.click({x}, {y})")).unwrap()
}

#[test]
fn exact_transitions() {
    let mut rng = Rng::new(3);
    let panel = build::panel(&mut rng);
    // open then close returns the original state
    let (x, y) = panel.nodes[0].center().unwrap();
    let opened = panel.apply(&format!("pyautogui.click({x}, {y})")).unwrap();
    assert!(opened.nodes.len() > panel.nodes.len());
    assert_eq!(
        opened.apply(&format!("pyautogui.click({x}, {y})")).unwrap(),
        opened
    );
    let close = opened
        .nodes
        .iter()
        .position(|n| n.control == Control::Close)
        .unwrap();
    assert_eq!(click_at(&opened, close), panel);

    let t = editor_and_settings();
    // toggle, twice
    if let Some(c) = t.nodes.iter().position(|n| n.control == Control::CheckBox) {
        let once = click_at(&t, c);
        assert_ne!(once.nodes[c].description, t.nodes[c].description);
        assert_eq!(click_at(&once, c), t);
    }
    // focus a field, type, backspace
    let t = {
        let mut t = DesktopTree::default();
        let id = t.push_window(AppKind::Editor, "a.txt - Text Editor", (100, 100, 400, 300));
        t.push_in(
            id,
            DesktopNode::new("text", "", (108, 136, 384, 256), Control::Field),
        );
        let mut d = DesktopNode::new(
            "push-button",
            "Apply",
            (400, 360, 84, 28),
            Control::Disabled,
        );
        d.description = "disabled".into();
        t.push_in(id, d);
        t
    };
    assert_eq!(t.apply("pyautogui.typewrite('hi')").unwrap(), t);
    let focused = click_at(&t, 2);
    assert_eq!(focused.nodes[2].description, "focused");
    let typed = focused.apply("pyautogui.write('hi there')").unwrap();
    assert_eq!(typed.nodes[2].text, "hi there");
    assert_eq!(
        typed.apply("pyautogui.press('backspace')").unwrap().nodes[2].text,
        "hi ther"
    );
    // disabled, frame, empty space, no-ops: unchanged
    assert_eq!(click_at(&typed, 3), typed);
    assert_eq!(typed.apply("pyautogui.click(110, 110)").unwrap(), typed);
    assert_eq!(typed.apply("pyautogui.click(1800, 1000)").unwrap(), typed);
    for a in [
        "WAIT",
        "pyautogui.moveTo(5, 5)",
        "pyautogui.hotkey('ctrl', 'c')",
    ] {
        assert_eq!(typed.apply(a).unwrap(), typed, "{a}");
    }
    assert!(typed.apply("pyautogui.hotkey('alt', 'f4')").is_err());
    assert!(typed.apply("pyautogui.rightClick(1, 1)").is_err());
    // quotes and tabs in text survive the table
    let mut odd = typed.clone();
    odd.nodes[2].text = "say \"hi\"\tnow".into();
    let p = OsworldTsv.parse(&odd.to_tsv()).unwrap();
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(p.tree.nodes[2].text, "say \"hi\" now");
}

#[test]
fn real_trees_convert_and_bad_xml_names_the_file() {
    for t in real_trees() {
        let d = DesktopTree::from_atspi(&t.xml).unwrap();
        assert!(!d.nodes.is_empty(), "{}", t.name);
        let p = OsworldTsv.parse(&d.to_tsv()).unwrap();
        assert!(p.warnings.is_empty(), "{}: {:?}", t.name, p.warnings);
    }
    let bad = OsDataConfig {
        trees: vec![AtspiTree {
            name: "broken.xml".into(),
            xml: "<accessible role=\"frame\" name=\"x\"><accessible role=".into(),
        }],
        ..cfg(5)
    };
    let err = generate_os(&bad).unwrap_err().to_string();
    assert!(err.contains("broken.xml"), "{err}");
    // no trees at all: mini desktops only
    let rows = generate_os(&OsDataConfig {
        trees: Vec::new(),
        ..cfg(30)
    })
    .unwrap();
    assert_eq!(rows.len(), 30);
}

#[test]
fn print_samples_and_sizes() {
    let rows = generate_os(&cfg(500)).unwrap();
    for r in rows
        .iter()
        .filter(|r| r.prompt.len() > 1)
        .take(2)
        .chain(rows.iter().take(1))
    {
        println!(
            "=== {} source={} split={:?}",
            r.id, r.extra["source"], r.split
        );
        for (p, o) in r.prompt.iter().zip(&r.response) {
            println!("--- prompt\n{p}\n--- response\n{o}");
        }
        println!("--- thinking: {}", r.thinking.as_deref().unwrap_or(""));
    }
    let state_chars: Vec<usize> = rows.iter().map(|r| states(r)[0].len()).collect();
    let tokens: Vec<usize> = rows.iter().map(row_tokens).collect();
    let multi = rows.iter().filter(|r| r.prompt.len() > 1).count();
    let real = rows
        .iter()
        .filter(|r| r.extra["source"].as_str().unwrap().ends_with(".xml"))
        .count();
    let unchanged = rows
        .iter()
        .filter(|r| {
            let s = states(r);
            s[s.len() - 1] == s[s.len() - 2]
        })
        .count();
    println!("last turn leaves the state unchanged in {unchanged} rows");
    let real_row = rows
        .iter()
        .find(|r| r.extra["source"].as_str().unwrap().ends_with(".xml"));
    if let Some(r) = real_row {
        println!(
            "=== real-tree sample {} source={}\n{}\n{}",
            r.id, r.extra["source"], r.prompt[0], r.response[0]
        );
    }
    println!(
        "rows {} multi-turn {multi} real-tree {real}; first state chars avg {:.0} max {}; row_tokens avg {:.0} max {}; state tokens avg {:.0}",
        rows.len(),
        state_chars.iter().sum::<usize>() as f64 / rows.len() as f64,
        state_chars.iter().max().unwrap(),
        tokens.iter().sum::<usize>() as f64 / rows.len() as f64,
        tokens.iter().max().unwrap(),
        rows.iter()
            .map(|r| estimate_tokens(&states(r)[0]))
            .sum::<usize>() as f64
            / rows.len() as f64,
    );
}

#[test]
fn made_up_desktops_replace_training_rows_only() {
    let none = cfg(120);
    let all = OsDataConfig {
        synthetic_share: 1.0,
        ..none.clone()
    };
    let (none_rows, all_rows) = (generate_os(&none).unwrap(), generate_os(&all).unwrap());
    let mut tags = std::collections::BTreeSet::new();
    for (a, b) in all_rows.iter().zip(&none_rows) {
        if a.split != Some(Split::Train) {
            assert_eq!(a, b);
            continue;
        }
        assert_eq!(a.extra["source"], "synthetic", "{}", a.id);
        assert!(row_tokens(a) <= all.max_row_tokens, "{}", a.id);
        for s in states(a) {
            let p = OsworldTsv.parse(&s).unwrap();
            assert!(p.warnings.is_empty(), "{}: {:?}\n{s}", a.id, p.warnings);
            tags.extend(p.tree.nodes.iter().map(|n| n.role.clone()));
        }
        for prompt in &a.prompt {
            parse(action(prompt)).unwrap();
        }
    }
    assert!(tags.len() >= 6, "{tags:?}");
    // no made-up word is a held-out word
    let held = crate::rename::word_set(&[
        TEST_WORDS.files,
        TEST_WORDS.folders,
        TEST_WORDS.options,
        TEST_WORDS.titles,
        TEST_WORDS.buttons,
        TEST_WORDS.phrases,
    ]);
    // (words that share-0 training rows hold too, like the `text` tag, are format words);
    // at share 0.5 the rows left on mini desktops and real trees are those of share 0
    let half = generate_os(&OsDataConfig {
        synthetic_share: 0.5,
        ..none.clone()
    })
    .unwrap();
    crate::assert_made_up_share(&held, &none_rows, &all_rows, &half, 31..90);
    // at most one focused field on a made-up desktop
    let mut rng = Rng::new(5);
    for _ in 0..500 {
        let (_, t) = build::made_up(&mut rng);
        let focused = t
            .nodes
            .iter()
            .filter(|n| n.description == "focused")
            .count();
        assert!(focused <= 1, "{}", t.to_tsv());
    }
    // every made-up window's controls sit inside its frame
    let mut rng = Rng::new(3);
    for _ in 0..200 {
        let (_, t) = build::made_up(&mut rng);
        for n in t.nodes.iter().filter(|n| n.window.is_some()) {
            let frame = t
                .nodes
                .iter()
                .find(|f| f.window == n.window && matches!(f.control, Control::Frame(_)))
                .unwrap();
            let ((x, y, w, h), (fx, fy, fw, fh)) = (n.bounds.unwrap(), frame.bounds.unwrap());
            assert!(w > 0 && h > 0, "{n:?}");
            assert!(
                x >= fx && y >= fy && x + w <= fx + fw && y + h <= fy + fh,
                "{n:?} outside {frame:?}"
            );
        }
    }
}

#[test]
fn drills_are_one_step_on_a_control_in_training_rows_only() {
    // At share 1 every training row is a drill: one turn on a desktop with one made-up
    // window, a step on a control (a toggle, a focus, typing, backspace, a disabled button),
    // states that parse. Held-out rows are those of share 0, row for row.
    let none = cfg(150);
    let all = OsDataConfig {
        drill_share: 1.0,
        ..none.clone()
    };
    let (none_rows, all_rows) = (generate_os(&none).unwrap(), generate_os(&all).unwrap());
    let mut changed = 0;
    for (a, b) in all_rows.iter().zip(&none_rows) {
        if a.split != Some(Split::Train) {
            assert_eq!(a, b);
            continue;
        }
        assert_eq!(a.extra["source"], "drill", "{}", a.id);
        assert_eq!(a.prompt.len(), 1, "{}", a.id);
        assert!(row_tokens(a) <= all.max_row_tokens, "{}", a.id);
        let s = states(a);
        for state in &s {
            let p = OsworldTsv.parse(state).unwrap();
            assert!(p.warnings.is_empty(), "{}: {:?}\n{state}", a.id, p.warnings);
        }
        let act = action(&a.prompt[0]);
        parse(act).unwrap();
        assert!(
            act.starts_with("pyautogui.click")
                || act.starts_with("pyautogui.typewrite")
                || act.starts_with("pyautogui.write")
                || act == "pyautogui.press('backspace')",
            "{act}"
        );
        assert_eq!(
            s[0].lines().filter(|l| l.starts_with("frame\t")).count(),
            1,
            "one window:\n{}",
            s[0]
        );
        changed += usize::from(s[0] != s[1]);
    }
    let train = all_rows
        .iter()
        .filter(|r| r.split == Some(Split::Train))
        .count();
    assert!(
        changed * 10 >= train * 7,
        "{changed} of {train} drills change the desktop"
    );
}
