//! The state parsers never panic and never recurse: every parser on cut, mutated and random
//! versions of every real case file and example, and 80- and 10,000-level trees in every
//! nested format.

mod common;

use std::path::{Path, PathBuf};

use agentworld_world::Error;
use agentworld_world::state::{ParsedState, Registry, StateTree};
use common::Rng;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every case and example state file, as (name, text).
fn corpus() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![
        root().join("../../../shared/cases"),
        root().join("../../examples"),
    ];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("qwen") {
                    dirs.push(path);
                }
            } else if ["xml", "html", "json", "txt", "tsv", "jsonl"]
                .contains(&path.extension().and_then(|e| e.to_str()).unwrap_or(""))
            {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((name(&path), text));
            }
        }
    }
    assert!(out.len() >= 25, "{}", out.len());
    out
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Runs every parser on `text`: a result is a tree with nodes and valid invariants, or an error.
fn all_parsers(reg: &Registry, text: &str, what: &str) -> usize {
    let mut ok = 0;
    for p in reg.parsers() {
        let c = p.detect(text);
        assert!((0.0..=1.0).contains(&c), "{what}: {} detect {c}", p.name());
        match p.parse(text) {
            Ok(parsed) => {
                assert!(!parsed.tree.is_empty(), "{what}: {}", p.name());
                parsed
                    .tree
                    .check()
                    .unwrap_or_else(|e| panic!("{what}: {}: {e}", p.name()));
                ok += 1;
            }
            Err(Error::Unreadable { .. }) => {}
            Err(e) => panic!("{what}: {}: unexpected error kind {e}", p.name()),
        }
    }
    ok
}

fn cut(text: &str, at: usize) -> &str {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    &text[..at]
}

#[test]
fn truncations_of_every_file() {
    let reg = Registry::standard();
    let mut rng = Rng::new(2024);
    for (name, text) in corpus() {
        all_parsers(&reg, &text, &name);
        let mut points: Vec<usize> = (0..48).map(|_| rng.below(text.len() + 1)).collect();
        points.extend([0, 1, 2, 5, 17, text.len().saturating_sub(1)]);
        for at in points {
            let prefix = cut(&text, at);
            all_parsers(&reg, prefix, &format!("{name}[..{at}]"));
            // Detection picks a parser that reads something, or says nothing could be read.
            if let Ok(p) = reg.parse("auto", prefix) {
                p.tree.check().unwrap();
            }
        }
    }
}

#[test]
fn mutations_of_every_file() {
    let reg = Registry::standard();
    let mut rng = Rng::new(7);
    let noise: Vec<char> = "<>/\"'=[]{}(),:\t\n &#;\\-!?~é🌿".chars().collect();
    for (name, text) in corpus() {
        let chars: Vec<char> = text.chars().collect();
        for round in 0..6 {
            let mut c = chars.clone();
            for _ in 0..(1 + c.len() / 50) {
                if c.is_empty() {
                    break;
                }
                let i = rng.below(c.len());
                match rng.below(3) {
                    0 => c[i] = noise[rng.below(noise.len())],
                    1 => {
                        c.remove(i);
                    }
                    _ => c.insert(i, noise[rng.below(noise.len())]),
                }
            }
            let s: String = c.into_iter().collect();
            all_parsers(&reg, &s, &format!("{name} mutation {round}"));
            let _ = reg.parse("auto", &s);
        }
    }
}

#[test]
fn random_text_never_panics() {
    let reg = Registry::standard();
    let alphabet: Vec<char> =
        "ab <>/\"'=[]{}(),:\t\n#&;0123456789.-_node class bounds UI element [12] link 'x' $ ~\u{0}"
            .chars()
            .collect();
    let mut rng = Rng::new(99);
    for i in 0..1500 {
        let len = rng.below(120);
        let s: String = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        all_parsers(&reg, &s, &format!("random {i}: {s:?}"));
    }
    for garbage in [
        "", " ", "\n\n", "\u{feff}", "<", "[", "{", "\"", "[]", "<<>>", "\0\0",
    ] {
        all_parsers(&reg, garbage, &format!("{garbage:?}"));
    }
}

/// A nested document of `levels` in each nested format, with the format's name.
fn nested(levels: usize) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    let open_close = |open: &str, close: &str, head: &str, tail: &str| {
        format!(
            "{head}{}{}{tail}",
            open.repeat(levels),
            close.repeat(levels)
        )
    };
    v.push((
        "uiautomator",
        open_close(
            "<node class=\"android.view.ViewGroup\" bounds=\"[0,0][9,9]\">",
            "</node>",
            "<hierarchy rotation=\"0\">",
            "</hierarchy>",
        ),
    ));
    v.push((
        "appium",
        open_close(
            "<android.view.ViewGroup bounds=\"[0,0][9,9]\">",
            "</android.view.ViewGroup>",
            "<hierarchy>",
            "</hierarchy>",
        ),
    ));
    v.push((
        "html",
        open_close(
            "<div>",
            "</div>",
            "<!DOCTYPE html><html><body>",
            "</body></html>",
        ),
    ));
    v.push((
        "osworld-xml",
        open_close(
            "<filler name=\"f\" cp:screencoord=\"(0, 0)\" cp:size=\"(9, 9)\">",
            "</filler>",
            "<desktop-frame xmlns:cp=\"https://accessibility.ubuntu.example.org/ns/component\">",
            "</desktop-frame>",
        ),
    ));
    v.push(("atspi", open_close("<accessible role=\"panel\" name=\"p\"><component x=\"0\" y=\"0\" width=\"9\" height=\"9\"/>", "</accessible>", "", "")));
    v.push(("json", open_close("{\"a\": [", "]}", "", "")));
    v.push((
        "mind2web",
        open_close("<div id=7>", "</div>", "A. None of the above\nB. ", ""),
    ));
    let mut ax = String::new();
    let mut compact = String::new();
    for d in 0..levels {
        ax.push_str(&"\t".repeat(d));
        ax.push_str(&format!("[{d}] group 'g{d}'\n"));
        compact.push_str(&"  ".repeat(d));
        compact.push_str("FrameLayout [0,0][9,9]\n");
    }
    v.push(("axtree", ax));
    v.push(("android-compact", compact));
    let views: Vec<String> = (0..levels)
        .map(|i| {
            let parent = if i == 0 { -1 } else { i as i64 - 1 };
            let children = if i + 1 < levels { format!("[{}]", i + 1) } else { "[]".into() };
            format!("{{\"class\": \"V\", \"temp_id\": {i}, \"parent\": {parent}, \"children\": {children}, \"bounds\": [[0, 0], [9, 9]]}}")
        })
        .collect();
    v.push(("droidbot", format!("{{\"views\": [{}]}}", views.join(", "))));
    v
}

fn deepest(t: &StateTree) -> usize {
    t.max_depth()
}

#[test]
fn deep_trees_in_every_nested_format() {
    let reg = Registry::standard();
    for levels in [80, 10_000] {
        for (format, text) in nested(levels) {
            let detected = reg.detect(&text);
            assert_eq!(
                detected.first().map(|d| d.0),
                Some(format),
                "{format} {levels}: {detected:?}"
            );
            let p: ParsedState = reg
                .parse(format, &text)
                .unwrap_or_else(|e| panic!("{format} {levels}: {e}"));
            let t = &p.tree;
            t.check().unwrap();
            assert!(
                deepest(t) + 1 >= levels,
                "{format} {levels}: depth {}",
                deepest(t)
            );
            // Rendering and serialising are loops too.
            assert!(t.outline().lines().count() >= levels);
            let json = serde_json::to_string(t).unwrap();
            assert!(json.len() > levels);
            // Keys of deep wrapper chains stay short.
            let longest = t.nodes.iter().map(|n| n.key.value.len()).max().unwrap();
            assert!(longest < 256, "{format} {levels}: key of {longest} bytes");
            drop(p);
        }
    }
}

#[test]
fn long_flat_lists() {
    let reg = Registry::standard();
    let n = 10_000;
    let som: String = (0..n).map(|i| format!("[{i}] [A] [link {i}]\n")).collect();
    let aw: String = (0..n)
        .map(|i| {
            format!(
                "UI element {i}: UIElement(text='t{i}', class_name='android.widget.TextView')\n"
            )
        })
        .collect();
    let tsv: String = std::iter::once(
        "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)\n".to_string(),
    )
    .chain((0..n).map(|i| format!("label\tl{i}\t\"\"\t\t\t({i}, 0)\t(5, 5)\n")))
    .collect();
    for (format, text) in [("som", som), ("androidworld", aw), ("osworld-tsv", tsv)] {
        let p = reg.parse("auto", &text).unwrap();
        assert_eq!((p.tree.format.as_str(), p.tree.len()), (format, n));
        assert!(p.warnings.is_empty(), "{format}: {:?}", &p.warnings[..1]);
    }
}

#[test]
fn registry_names_errors_and_fallback() {
    let reg = Registry::standard();
    assert_eq!(
        reg.names(),
        [
            "uiautomator",
            "appium",
            "android-compact",
            "androidworld",
            "droidbot",
            "html",
            "axtree",
            "som",
            "mind2web",
            "osworld-xml",
            "osworld-tsv",
            "atspi",
            "terminal",
            "json"
        ]
    );
    let err = reg.parse("yaml", "x").unwrap_err().to_string();
    assert!(
        err.contains("unknown state format `yaml`") && err.contains("osworld-tsv"),
        "{err}"
    );
    assert!(matches!(
        reg.parse("auto", ""),
        Err(Error::Unreadable { .. })
    ));
    assert!(matches!(
        reg.parse("auto", "  \n "),
        Err(Error::Unreadable { .. })
    ));
    assert!(matches!(
        reg.parse("droidbot", "plain words"),
        Err(Error::Unreadable { .. })
    ));
    // A compact-looking text that the compact parser rejects falls back, with a warning.
    let p = reg.parse("auto", "{\"views\": 3, \"temp_id\": 1}").unwrap();
    assert_eq!(p.tree.format, "json");
    assert!(
        p.warnings[0]
            .message
            .starts_with("read as json after: droidbot"),
        "{:?}",
        p.warnings
    );
    // A model's compact tree with a skipped indentation level is still read as android-compact.
    let p = reg
        .parse(
            "auto",
            "LinearLayout [0,0][9,9]\n  FrameLayout [0,0][9,9]\n      TextView \"x\" [0,0][9,9]\n",
        )
        .unwrap();
    assert_eq!(
        (p.tree.format.as_str(), p.warnings.len()),
        ("android-compact", 1)
    );
    // Forcing a format reads what it can.
    let p = reg.parse("terminal", "<hierarchy>").unwrap();
    assert_eq!(p.tree.nodes[1].text, "<hierarchy>");
}
