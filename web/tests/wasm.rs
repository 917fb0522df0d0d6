//! The page's plain-data code compiled to wasm32, as the browser runs it, under
//! `wasm-bindgen-test` (in Node, through the `wasm-bindgen-test-runner` of wasm-bindgen-cli):
//! the sanitiser, the state parsers and diff, and the MoE view's data. Native `cargo test`
//! covers the same modules in depth; these catch what differs on wasm32 (no threads, no
//! clock, 32-bit `usize`). Run: `web/wasm-test.sh`.
#![cfg(target_arch = "wasm32")]

use agentworld_web::routing::{TokenRoute, Usage, heatmap};
use agentworld_web::sanitize::{Marks, srcdoc};
use agentworld_world::diff::diff;
use agentworld_world::state::Registry;
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn a_hostile_page_is_rebuilt_inert() {
    let page = "<p onclick=\"alert(1)\">hi</p><script>alert(2)</script>\
                <a href=\"javascript:alert(3)\">x</a><iframe srcdoc=\"y\"></iframe>";
    let tree = Registry::standard().parse("html", page).unwrap().tree;
    let (out, report) = srcdoc(&tree, &Marks::new(), None);
    for bad in ["onclick", "<script", "javascript:", "<iframe", "srcdoc"] {
        assert!(!out.contains(bad), "{bad} survived: {out}");
    }
    assert!(out.contains("hi") && !report.is_clean());
}

#[wasm_bindgen_test]
fn an_android_dump_parses_and_a_toggle_diffs() {
    let dump = |checked: &str| {
        format!(
            "<?xml version='1.0' encoding='UTF-8'?><hierarchy rotation=\"0\">\
             <node index=\"0\" text=\"\" resource-id=\"root\" class=\"android.widget.FrameLayout\" \
             checkable=\"false\" checked=\"false\" bounds=\"[0,0][1080,2400]\">\
             <node index=\"0\" text=\"Wi-Fi\" resource-id=\"wifi\" class=\"android.widget.Switch\" \
             checkable=\"true\" checked=\"{checked}\" bounds=\"[0,100][1080,200]\"/></node></hierarchy>"
        )
    };
    let registry = Registry::standard();
    let before = registry.parse("uiautomator", &dump("false")).unwrap().tree;
    let after = registry.parse("uiautomator", &dump("true")).unwrap().tree;
    let d = diff(&before, &after);
    assert_eq!(d.changes.len(), 1, "{}", d.render());
    assert!(d.render().contains("checked"), "{}", d.render());
}

#[wasm_bindgen_test]
fn the_heatmap_and_usage_count_in_wasm() {
    let route = TokenRoute {
        text: "a".into(),
        experts: vec![vec![1, 0], vec![3, 2]],
        weights: vec![vec![0.75, 0.25], vec![0.5, 0.5]],
    };
    let grid = heatmap(std::slice::from_ref(&route), 2, 4);
    assert_eq!(grid[0][1], vec![0.75]);
    assert_eq!(grid[1][3], vec![0.5]);
    let mut usage = Usage::default();
    usage.add("android", &route, 4);
    assert_eq!(usage.domains()[0].share[1], vec![0.0, 0.0, 0.5, 0.5]);
}
