//! The structural diff on small hand-made states: a uiautomator dump, a BrowserGym
//! accessibility tree, JSON and a terminal screen.

use super::*;
use crate::state::{Registry, StateNode, TreeBuilder};

fn parse(format: &str, text: &str) -> StateTree {
    let p = Registry::standard().parse(format, text).unwrap();
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    p.tree
}

fn lines(d: &StateDiff) -> Vec<String> {
    d.changes.iter().map(|c| c.to_string()).collect()
}

/// The diff of `before` and `after` as one line per change.
fn changes(format: &str, before: &str, after: &str) -> Vec<String> {
    let d = diff(&parse(format, before), &parse(format, after));
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
    lines(&d)
}

const SCREEN: &str = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
<node class="android.widget.FrameLayout" package="app" bounds="[0,0][1080,1920]">
<node class="android.widget.EditText" resource-id="app:id/search" text="" bounds="[0,0][1080,100]" />
<node class="android.widget.Switch" resource-id="app:id/wifi" text="Wi-Fi" checkable="true" checked="false" bounds="[0,100][1080,200]" />
<node class="android.widget.LinearLayout" resource-id="app:id/list" bounds="[0,200][1080,800]">
<node class="android.widget.LinearLayout" resource-id="app:id/group" bounds="[0,200][1080,400]" />
<node class="android.widget.TextView" resource-id="app:id/item1" text="One" bounds="[0,400][1080,500]" />
<node class="android.widget.TextView" resource-id="app:id/item2" text="Two" bounds="[0,500][1080,600]" />
<node class="android.widget.TextView" resource-id="app:id/item3" text="Three" bounds="[0,600][1080,700]" />
</node>
<node class="android.widget.TextView" text="Footer" bounds="[0,800][1080,900]" />
<node class="android.widget.TextView" text="Version 1" bounds="[0,900][1080,1000]" />
</node>
</hierarchy>"#;

const ITEM2: &str = r#"<node class="android.widget.TextView" resource-id="app:id/item2" text="Two" bounds="[0,500][1080,600]" />
"#;
const ITEM3: &str = r#"<node class="android.widget.TextView" resource-id="app:id/item3" text="Three" bounds="[0,600][1080,700]" />
"#;
const FOOTER: &str = r#"<node class="android.widget.TextView" text="Footer" bounds="[0,800][1080,900]" />
"#;

fn android(after: &str) -> Vec<String> {
    changes("uiautomator", SCREEN, after)
}

#[test]
fn identical_states_have_no_changes() {
    assert_eq!(android(SCREEN), Vec::<String>::new());
    let t = parse("uiautomator", SCREEN);
    assert!(diff(&t, &t).is_empty());
    assert!(diff(&StateTree::default(), &StateTree::default()).is_empty());
}

#[test]
fn android_text_and_attribute_changes() {
    let after = SCREEN.replace(
        r#"resource-id="app:id/search" text="""#,
        r#"resource-id="app:id/search" text="weather""#,
    );
    assert_eq!(
        android(&after),
        [r#"~ text   android.widget.EditText #app:id/search: "" -> "weather""#]
    );
    let after = SCREEN.replace(r#"checked="false""#, r#"checked="true" focused="true""#);
    assert_eq!(
        android(&after),
        [
            r#"~ attr   android.widget.Switch #app:id/wifi checked: (none) -> "true""#,
            r#"~ attr   android.widget.Switch #app:id/wifi focused: (none) -> "true""#,
        ]
    );
    let after = SCREEN
        .replace("Version 1", "Version 2")
        .replace(r#"rotation="0""#, r#"rotation="1""#)
        .replace("[0,800][1080,900]", "[0,800][1080,950]");
    assert_eq!(
        android(&after),
        [
            r#"~ doc    rotation: "0" -> "1""#,
            r#"~ attr   android.widget.TextView #/0/3 bounds: "[0,800][1080,900]" -> "[0,800][1080,950]""#,
            r#"~ text   android.widget.TextView #/0/4: "Version 1" -> "Version 2""#,
        ]
    );
}

#[test]
fn android_insert_and_remove() {
    let ok = r#"<node class="android.widget.Button" resource-id="app:id/ok" text="OK" bounds="[0,700][1080,800]" />
"#;
    let after = SCREEN.replace(ITEM3, &format!("{ITEM3}{ok}"));
    assert_eq!(
        android(&after),
        [r#"+ insert android.widget.Button #app:id/ok "OK" under #app:id/list[4]"#]
    );
    // An unkeyed node inserted before an unkeyed sibling shifts nothing.
    let note = FOOTER.replace("Footer", "Note");
    let after = SCREEN.replace(FOOTER, &format!("{note}{FOOTER}"));
    assert_eq!(
        android(&after),
        [r#"+ insert android.widget.TextView #/0/3 "Note" under #/0[3]"#]
    );
    let after = SCREEN.replace(ITEM2, "");
    assert_eq!(
        android(&after),
        [r#"- remove android.widget.TextView #app:id/item2 "Two" from #app:id/list[2]"#]
    );
    let d = diff(
        &parse("uiautomator", SCREEN),
        &parse("uiautomator", &SCREEN.replace(FOOTER, "")),
    );
    assert_eq!(
        lines(&d),
        [r#"- remove android.widget.TextView #/0/3 "Footer" from #/0[3]"#]
    );
    let Change::Removed { node, size, .. } = &d.changes[0] else {
        panic!("{:?}", d.changes)
    };
    assert_eq!((node.before, node.after, *size), (Some(8), None, 1));
}

#[test]
fn a_removed_subtree_is_one_change() {
    let start =
        SCREEN.find(r#"<node class="android.widget.LinearLayout" resource-id="app:id/list""#);
    let end = SCREEN.find(FOOTER);
    let (Some(start), Some(end)) = (start, end) else {
        panic!("fixture")
    };
    let after = format!("{}{}", &SCREEN[..start], &SCREEN[end..]);
    assert_eq!(
        android(&after),
        [r#"- remove android.widget.LinearLayout #app:id/list from #/0[2] (5 nodes)"#]
    );
    let d = diff(&parse("uiautomator", &after), &parse("uiautomator", SCREEN));
    assert!(matches!(d.changes[..], [Change::Inserted { size: 5, .. }]));
}

#[test]
fn reordered_siblings_are_moves_only() {
    let after = SCREEN.replace(ITEM3, "").replace(
        r#"<node class="android.widget.TextView" resource-id="app:id/item1""#,
        &format!(
            "{}<node class=\"android.widget.TextView\" resource-id=\"app:id/item1\"",
            ITEM3
        ),
    );
    assert_eq!(
        android(&after),
        [
            r#"> move   android.widget.TextView #app:id/item3 "Three" from #app:id/list[3] to #app:id/list[1]"#
        ]
    );
    // Unkeyed siblings swapped (their bounds go with them): one move, no text change.
    let version = r#"<node class="android.widget.TextView" text="Version 1" bounds="[0,900][1080,1000]" />
"#;
    let after = SCREEN
        .replace(version, "")
        .replace(FOOTER, &format!("{version}{FOOTER}"));
    assert_eq!(
        android(&after),
        [r#"> move   android.widget.TextView #/0/4 "Version 1" from #/0[4] to #/0[3]"#]
    );
}

#[test]
fn a_keyed_node_moved_into_an_earlier_siblings_subtree_is_one_move() {
    let group = r#"<node class="android.widget.LinearLayout" resource-id="app:id/group" bounds="[0,200][1080,400]" />"#;
    let after = SCREEN.replace(ITEM3, "").replace(
        group,
        &format!("{}>\n{ITEM3}</node>", group.trim_end_matches(" />")),
    );
    let d = diff(&parse("uiautomator", SCREEN), &parse("uiautomator", &after));
    assert_eq!(
        lines(&d),
        [
            r#"> move   android.widget.TextView #app:id/item3 "Three" from #app:id/list[3] to #app:id/group[0]"#
        ]
    );
    let Change::Moved { node, from, to } = &d.changes[0] else {
        panic!("{:?}", d.changes)
    };
    assert_eq!((node.before, node.after), (Some(7), Some(5)));
    assert_eq!(
        (from.parent.as_deref(), to.parent.as_deref()),
        (Some("app:id/list"), Some("app:id/group"))
    );
    // Only the id ties it to its old self when its text changes on the way.
    let after = after.replace("\"Three\"", "\"3\"");
    assert_eq!(
        android(&after),
        [
            r#"> move   android.widget.TextView #app:id/item3 "3" from #app:id/list[3] to #app:id/group[0]"#,
            r#"~ text   android.widget.TextView #app:id/item3: "Three" -> "3""#,
        ]
    );
}

#[test]
fn duplicate_keys_are_reported_and_matched_by_position() {
    let dup = SCREEN.replace("app:id/item2", "app:id/item1");
    let after = dup.replace("\"Two\"", "\"Deux\"");
    let d = diff(&parse("uiautomator", &dup), &parse("uiautomator", &after));
    assert_eq!(
        d.warnings,
        ["duplicate resource-id `app:id/item1`: 2 node(s) before, 2 after; matched by position"]
    );
    assert_eq!(
        lines(&d),
        [r#"~ text   android.widget.TextView #app:id/item1: "Two" -> "Deux""#]
    );
    // Duplicated on one side only: still reported, and nothing is merged.
    let d = diff(&parse("uiautomator", SCREEN), &parse("uiautomator", &dup));
    assert_eq!(d.warnings.len(), 1, "{:?}", d.warnings);
    assert_eq!(
        lines(&d),
        [
            r#"- remove android.widget.TextView #app:id/item2 "Two" from #app:id/list[2]"#,
            r#"+ insert android.widget.TextView #app:id/item1 "Two" under #app:id/list[2]"#,
        ]
    );
}

/// 80 nested layouts around one TextView, as a uiautomator dump.
fn deep_dump(text: &str) -> String {
    let open = r#"<node class="android.widget.FrameLayout" bounds="[0,0][10,10]">"#.repeat(80);
    let leaf = format!(r#"<node class="android.widget.TextView" text="{text}" />"#);
    format!(
        "<hierarchy rotation=\"0\">{open}{leaf}{}</hierarchy>",
        "</node>".repeat(80)
    )
}

#[test]
fn an_80_level_tree_on_a_small_stack() {
    let before = parse("uiautomator", &deep_dump("deep"));
    let after = parse("uiautomator", &deep_dump("deeper"));
    assert_eq!(before.max_depth(), 80);
    // 256 KiB is far too little for a recursion over 80 levels of diff frames.
    let d = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || (diff(&before, &before), diff(&before, &after)))
        .unwrap()
        .join()
        .unwrap();
    assert!(d.0.is_empty());
    assert_eq!(
        lines(&d.1),
        [r#"~ text   android.widget.TextView #/0*81: "deep" -> "deeper""#]
    );
}

#[test]
fn a_10000_level_chain_with_a_moved_leaf() {
    // A keyed leaf beside the chain's node at depth `at`.
    let chain = |at: usize| {
        let mut b = TreeBuilder::new("t");
        for d in 0..10_000 {
            if d == at {
                b.leaf(StateNode {
                    key: crate::state::NodeKey::new(KeyKind::Bid, "leaf"),
                    ..StateNode::new("leaf")
                });
            }
            b.open(StateNode::new("x"));
        }
        b.finish()
    };
    let (before, after) = (chain(9_000), chain(10));
    assert!(diff(&before, &before).is_empty());
    let d = diff(&before, &after);
    assert!(
        matches!(&d.changes[..], [Change::Moved { node, to, .. }]
            if node.key == "leaf" && to.index == 0 && to.parent.as_deref() == Some("/0*10")),
        "{:?}",
        lines(&d)
    );
}

const AXTREE: &str = "RootWebArea 'Shop', focused
\t[5] textbox 'Search', value=''
\t[10] list ''
\t\t[11] listitem ''
\t\t\tStaticText 'First'
\t\t[12] listitem ''
\t\t\tStaticText 'Second'
\t\t\t[13] link 'Details'
\tStaticText 'Left'
\tStaticText 'Right'
";

fn web(after: &str) -> Vec<String> {
    changes("axtree", AXTREE, after)
}

#[test]
fn axtree_changes() {
    assert!(web(AXTREE).is_empty());
    assert_eq!(
        web(&AXTREE.replace("value=''", "value='weather', focused")),
        [
            r#"~ attr   textbox #5 value: "" -> "weather""#,
            r#"~ attr   textbox #5 focused: (none) -> "true""#,
        ]
    );
    assert_eq!(
        web(&AXTREE.replace("'First'", "'Erste'")),
        [r#"~ text   StaticText #/0/1/0/0: "First" -> "Erste""#]
    );
    assert_eq!(
        web(&AXTREE.replace(
            "\t\t\tStaticText 'Second'\n",
            "\t\t\tStaticText 'Second'\n\t\t\t[14] button 'Buy'\n"
        )),
        [r#"+ insert button #14 "Buy" under #12[1]"#]
    );
    assert_eq!(
        web(&AXTREE.replace("\t\t\t[13] link 'Details'\n", "")),
        [r#"- remove link #13 "Details" from #12[1]"#]
    );
    // Unkeyed siblings swapped: a move, no text change.
    assert_eq!(
        web(&AXTREE.replace(
            "\tStaticText 'Left'\n\tStaticText 'Right'\n",
            "\tStaticText 'Right'\n\tStaticText 'Left'\n"
        )),
        [r#"> move   StaticText #/0/3 "Right" from #/0[3] to #/0[2]"#]
    );
}

#[test]
fn axtree_keyed_node_into_an_earlier_sibling() {
    let after = AXTREE.replace("\t\t\t[13] link 'Details'\n", "").replace(
        "\t\t\tStaticText 'First'\n",
        "\t\t\tStaticText 'First'\n\t\t\t[13] link 'Details'\n",
    );
    assert_eq!(
        web(&after),
        [r#"> move   link #13 "Details" from #12[1] to #11[1]"#]
    );
    assert_eq!(
        web(&after.replace("'Details'", "'More'")),
        [
            r#"> move   link #13 "More" from #12[1] to #11[1]"#,
            r#"~ name   link #13: "Details" -> "More""#,
        ]
    );
}

#[test]
fn json_and_terminal() {
    let d = changes(
        "json",
        r#"{"items": [{"title": "a"}, {"title": "b"}], "total": 2}"#,
        r#"{"items": [{"title": "a"}, {"title": "B"}], "total": 2}"#,
    );
    assert_eq!(d, [r#"~ text   string #$.items[1].title: "b" -> "B""#]);
    let d = changes(
        "json",
        r#"{"a": 1, "b": 2}"#,
        r#"{"b": 2, "a": 1, "c": null}"#,
    );
    assert_eq!(
        d,
        [
            r#"> move   number #$.b "b" from #$[1] to #$[0]"#,
            r#"+ insert null #$.c "c" under #$[2]"#,
        ]
    );
    let d = changes(
        "terminal",
        "$ ls\na\nuser@host:~$ ",
        "$ ls\na\nb\nuser@host:~$ ",
    );
    assert_eq!(
        d,
        [
            r#"~ attr   screen #screen lines: "3" -> "4""#,
            r#"+ insert line #3 "b" under #screen[2]"#,
        ]
    );
}

#[test]
fn trees_of_two_formats_are_compared_with_a_warning() {
    let d = diff(&parse("axtree", AXTREE), &parse("uiautomator", SCREEN));
    assert!(d.warnings[0].contains("two formats (axtree and uiautomator)"));
    assert!(!d.changes.is_empty());
    let after = AXTREE
        .replace("'Left'", "'Links'")
        .replace("\t[5]", "\t[6]");
    let d = diff(&parse("axtree", AXTREE), &parse("axtree", &after));
    assert_eq!(
        d.summary(),
        "1 inserted, 1 removed, 0 moved, 1 text, 0 attribute, 0 document"
    );
}

#[test]
fn changes_serialize_with_a_tag() {
    let after = SCREEN.replace("Version 1", "Version 2");
    let d = diff(&parse("uiautomator", SCREEN), &parse("uiautomator", &after));
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(v["changes"][0]["change"], "text-changed");
    assert_eq!(v["changes"][0]["field"], "text");
    assert_eq!(v["changes"][0]["node"]["key"], "/0/4");
    assert_eq!(v["changes"][0]["node"]["key_kind"], "path");
    assert_eq!(v["changes"][0]["after"], "Version 2");
    let back: StateDiff = serde_json::from_value(v).unwrap();
    assert_eq!(back, d);
}
