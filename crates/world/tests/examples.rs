//! The hand-written states and actions under `examples/`.

use std::path::PathBuf;

use agentworld_world::action::android::{AndroidAction, NoEffect, Outcome, apply};
use agentworld_world::messages::{Turn, TurnAction, turn_prompt};
use agentworld_world::state::android::{AndroidTree, parse_compact, parse_xml, render_compact};
use agentworld_world::state::terminal::TerminalScreen;

fn example(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn settings() -> AndroidTree {
    let parsed = parse_xml(&example("android/settings.xml")).unwrap();
    assert!(parsed.warnings.is_empty(), "{:?}", parsed.warnings);
    parsed.tree
}

fn act(name: &str) -> (AndroidTree, Outcome) {
    let tree = settings();
    let action = AndroidAction::parse(&example(&format!("android/{name}.json"))).unwrap();
    let out = apply(&tree, &action);
    (tree, out)
}

#[test]
fn settings_dump_facts() {
    let t = settings();
    assert_eq!((t.len(), t.max_depth()), (39, 7));
    let search = t.find_by_id("search_src_text");
    assert_eq!(search.len(), 1);
    assert!(t.nodes[search[0]].is_editable());
    let wifi = t.find_by_id("switch_widget")[0];
    assert!(t.nodes[wifi].flags.checked);
    assert_eq!(t.find_by_id("android:switch_widget").len(), 1);
    let compact = render_compact(&t);
    assert!(compact.contains("\n              Switch #switch_widget checkable checked clickable [912,735][1038,798]\n"), "{compact}");
    assert!(
        compact.contains("TextView #android:title \"Mobile data\" disabled [63,1092][420,1155]"),
        "{compact}"
    );
    assert!(compact.lines().count() == 39 && compact.len() < 3000);
}

#[test]
fn typing_into_the_search_field() {
    let (before, out) = act("type_search");
    let Outcome::Edited {
        tree,
        changed,
        target,
    } = out
    else {
        panic!("{out:?}")
    };
    assert_eq!(changed, [target]);
    assert_eq!(tree.nodes[target].text, "bluetooth");
    assert!(tree.nodes[target].flags.focused);
    let (a, b) = (render_compact(&before), render_compact(&tree));
    let diff: Vec<(&str, &str)> = a.lines().zip(b.lines()).filter(|(x, y)| x != y).collect();
    assert_eq!(diff.len(), 1);
    assert_eq!(
        diff[0].1.trim_start(),
        "EditText #search_src_text \"bluetooth\" clickable long-clickable focused [168,252][1017,336]"
    );
}

#[test]
fn switches_toggle() {
    let (_, out) = act("toggle_wifi");
    let Outcome::Edited { tree, changed, .. } = out else {
        panic!("{out:?}")
    };
    assert_eq!(changed.len(), 1);
    assert!(!tree.nodes[changed[0]].flags.checked);
    let (_, out) = act("toggle_airplane_at_point");
    let Outcome::Edited { tree, changed, .. } = out else {
        panic!("{out:?}")
    };
    assert_eq!(tree.nodes[changed[0]].short_id(), "android:switch_widget");
    assert!(tree.nodes[changed[0]].flags.checked);
}

#[test]
fn no_ops_and_screen_changes() {
    let (t, out) = act("tap_disabled");
    let Outcome::Unchanged(NoEffect::Disabled(i)) = out else {
        panic!("{out:?}")
    };
    assert_eq!(t.nodes[i].short_id(), "switch_mobile_data");
    let (t, out) = act("tap_header");
    let Outcome::Unchanged(NoEffect::NonInteractive(i)) = out else {
        panic!("{out:?}")
    };
    assert_eq!(t.nodes[i].text, "Connections");
    assert!(matches!(act("back").1, Outcome::NotComputable(_)));
}

#[test]
fn compact_form_of_the_example_round_trips() {
    let t = settings();
    let back = parse_compact(&render_compact(&t)).unwrap();
    assert_eq!(render_compact(&back.tree), render_compact(&t));
    // the edit computed on the parsed compact tree equals the edit on the XML tree
    let action = AndroidAction::parse(&example("android/type_search.json")).unwrap();
    let on_xml = apply(&t, &action);
    let on_compact = apply(&back.tree, &action);
    let render = |o: &Outcome, before: &AndroidTree| o.tree_after(before).map(render_compact);
    assert_eq!(render(&on_xml, &t), render(&on_compact, &back.tree));
}

#[test]
fn terminal_screen_example() {
    let screen = TerminalScreen::parse(&example("terminal/screen1.txt"));
    assert_eq!(screen.lines.len(), 7);
    assert_eq!(screen.cwd().as_deref(), Some("~/docs"));
    assert!(screen.is_idle());
    assert_eq!(screen.lines[1], "data.csv  docs  notes.txt  todo.txt");
}

#[test]
fn terminal_actions_make_turn_prompts() {
    let text = example("terminal/ls_l.json");
    let value: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(value[0]["keystrokes"], "ls -l\n");
    let turn = Turn {
        number: 2,
        action: TurnAction::parse(&text),
        state: None,
    };
    assert_eq!(
        turn.prompt(),
        "### Turn 2\n**Action:**\n```json\n[{\"keystrokes\": \"ls -l\\n\", \"duration\": 0.5}]\n```"
    );
    let ctrl_c = example("terminal/interrupt.json");
    let state = example("terminal/screen1.txt");
    let p = turn_prompt(1, ctrl_c.trim(), Some(&state));
    assert!(p.starts_with("### Turn 1\n**Action:**\n```json\n[{\"keystrokes\": \"C-c\", \"duration\": 0.1}]\n```\n\n**Current State:**\nuser@sandbox:~$ ls\n"));
    assert!(p.ends_with("user@sandbox:~/docs$ "));
    for name in ["count_todo", "interrupt", "ls_l"] {
        let v: serde_json::Value =
            serde_json::from_str(&example(&format!("terminal/{name}.json"))).unwrap();
        assert!(
            v.as_array().is_some_and(|a| a
                .iter()
                .all(|s| s["keystrokes"].is_string() && s["duration"].is_number())),
            "{name}"
        );
    }
}
