//! Facts from every real dump in `../shared/cases/android`, read at run time.

use std::path::PathBuf;

use agentworld_world::state::android::{
    AndroidTree, Bounds, KeptFields, SourceFormat, compare_trees, parse_compact, parse_xml,
    parse_xml_bytes, render_compact, to_uiautomator_xml,
};

fn case(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/cases/android")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{} (tests read ../shared/cases beside the repo): {e}",
            path.display()
        )
    })
}

fn read(name: &str) -> AndroidTree {
    let parsed = parse_xml(&case(name)).unwrap();
    assert!(parsed.warnings.is_empty(), "{name}: {:?}", parsed.warnings);
    parsed.tree
}

fn b(s: &str) -> Option<Bounds> {
    Bounds::parse(s)
}

const FILES: [(&str, usize, usize); 5] = [
    ("01_pixel_launcher_home.xml", 25, 13),
    ("02_aena_welcome_onboarding.xml", 34, 14),
    ("04_compose_chinese_emoji_fixture.xml", 50, 10),
    ("05_appium_pagesource_xueqiu_classname_tags.xml", 179, 27),
    ("07_flutter_naf_newline_contentdesc.xml", 17, 9),
];

#[test]
fn node_counts_and_depths() {
    for (name, count, depth) in FILES {
        let t = read(name);
        assert_eq!((t.len(), t.max_depth()), (count, depth), "{name}");
        t.check().unwrap();
    }
}

#[test]
fn pixel_launcher_facts() {
    let t = read("01_pixel_launcher_home.xml");
    assert_eq!(t.source, SourceFormat::Uiautomator);
    assert_eq!(
        t.root_attributes,
        [("rotation".to_string(), "0".to_string())]
    );
    let clock = t.find_by_id("clock");
    assert_eq!(clock, [14]);
    let n = &t.nodes[14];
    assert_eq!(
        (n.text.as_str(), n.content_desc.as_str()),
        ("Fri, Apr 21", "Fri, Apr 21")
    );
    assert_eq!(n.bounds, b("[77,123][1045,180]"));
    let mic = &t.nodes[24];
    assert_eq!(
        (mic.short_id().as_str(), mic.content_desc.as_str()),
        ("mic_icon", "Voice search")
    );
    assert_eq!(mic.bounds, b("[869,1603][1011,1768]"));
    assert!(mic.flags.clickable);
    assert_eq!(t.find_by_text("Chrome"), [20]);
    assert_eq!(t.nodes[2].short_id(), "android:content");
}

#[test]
fn aena_facts() {
    let t = read("02_aena_welcome_onboarding.xml");
    let next = &t.nodes[31];
    assert_eq!(
        (
            next.class.as_str(),
            next.text.as_str(),
            next.content_desc.as_str()
        ),
        ("android.widget.Button", "NEXT", "Next page")
    );
    assert_eq!(next.bounds, b("[0,2161][1080,2242]"));
    let dot = &t.nodes[15];
    assert!(!dot.flags.enabled && dot.flags.selected);
    assert_eq!(dot.bounds, b("[428,898][484,1039]"));
    assert_eq!((15..=18).filter(|&i| !t.nodes[i].flags.enabled).count(), 4);
    assert_eq!(
        t.nodes[33].bounds,
        Some(Bounds::default()),
        "zero-size navigation bar background"
    );
    let same = t.find_by_id("nav_host_container");
    assert_eq!(same.len(), 2);
    assert_eq!(
        t.parent(same[1]),
        Some(same[0]),
        "parent and child share the resource-id"
    );
}

#[test]
fn compose_emoji_facts() {
    let t = read("04_compose_chinese_emoji_fixture.xml");
    assert_eq!(t.nodes[21].text, "🌿", "&#127807; decoded");
    assert_eq!(t.nodes[21].bounds, b("[106,1676][180,1744]"));
    assert_eq!(t.nodes[11].text, "命理解读");
    assert_eq!(t.nodes[31].text, "⛰️");
    assert_eq!(t.nodes[47].bounds, Some(Bounds::default()));
    let line = render_compact(&t).lines().nth(21).unwrap().to_string();
    assert_eq!(line.trim_start(), "TextView \"🌿\" [106,1676][180,1744]");
}

#[test]
fn appium_facts() {
    let t = read("05_appium_pagesource_xueqiu_classname_tags.xml");
    assert_eq!(t.source, SourceFormat::Appium);
    assert!(
        t.root_attributes
            .contains(&("width".to_string(), "1080".to_string()))
    );
    let search = &t.nodes[12];
    assert_eq!(
        (search.text.as_str(), search.short_id().as_str()),
        ("搜索股票/组合/用户/讨论", "tv_search")
    );
    assert_eq!(search.bounds, b("[269,120][810,192]"));
    assert_eq!(search.extra("displayed"), Some("true"));
    assert!(t.nodes.iter().all(|n| n.content_desc.is_empty()));
    assert_eq!(t.find_by_id("stock_rise_sign").len(), 7);
    assert!(t.nodes[169].flags.selected && t.nodes[169].text == "雪球");
}

#[test]
fn flutter_facts() {
    let t = read("07_flutter_naf_newline_contentdesc.xml");
    assert_eq!(t.nodes[7].content_desc, "No files open\nNo file selected");
    assert_eq!(t.nodes[9].extra("NAF"), Some("true"));
    assert_eq!(
        t.nodes
            .iter()
            .filter(|n| n.extra("NAF") == Some("true"))
            .count(),
        2
    );
    assert!(t.nodes[14].flags.selected);
    assert_eq!(t.nodes[14].content_desc, "Explorer\nTab 1 of 3");
    let compact = render_compact(&t);
    assert!(
        compact.contains(
            "Button desc=\"Explorer\\nTab 1 of 3\" clickable selected [0,2195][360,2358]"
        ),
        "{compact}"
    );
}

#[test]
fn compact_round_trips_every_file() {
    for (name, count, _) in FILES {
        let t = read(name);
        let text = render_compact(&t);
        assert_eq!(text.lines().count(), count, "{name}");
        let back = parse_compact(&text).unwrap();
        assert!(back.warnings.is_empty(), "{name}");
        assert_eq!(render_compact(&back.tree), text, "{name}");
        for (a, b) in t.nodes.iter().zip(&back.tree.nodes) {
            assert_eq!(KeptFields::of(a), KeptFields::of(b), "{name}");
        }
        let cmp = compare_trees(&back.tree, &t);
        assert!(cmp.exact && cmp.accuracy == 1.0, "{name}: {cmp:?}");
    }
}

#[test]
fn xml_round_trips_every_file() {
    for (name, _, _) in FILES {
        let t = read(name);
        let back = parse_xml(&to_uiautomator_xml(&t)).unwrap();
        assert!(back.warnings.is_empty(), "{name}");
        let sorted = |tree: &AndroidTree| {
            let mut nodes = tree.nodes.clone();
            nodes.iter_mut().for_each(|n| n.extra.sort());
            nodes
        };
        assert_eq!(
            sorted(&back.tree),
            sorted(&t),
            "{name}: the writer puts `index` first, other extras keep their order"
        );
        assert_eq!(back.tree.source, SourceFormat::Uiautomator);
    }
}

#[test]
fn a_truncated_compact_prediction_scores_partially() {
    let t = read("01_pixel_launcher_home.xml");
    let text = render_compact(&t);
    let cut = &text[..text.len() - 12];
    let pred = parse_compact(cut).unwrap();
    assert_eq!(pred.warnings.len(), 1);
    let cmp = compare_trees(&pred.tree, &t);
    assert_eq!((cmp.matched, cmp.aligned), (24, 25));
    assert!(!cmp.exact);
}

#[test]
fn trailing_dump_message_is_a_warning() {
    let text = format!(
        "{}UI hierchary dumped to: /dev/tty\n",
        case("01_pixel_launcher_home.xml")
    );
    let parsed = parse_xml_bytes(text.as_bytes()).unwrap();
    assert_eq!(parsed.tree.len(), 25);
    assert_eq!(parsed.warnings.len(), 1);
    assert!(
        parsed.warnings[0]
            .message
            .contains("UI hierchary dumped to: /dev/tty")
    );
}

fn deep_dump(levels: usize) -> String {
    let mut s = String::from(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<hierarchy rotation=\"0\">",
    );
    for i in 0..levels {
        s.push_str(&format!("<node index=\"0\" text=\"{i}\" class=\"android.view.ViewGroup\" bounds=\"[0,0][1080,{}]\">", 2000 - (i % 1000)));
    }
    for _ in 0..levels {
        s.push_str("</node>");
    }
    s.push_str("</hierarchy>");
    s
}

#[test]
fn deep_trees_do_not_blow_the_stack() {
    for levels in [80, 10_000] {
        let parsed = parse_xml(&deep_dump(levels)).unwrap();
        let t = parsed.tree;
        assert_eq!((t.len(), t.max_depth()), (levels, levels - 1));
        assert_eq!(t.nodes[levels - 1].text, (levels - 1).to_string());
        let compact = render_compact(&t);
        let back = parse_compact(&compact).unwrap().tree;
        assert_eq!(back.len(), levels);
        assert!(compare_trees(&back, &t).exact);
        let again = parse_xml(&to_uiautomator_xml(&t)).unwrap().tree;
        assert_eq!(again.len(), levels);
        assert_eq!(t.subtree(levels / 2).len(), levels - levels / 2);
        drop((t, back, again));
    }
}
