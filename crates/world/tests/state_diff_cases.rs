//! Every file in `../shared/cases` (read at run time, never copied) parsed with `--format auto`
//! and diffed: against itself (no change), and against copies with one node's text edited, one
//! attribute edited and one subtree deleted (exactly that change). Terminal screens and JSON
//! also get one raw line edited (exactly that line in the line diff); the Set-of-Marks
//! observations inside the VisualWebArena prompt file are checked as states too. The real
//! DroidBot before/after pair is diffed as well.

use std::path::{Path, PathBuf};

use agentworld_world::diff::{Change, LineOp, TextField, diff, line_diff};
use agentworld_world::state::{Registry, StateTree};

fn cases() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cases")
}

/// Every file under `dir`, sorted; `None` (with a note) when `dir` is missing.
fn files(dir: &Path) -> Option<Vec<PathBuf>> {
    if !dir.is_dir() {
        eprintln!(
            "note: {} is missing; skipping the case-file diffs",
            dir.display()
        );
        return None;
    }
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    Some(out)
}

/// The first node at or after the middle (wrapping around) that `pick` accepts.
fn middle(t: &StateTree, pick: impl Fn(usize) -> bool) -> Option<usize> {
    let n = t.len();
    (0..n).map(|k| (n / 2 + k) % n).find(|&i| pick(i))
}

/// Whether the subtrees at `x` in `a` and `y` in `b` hold the same nodes.
fn same_subtree(a: &StateTree, x: usize, b: &StateTree, y: usize) -> bool {
    let (ea, eb) = (a.subtree_end(x), b.subtree_end(y));
    ea - x == eb - y
        && a.nodes[x..ea].iter().zip(&b.nodes[y..eb]).all(|(p, q)| {
            (
                &p.role,
                &p.name,
                &p.text,
                &p.attributes,
                p.depth - a.nodes[x].depth,
            ) == (
                &q.role,
                &q.name,
                &q.text,
                &q.attributes,
                q.depth - b.nodes[y].depth,
            )
        })
}

/// `t` without the subtree at `k`.
fn without(t: &StateTree, k: usize) -> StateTree {
    let end = t.subtree_end(k);
    let gone = end - k;
    let mut out = t.clone();
    out.nodes.drain(k..end);
    for n in &mut out.nodes[k..] {
        n.parent = n.parent.map(|p| if p >= end { p - gone } else { p });
    }
    out.check().unwrap();
    out
}

fn check_file(path: &Path, text: &str) {
    let name = path.display();
    let parsed = Registry::standard()
        .parse("auto", text)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let t = &parsed.tree;
    t.check().unwrap();
    eprintln!("{name}: {} ({} nodes)", t.format, t.len());
    let same = diff(t, t);
    assert!(same.is_empty(), "{name}: {}", same.render());

    // One text edited.
    let k = middle(t, |i| !t.nodes[i].text.is_empty());
    if let Some(k) = k {
        let mut edited = t.clone();
        edited.nodes[k].text.push_str(" (edited)");
        let d = diff(t, &edited);
        match &d.changes[..] {
            [
                Change::TextChanged {
                    node,
                    field: TextField::Text,
                    before,
                    after,
                },
            ] => {
                assert_eq!((node.before, node.after), (Some(k), Some(k)), "{name}");
                assert_eq!(after, &format!("{before} (edited)"), "{name}");
            }
            _ => panic!("{name}: text of node {k}: {}", d.render()),
        }
    }

    // One attribute edited (or, where no node has one, added).
    let k = middle(t, |i| !t.nodes[i].attributes.is_empty()).unwrap_or(t.len() / 2);
    let mut edited = t.clone();
    let attrs = &mut edited.nodes[k].attributes;
    let (attr, old) = match attrs.first_mut() {
        Some((a, v)) => {
            let old = v.clone();
            v.push('!');
            (a.clone(), Some(old))
        }
        None => {
            attrs.push(("diff-test".into(), "1".into()));
            ("diff-test".into(), None)
        }
    };
    let d = diff(t, &edited);
    match &d.changes[..] {
        [
            Change::AttributeChanged {
                node,
                name: a,
                before,
                ..
            },
        ] => {
            assert_eq!((node.before, node.after), (Some(k), Some(k)), "{name}");
            assert_eq!((a, before), (&attr, &old), "{name}");
        }
        _ => panic!("{name}: attribute {attr} of node {k}: {}", d.render()),
    }

    // One subtree deleted (not the only root).
    let roots = t.top_level().len();
    let k = middle(t, |i| t.nodes[i].depth > 0 || roots > 1);
    if let Some(k) = k {
        let cut = without(t, k);
        let d = diff(t, &cut);
        match &d.changes[..] {
            [Change::Removed { node, size, .. }] => {
                assert_eq!(*size, t.subtree_end(k) - k, "{name}");
                let r = node.before.unwrap();
                assert!(r == k || same_subtree(t, r, t, k), "{name}: {r} for {k}");
            }
            _ => panic!("{name}: deleting node {k}: {}", d.render()),
        }
        // And back: one insertion.
        let d = diff(&cut, t);
        assert!(
            matches!(&d.changes[..], [Change::Inserted { size, .. }] if *size == t.subtree_end(k) - k),
            "{name}: {}",
            d.render()
        );
    }

    if matches!(t.format.as_str(), "terminal" | "json") {
        let lines: Vec<&str> = text.lines().collect();
        let n = lines.len();
        let k = (0..n)
            .map(|i| (n / 2 + i) % n)
            .find(|&i| !lines[i].trim().is_empty())
            .unwrap();
        let mut edited: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        edited[k].push_str(" edited");
        let d = line_diff(text, &edited.join("\n"));
        let got: Vec<_> = d
            .iter()
            .map(|c| (c.op, c.before_line, c.after_line))
            .collect();
        assert_eq!(
            got,
            [
                (LineOp::Removed, Some(k + 1), None),
                (LineOp::Added, None, Some(k + 1))
            ],
            "{name}"
        );
        assert!(line_diff(text, text).is_empty());
    }
}

#[test]
fn every_case_file_parses_and_diffs() {
    let Some(all) = files(&cases()) else { return };
    for path in &all {
        let bytes = std::fs::read(path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        check_file(path, &text);
        // The Set-of-Marks observations inside it, as states of their own.
        if path.ends_with("01_visualwebarena_som_prompt_examples.json") {
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            for example in v["examples"].as_array().unwrap() {
                check_file(path, example[0].as_str().unwrap());
            }
        }
    }
    assert!(all.len() >= 24, "{} files", all.len());
}

#[test]
fn droidbot_dialog_closes() {
    let dir = cases().join("trajectories/droidbot_acrylic");
    if !dir.is_dir() {
        eprintln!("note: {} is missing; skipping", dir.display());
        return;
    }
    let read = |f: &str| {
        let text = std::fs::read_to_string(dir.join(f)).unwrap();
        Registry::standard().parse("auto", &text).unwrap().tree
    };
    let before = read("state_2023-10-19_024840.json");
    let after = read("state_2023-10-19_024846.json");
    let d = diff(&before, &after);
    // Whether `key`'s node in `t`, or an ancestor, is reported as `kind` (by node index).
    let reported = |t: &StateTree, key: &str, removed: bool| {
        let roots: Vec<usize> = d
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::Removed { node, .. } if removed => node.before,
                Change::Inserted { node, .. } if !removed => node.after,
                _ => None,
            })
            .collect();
        let mut at = t.find_key(key).first().copied();
        while let Some(x) = at {
            if roots.contains(&x) {
                return true;
            }
            at = t.nodes[x].parent;
        }
        false
    };
    assert!(
        reported(&before, "android:id/button2", true),
        "{}",
        d.render()
    );
    assert!(
        reported(&before, "android:id/alertTitle", true),
        "{}",
        d.render()
    );
    assert!(
        reported(&after, "anupam.acrylic:id/brush_menu", false),
        "{}",
        d.render()
    );
    // The app's content view survives: it moves into the new decor layout.
    assert!(
        d.changes
            .iter()
            .any(|c| matches!(c, Change::Moved { node, to, .. }
            if node.key == "android:id/content"
                && to.parent.as_deref() == Some("android:id/decor_content_parent"))),
        "{}",
        d.render()
    );
}
