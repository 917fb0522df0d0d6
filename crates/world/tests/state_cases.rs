//! Every file in `../shared/cases` read through the state-format registry (`--format auto`),
//! with facts checked from each file. The files are read at run time, never copied.

use std::path::PathBuf;

use agentworld_world::state::android::parse_xml;
use agentworld_world::state::{KeyKind, ParsedState, Rect, Registry, StateTree};

fn cases() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cases")
}

fn case(rel: &str) -> String {
    let p = cases().join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| {
        panic!(
            "{} (tests read ../shared/cases beside the repo): {e}",
            p.display()
        )
    })
}

/// Detects and parses; checks the tree's invariants.
fn auto(text: &str, format: &str) -> ParsedState {
    let reg = Registry::standard();
    let best = reg.detect(text);
    assert_eq!(
        best.first().map(|(n, _)| *n),
        Some(format),
        "detected {best:?}"
    );
    let p = reg.parse("auto", text).unwrap();
    assert_eq!(p.tree.format, format);
    p.tree.check().unwrap();
    assert_eq!(p.source, text, "the original text is kept");
    p
}

fn clean(rel: &str, format: &str) -> StateTree {
    let p = auto(&case(rel), format);
    assert!(p.warnings.is_empty(), "{rel}: {:?}", p.warnings);
    p.tree
}

fn rect(x1: i32, y1: i32, x2: i32, y2: i32) -> Option<Rect> {
    Some(Rect::from_corners(x1, y1, x2, y2))
}

/// The single node with key `key`.
fn by_key(t: &StateTree, key: &str) -> usize {
    let found = t.find_key(key);
    assert_eq!(found.len(), 1, "key {key}: {found:?}");
    found[0]
}

#[test]
fn android_dumps() {
    let t = clean("android/01_pixel_launcher_home.xml", "uiautomator");
    assert_eq!((t.len(), t.max_depth()), (25, 13));
    assert_eq!(t.attributes, [("rotation".to_string(), "0".to_string())]);
    let clock = by_key(&t, "com.google.android.apps.nexuslauncher:id/clock");
    assert_eq!(clock, 14);
    assert_eq!(
        (t.nodes[clock].text.as_str(), t.nodes[clock].name.as_str()),
        ("Fri, Apr 21", "Fri, Apr 21")
    );
    assert_eq!(t.nodes[clock].bounds, rect(77, 123, 1045, 180));
    let mic = by_key(&t, "com.google.android.apps.nexuslauncher:id/mic_icon");
    assert_eq!(t.nodes[mic].name, "Voice search");
    assert_eq!(t.nodes[mic].bounds, rect(869, 1603, 1011, 1768));
    assert_eq!(t.nodes[mic].attr("clickable"), Some("true"));
    assert_eq!(t.find_text("Chrome"), Some(20));

    let t = clean("android/02_aena_welcome_onboarding.xml", "uiautomator");
    assert_eq!(t.len(), 34);
    let next = &t.nodes[31];
    assert_eq!(
        (next.role.as_str(), next.text.as_str(), next.name.as_str()),
        ("android.widget.Button", "NEXT", "Next page")
    );
    assert_eq!(next.bounds, rect(0, 2161, 1080, 2242));
    assert_eq!(
        (t.nodes[15].attr("enabled"), t.nodes[15].attr("selected")),
        (Some("false"), Some("true"))
    );
    assert_eq!(
        t.nodes[33].bounds,
        rect(0, 0, 0, 0),
        "zero-size bounds kept"
    );
    let same = t.find_key("es.aena.mobile:id/nav_host_container");
    assert_eq!(
        same.len(),
        2,
        "a duplicate resource-id is two nodes with one key"
    );
    assert_eq!(t.nodes[same[1]].parent, Some(same[0]));

    let t = clean(
        "android/04_compose_chinese_emoji_fixture.xml",
        "uiautomator",
    );
    assert_eq!((t.len(), t.max_depth()), (50, 10));
    assert_eq!(t.nodes[21].text, "🌿", "&#127807; decoded");
    assert_eq!(t.nodes[21].bounds, rect(106, 1676, 180, 1744));
    assert_eq!(t.nodes[11].text, "命理解读");

    let t = clean(
        "android/05_appium_pagesource_xueqiu_classname_tags.xml",
        "appium",
    );
    assert_eq!((t.len(), t.max_depth()), (179, 27));
    assert!(
        t.attributes
            .contains(&("width".to_string(), "1080".to_string()))
    );
    let search = by_key(&t, "com.xueqiu.android:id/tv_search");
    assert_eq!(search, 12);
    assert_eq!(t.nodes[12].text, "搜索股票/组合/用户/讨论");
    assert_eq!(t.nodes[12].bounds, rect(269, 120, 810, 192));
    assert_eq!(t.nodes[12].attr("displayed"), Some("true"));
    assert_eq!(t.find_key("com.xueqiu.android:id/stock_rise_sign").len(), 7);

    let t = clean(
        "android/07_flutter_naf_newline_contentdesc.xml",
        "uiautomator",
    );
    assert_eq!((t.len(), t.max_depth()), (17, 9));
    assert_eq!(t.nodes[7].name, "No files open\nNo file selected");
    assert_eq!(
        t.nodes
            .iter()
            .filter(|n| n.attr("NAF") == Some("true"))
            .count(),
        2
    );
    assert_eq!(t.nodes[14].key.kind, KeyKind::Path);
}

#[test]
fn android_conversion_is_lossless_for_every_dump() {
    for entry in std::fs::read_dir(cases().join("android")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let tree = parse_xml(&text).unwrap().tree;
        let common = tree.to_state_tree();
        assert_eq!(common.len(), tree.len(), "{}", path.display());
        assert_eq!(common.to_android().unwrap(), tree, "{}", path.display());
    }
}

#[test]
fn browsergym_pages() {
    let t = clean("web/browsergym/basic_iframe_site_basic_iframe.html", "html");
    assert_eq!((t.len(), t.max_depth()), (27, 6));
    assert_eq!(t.attributes, [("doctype".to_string(), "html".to_string())]);
    let frames = t.find_role("iframe");
    assert_eq!(frames.len(), 2);
    let field = t
        .nodes
        .iter()
        .position(|n| n.attr("name") == Some("level2_2-textfield2"))
        .unwrap();
    assert_eq!(
        t.nodes[field].name, "Level 2.2 Text Field 2",
        "placeholder as name"
    );
    assert!(
        field > frames[1] && field < t.subtree_end(frames[1]),
        "srcdoc nodes are the iframe's children"
    );
    assert_eq!(t.nodes[field].depth, 5);
    assert_eq!(t.find_role("input").len(), 6);

    let t = clean("web/browsergym/basic_iframe_site_inner-iframe.html", "html");
    assert_eq!(t.len(), 13);
    let checkbox = by_key(&t, "checkbox_2");
    assert_eq!(t.nodes[checkbox].key.kind, KeyKind::ElementId);
    assert_eq!(t.nodes[checkbox].attr("checked"), Some(""));
    assert_eq!(t.nodes[t.nodes[checkbox].parent.unwrap()].role, "label");
    assert_eq!(
        t.find_text("Checkbox label")
            .map(|i| t.nodes[i].role.as_str()),
        Some("#text")
    );

    let t = clean("web/browsergym/basic_iframe_site_outer-iframe.html", "html");
    assert_eq!(t.len(), 11);
    assert_eq!(t.nodes[by_key(&t, "my-host")].role, "div");
    assert_eq!(
        t.nodes[t.find_role("iframe")[0]].attr("src"),
        Some("inner-iframe.html")
    );

    let t = clean(
        "web/browsergym/basic_shadow_dom_site_basic_shadow_dom.html",
        "html",
    );
    assert_eq!(t.len(), 9);
    by_key(&t, "host-element-level-1-1");
    by_key(&t, "host-element-level-1-2");
    let script = t.find_role("script")[0];
    assert!(
        t.nodes[script + 1]
            .text
            .contains("attachShadow({ mode: 'open' })"),
        "script text kept as written"
    );

    let t = clean(
        "web/browsergym/basic_shadow_dom_site_simple_shadow_dom.html",
        "html",
    );
    assert_eq!(t.len(), 8);
    by_key(&t, "host-element");

    let t = clean("web/browsergym/example.html", "html");
    assert_eq!((t.len(), t.max_depth()), (18, 5));
    assert_eq!(t.find_role("meta").len(), 3);
    let h1 = t.find_role("h1")[0];
    assert_eq!(t.nodes[h1 + 1].text, "Example Domain");
    let a = t.find_role("a")[0];
    assert_eq!(
        t.nodes[a].attr("href"),
        Some("https://www.iana.org/domains/example")
    );
    assert_eq!(t.nodes[a + 1].text, "More information...");
    assert!(t.find_text("This domain is for use in illustrative examples in documents. You may use this domain in literature without prior coordination or asking for permission.").is_some(), "whitespace collapsed");
}

#[test]
fn set_of_marks_observations() {
    let v: serde_json::Value =
        serde_json::from_str(&case("web/01_visualwebarena_som_prompt_examples.json")).unwrap();
    let obs: Vec<&str> = v["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e[0].as_str().unwrap())
        .collect();
    assert_eq!(obs.len(), 3);

    let p = auto(obs[0], "som");
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let t = &p.tree;
    assert_eq!(t.len(), 6);
    let cart = by_key(t, "33");
    assert_eq!(
        (t.nodes[cart].role.as_str(), t.nodes[cart].text.as_str()),
        ("BUTTON", "Add to Cart")
    );
    let price = t.find_text("$279.49").unwrap();
    assert_eq!(
        (t.nodes[price].role.as_str(), t.nodes[price].key.kind),
        ("StaticText", KeyKind::Path)
    );
    assert!(
        t.nodes[by_key(t, "31")]
            .text
            .starts_with("Image, description: hp fx-7010dn fax machine, url: http://")
    );
    assert!(t.attributes.contains(&(
        "objective".to_string(),
        "What is the price of HP Inkjet Fax Machine?".to_string()
    )));

    let t = auto(obs[1], "som").tree;
    assert_eq!(t.len(), 11);
    assert_eq!(t.find_role("StaticText").len(), 5);
    assert_eq!(
        t.nodes[1].text,
        "[homemade] Obligatory Halloween Pumpkin Loaf!\tSubmitted by\tkneechalice\tt3_yid9lu\t1 year ago"
    );
    assert_eq!(t.nodes[by_key(&t, "11")].text, "45 comments");
    assert_eq!(t.nodes[by_key(&t, "9")].text, "", "an empty [] text");
    assert!(
        t.attributes
            .contains(&("url".to_string(), "http://reddit.com".to_string()))
    );

    let t = auto(obs[2], "som").tree;
    assert_eq!(t.len(), 13);
    assert_eq!(t.find_role("StaticText").len(), 6);
    assert_eq!(t.nodes[by_key(&t, "5")].role, "INPUT");
    assert_eq!(t.nodes[by_key(&t, "6")].text, "Select a category");
}

#[test]
fn atspi_fixtures() {
    let t = clean("os/atspi2_fixture_test-component.xml", "atspi");
    assert_eq!((t.len(), t.max_depth()), (5, 2));
    assert_eq!(
        (t.nodes[0].role.as_str(), t.nodes[0].name.as_str()),
        ("accelerator label", "root_object")
    );
    let obj3 = t.find_text("obj3").unwrap();
    assert_eq!(t.nodes[obj3].role, "push button");
    assert_eq!(
        t.nodes[obj3].bounds,
        rect(250, 250, 600, 450),
        "x y width height"
    );
    assert_eq!(t.nodes[obj3].attr("component.alpha"), Some("2.5"));
    assert_eq!(t.nodes[obj3].attr("description"), Some("third child"));
    let inner = t.find_text("aobj3").unwrap();
    assert_eq!(
        (t.nodes[inner].depth, t.nodes[inner].parent),
        (2, Some(obj3))
    );
    let obj2: Vec<usize> = (0..t.len())
        .filter(|&i| t.nodes[i].name == "obj2")
        .collect();
    assert_eq!(obj2.len(), 2, "names are not unique: keys are positional");
    assert_eq!(t.nodes[obj2[0]].bounds, rect(350, 200, 350, 200));
    assert_eq!(t.nodes[obj2[1]].bounds, None);
    assert_eq!(t.nodes[obj2[1]].key.value, "/0/2");

    let t = clean("os/atspi2_fixture_test-table.xml", "atspi");
    assert_eq!((t.len(), t.max_depth()), (30, 3));
    assert_eq!(t.find_role("table cell").len(), 12);
    assert_eq!(t.find_role("table row header").len(), 4);
    assert_eq!(t.find_role("table column header").len(), 3);
    assert_eq!(
        t.nodes
            .iter()
            .filter(|n| n.attr("states") == Some("selected"))
            .count(),
        4
    );
    let cell = t.find_text("cell 1/0").unwrap();
    assert_eq!(t.nodes[cell].attr("table_cell.column_span"), Some("3"));
    assert_eq!(t.nodes[cell].attr("tag"), Some("accessible_table_cell"));
}

#[test]
fn droidbot_before_and_after() {
    let before = clean(
        "trajectories/droidbot_acrylic/state_2023-10-19_024840.json",
        "droidbot",
    );
    assert_eq!((before.len(), before.max_depth()), (15, 7));
    assert!(before.attributes.contains(&(
        "foreground_activity".to_string(),
        "anupam.acrylic/.EasyPaint".to_string()
    )));
    assert!(
        before
            .attributes
            .contains(&("width".to_string(), "2340".to_string()))
    );
    let cont = by_key(&before, "android:id/button2");
    assert_eq!(before.nodes[cont].text, "CONTINUE");
    assert_eq!(before.nodes[cont].bounds, rect(693, 1298, 969, 1442));
    assert_eq!(before.nodes[cont].attr("temp_id"), Some("14"));
    assert_eq!(before.nodes[cont].attr("clickable"), Some("true"));
    assert_eq!(
        before.nodes[by_key(&before, "android:id/alertTitle")].text,
        "Acrylic Paint"
    );
    assert_eq!(before.nodes[0].bounds, rect(27, 273, 1053, 1502));

    // The event touched view 14 (CONTINUE); afterwards the dialog is gone.
    let event: serde_json::Value = serde_json::from_str(&case(
        "trajectories/droidbot_acrylic/event_2023-10-19_024841.json",
    ))
    .unwrap();
    assert_eq!(event["event"]["view"]["temp_id"], 14);
    let after = clean(
        "trajectories/droidbot_acrylic/state_2023-10-19_024846.json",
        "droidbot",
    );
    assert_eq!((after.len(), after.max_depth()), (12, 5));
    assert!(after.find_text("CONTINUE").is_none());
    let brush = by_key(&after, "anupam.acrylic:id/brush_menu");
    assert_eq!(
        (after.nodes[brush].name.as_str(), after.nodes[brush].bounds),
        ("Brush", rect(672, 12, 816, 156))
    );
    assert_eq!(after.nodes[0].bounds, rect(0, 0, 1080, 1920));
}

#[test]
fn every_case_file_parses() {
    let reg = Registry::standard();
    let mut seen = 0;
    let mut dirs = vec![cases()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("qwen") {
                    dirs.push(path);
                }
                continue;
            }
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if !matches!(ext, "xml" | "html" | "json") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let p = reg
                .parse("auto", &text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(!p.tree.is_empty(), "{}", path.display());
            p.tree.check().unwrap();
            seen += 1;
        }
    }
    assert_eq!(
        seen,
        5 + 6 + 1 + 2 + 3,
        "android, browsergym, som json, os, droidbot"
    );
}
