//! Parsers never panic: every prefix of real inputs, and random text.

mod common;

use std::path::PathBuf;

use agentworld_world::action::android::{AndroidAction, apply};
use agentworld_world::row::parse_jsonl;
use agentworld_world::state::android::{parse_compact, parse_xml, render_compact};
use agentworld_world::state::terminal::TerminalScreen;
use common::Rng;

fn case(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/cases/android")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn prefixes(text: &str) -> impl Iterator<Item = &str> {
    (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .map(move |i| &text[..i])
}

#[test]
fn every_prefix_of_a_dump_is_ok_or_an_error() {
    let text = case("07_flutter_naf_newline_contentdesc.xml");
    let (mut ok, mut err) = (0, 0);
    for prefix in prefixes(&text) {
        match parse_xml(prefix) {
            Ok(_) => ok += 1,
            Err(_) => err += 1,
        }
    }
    assert_eq!(ok, 1, "only the whole dump is complete");
    assert_eq!(ok + err, text.len() + 1);
}

#[test]
fn every_prefix_of_a_compact_tree_parses() {
    let tree = parse_xml(&case("04_compose_chinese_emoji_fixture.xml"))
        .unwrap()
        .tree;
    let text = render_compact(&tree);
    for prefix in prefixes(&text) {
        let parsed = parse_compact(prefix).unwrap_or_else(|e| panic!("{prefix:?}: {e}"));
        assert!(parsed.tree.len() <= tree.len());
        parsed.tree.check().unwrap();
    }
}

#[test]
fn random_text_never_panics() {
    let alphabet: Vec<char> = "ab #\"\\[],0123456789-~=.\n  \tu{}🌿茶<>/&;desc=checkedclickable"
        .chars()
        .collect();
    let mut rng = Rng::new(12345);
    let action = AndroidAction::parse(r#"{"action":"tap","target":{"x":5,"y":5}}"#).unwrap();
    for _ in 0..3000 {
        let len = rng.below(80);
        let s: String = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        if let Ok(p) = parse_compact(&s) {
            p.tree.check().unwrap();
            let _ = apply(&p.tree, &action);
            let again = parse_compact(&render_compact(&p.tree)).unwrap();
            assert_eq!(
                render_compact(&again.tree),
                render_compact(&p.tree),
                "{s:?}"
            );
        }
        let _ = parse_xml(&s);
        let _ = parse_jsonl(&s);
        let _ = AndroidAction::parse(&s);
        let _ = TerminalScreen::parse(&s).prompt();
    }
}

#[test]
fn action_parsers_never_panic_on_junk() {
    use agentworld_world::Domain;
    use agentworld_world::action::{check_targets, parse_action};
    use agentworld_world::state::StateTree;

    let seeds = [
        "click('12', button=\"right\")",
        "fill(\"45\", \"hello \\\"x\\\"\")",
        "type [5] [guitar] [1]",
        "pyautogui.click(1, 2); pyautogui.hotkey('ctrl', 'c')\nWAIT",
        r#"[{"keystrokes": "ls\n", "duration": 0.5}, {"keystrokes": "C-c"}]"#,
        r#"{"name": "f", "arguments": "{\"a\": [1, 2]}"}"#,
        r#"{"action_type": "click", "index": 3, "x": 1e400}"#,
        r#"{"event": {"event_type": "touch", "view": {"bounds": [[1, 2], [3]]}}}"#,
        r#"{"event_type": "touch", "view": {"bounds": [[9223372036854775807, 9223372036854775807], [9223372036854775807, 1]]}}"#,
        r#"{"event_type": "touch", "x": -9223372036854775808, "y": 9223372036854775807}"#,
        "pyautogui.click(99999999999999999999999, -1e308); scroll(1e308, 1e308)",
        "r'\\x' u\"\\u12\" '''",
    ];
    let alphabet: Vec<char> = "()[]{}'\",;=#.\\ \n-+e1230xuTrueNoneabc_:é\u{0}"
        .chars()
        .collect();
    let empty = StateTree::default();
    let mut rng = Rng::new(7);
    let mut n = 0;
    let mut inputs: Vec<String> = Vec::new();
    for s in seeds {
        inputs.extend(prefixes(s).map(str::to_string));
    }
    for _ in 0..3000 {
        let len = rng.below(24);
        inputs.push((0..len).map(|_| *rng.pick(&alphabet).unwrap()).collect());
    }
    for text in &inputs {
        for d in Domain::ALL {
            if let Ok(a) = parse_action(d, text) {
                check_targets(&a, &empty);
            }
            n += 1;
        }
    }
    assert!(n > 20_000);
}
