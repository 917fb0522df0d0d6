//! Our own samples under `examples/` for the formats that have no real file in
//! `../shared/cases`: AndroidWorld lists, BrowserGym and WebArena accessibility trees, Mind2Web
//! candidates, OSWorld XML and TSV, JSON tool results; plus the terminal and Android examples.

use std::path::PathBuf;

use agentworld_world::state::{KeyKind, ParsedState, Rect, Registry, StateTree};

fn example(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Detected as `format`, parsed, invariants checked.
fn auto(rel: &str, format: &str) -> ParsedState {
    let text = example(rel);
    let reg = Registry::standard();
    let best = reg.detect(&text);
    assert_eq!(
        best.first().map(|(n, _)| *n),
        Some(format),
        "{rel}: {best:?}"
    );
    let p = reg.parse("auto", &text).unwrap();
    assert_eq!(p.tree.format, format);
    p.tree.check().unwrap();
    p
}

fn clean(rel: &str, format: &str) -> StateTree {
    let p = auto(rel, format);
    assert!(p.warnings.is_empty(), "{rel}: {:?}", p.warnings);
    p.tree
}

fn rect(x1: i32, y1: i32, x2: i32, y2: i32) -> Option<Rect> {
    Some(Rect::from_corners(x1, y1, x2, y2))
}

fn one(t: &StateTree, key: &str) -> usize {
    let f = t.find_key(key);
    assert_eq!(f.len(), 1, "{key}: {f:?}");
    f[0]
}

#[test]
fn androidworld_lists() {
    let t = clean("android/androidworld_elements.txt", "androidworld");
    assert_eq!((t.len(), t.max_depth()), (8, 0));
    let switch = &t.nodes[one(&t, "5")];
    assert_eq!(switch.role, "android.widget.Switch");
    assert_eq!(switch.key.kind, KeyKind::ElementId);
    assert_eq!(switch.bounds, rect(900, 446, 1038, 527));
    assert_eq!(switch.attr("is_checked"), Some("True"));
    assert_eq!(
        switch.attr("resource_name"),
        Some("com.android.settings:id/switch_widget")
    );
    let up = &t.nodes[0];
    assert_eq!((up.name.as_str(), up.text.as_str()), ("Navigate up", ""));
    assert_eq!(
        t.nodes[4].text, "\"HomeNet-5G\"",
        "a double-quoted repr keeps inner quotes"
    );
    assert_eq!(t.nodes[6].text, "Airplane mode");
    assert_eq!(t.nodes[2].attr("hint_text"), Some("Search settings"));

    let t = clean("android/androidworld_short.txt", "androidworld");
    assert_eq!(t.len(), 9);
    assert_eq!(t.nodes[5].text, "Switch:on");
    assert_eq!(t.nodes[5].attr("checked"), Some("true"));
    assert_eq!(t.nodes[7].attr("checked"), None);
    assert_eq!(t.nodes[1].text, "Network & internet");
}

#[test]
fn browsergym_axtree() {
    let t = clean("web/browsergym_axtree.txt", "axtree");
    assert_eq!((t.len(), t.max_depth()), (15, 4));
    assert_eq!(t.nodes[0].attr("focused"), Some("true"));
    let a5 = &t.nodes[one(&t, "a5")];
    assert_eq!(
        (a5.role.as_str(), a5.name.as_str()),
        ("textbox", "Level 2.1 Text Field 1")
    );
    assert_eq!(a5.attr("frame"), Some("a"), "frame prefix of the bid");
    assert_eq!(a5.bounds, rect(8, 78, 181, 99));
    assert_eq!(t.nodes[one(&t, "a6")].attr("value"), Some("hello"));
    let frame = one(&t, "12");
    assert_eq!(t.nodes[one(&t, "b5")].depth, 3);
    assert!(t.find_key("b5")[0] < t.subtree_end(frame));
    let texts = t.find_role("StaticText");
    assert_eq!(texts.len(), 2);
    assert_eq!(t.nodes[texts[1]].text, "Iframe Level 2.2");
    assert_eq!(t.nodes[texts[1]].key.kind, KeyKind::Path);
    assert_eq!(t.nodes[one(&t, "b6")].name, "Don't remember me");
}

#[test]
fn webarena_axtree() {
    let t = clean("web/webarena_axtree.txt", "axtree");
    assert_eq!((t.len(), t.max_depth()), (13, 2));
    assert_eq!(
        t.attributes,
        [("Tab 0 (current)".to_string(), "One Stop Market".to_string())]
    );
    let search = &t.nodes[one(&t, "1259")];
    assert_eq!(search.role, "combobox");
    assert_eq!(
        search.attributes,
        [
            ("autocomplete", "both"),
            ("hasPopup", "listbox"),
            ("required", "False"),
            ("expanded", "False")
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
    );
    assert_eq!(
        t.nodes[one(&t, "1437")].attr("url"),
        Some("http://onestopmarket.com/pre-baked-gingerbread-house-kit.html")
    );
    assert_eq!(t.nodes[one(&t, "1440")].text, "$19.99");
    assert_eq!(t.nodes[one(&t, "1270")].parent, Some(one(&t, "1266")));
}

#[test]
fn mind2web_candidates() {
    let p = auto("web/mind2web_candidates.txt", "mind2web");
    let t = &p.tree;
    let cands = t.top_level();
    assert_eq!(cands.len(), 6);
    assert_eq!(t.nodes[cands[0]].name, "None of the above");
    let keys: Vec<&str> = cands
        .iter()
        .map(|&c| t.nodes[c].key.value.as_str())
        .collect();
    assert_eq!(keys, ["A", "B", "C", "D", "E", "F"]);
    let button = &t.nodes[one(t, "0")];
    assert_eq!(
        (button.role.as_str(), button.name.as_str()),
        ("button", "book a reservation. toggle open")
    );
    let select = one(t, "1");
    let options: Vec<usize> = t.children(select);
    assert_eq!(options.len(), 2);
    assert_eq!(t.nodes[options[0]].name, "reservations true");
    assert_eq!(t.nodes[one(t, "3")].role, "input");
    assert!(t.find_text("Tonight").is_some());
    let img = t.find_role("img")[0];
    assert_eq!(t.nodes[img].name, "seattle skyline");
    let msgs: Vec<&str> = p.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(msgs.iter().any(|m| m.contains("tag cut short")), "{msgs:?}");
    assert!(
        msgs.iter().any(|m| m.contains("stray end tag </b>")),
        "{msgs:?}"
    );
    assert_eq!(
        p.warnings
            .iter()
            .filter(|w| w.message.contains("(cut short); closed"))
            .count(),
        5
    );
}

#[test]
fn osworld_xml_and_tsv() {
    let x = clean("os/osworld_a11y.xml", "osworld-xml");
    assert_eq!((x.len(), x.max_depth()), (14, 4));
    assert_eq!(x.nodes[0].role, "desktop-frame");
    assert_eq!(x.nodes[0].bounds, rect(0, 0, 1920, 1080));
    let save = x.nodes.iter().position(|n| n.name == "Save").unwrap();
    assert_eq!(x.nodes[save].role, "push-button");
    assert_eq!(x.nodes[save].bounds, rect(1701, 35, 1769, 69));
    assert_eq!(x.nodes[save].attr("st:enabled"), Some("true"));
    let text = x.find_role("text")[0];
    assert_eq!(x.nodes[text].text, "Buy milk & eggs\nCall Ana at 5");
    assert_eq!(x.nodes[text].attr("st:focused"), Some("true"));
    assert_eq!(
        x.nodes[x.find_text("Jun 12  09:41").unwrap()].name,
        "Jun 12 09:41"
    );

    let p = auto("os/osworld_a11y.tsv", "osworld-tsv");
    assert_eq!(
        p.warnings.len(),
        1,
        "the text with a newline: {:?}",
        p.warnings
    );
    let t = &p.tree;
    assert_eq!(t.len(), 8);
    let save = t.nodes.iter().position(|n| n.name == "Save").unwrap();
    assert_eq!(
        t.nodes[save].bounds,
        x.nodes[x.nodes.iter().position(|n| n.name == "Save").unwrap()].bounds,
        "TSV and XML agree"
    );
    assert_eq!(t.nodes[6].text, "Buy milk & eggs\nCall Ana at 5");
    assert_eq!(t.nodes[7].text, "Say \"done\"");
    assert_eq!(t.nodes[3].attr("class"), Some("open"));
}

#[test]
fn json_tool_results() {
    let t = clean("tool/mcp_result.json", "json");
    assert_eq!((t.len(), t.max_depth()), (30, 5));
    let text = &t.nodes[one(&t, "$.content[0].text")];
    assert_eq!(text.text, "Found 2 issues labelled \"bug\" in acme/widgets");
    assert_eq!(
        t.nodes[one(&t, "$.structuredContent.items[1].assignee")].text,
        "mira"
    );
    assert_eq!(
        t.nodes[one(&t, "$.structuredContent.items[0].assignee")].role,
        "null"
    );
    assert_eq!(t.nodes[one(&t, "$.isError")].text, "false");

    let p = auto("tool/search_result.txt", "json");
    assert_eq!(
        p.warnings.len(),
        2,
        "text before and after: {:?}",
        p.warnings
    );
    assert_eq!(p.tree.len(), 19);
    assert_eq!(p.tree.nodes[one(&p.tree, "$.results[2].rank")].text, "3");

    let t = clean("tool/swe_result.jsonl", "json");
    assert_eq!(t.top_level().len(), 2);
    assert_eq!(t.nodes[one(&t, "$.returncode")].text, "1");
    assert!(
        t.nodes[one(&t, "$1.output")]
            .text
            .contains("return d['name']")
    );
}

#[test]
fn terminal_and_android_examples() {
    let t = clean("terminal/screen1.txt", "terminal");
    assert_eq!(t.len(), 8);
    assert_eq!(t.nodes[0].attr("cwd"), Some("~/docs"));
    assert_eq!(t.nodes[7].role, "prompt");

    let t = clean("android/settings.xml", "uiautomator");
    assert_eq!(t.len(), 39);
    let search = &t.nodes[one(&t, "com.android.settings:id/search_src_text")];
    assert_eq!(search.text, "Search settings");
    assert_eq!(search.bounds, rect(168, 252, 1017, 336));
}
