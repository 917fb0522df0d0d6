//! Observation patches on the generated GUI transitions (`agentworld_world::diff::write_patch`,
//! `apply_patch`): every row's patch applies back to its next state, edits are written as
//! patches rather than whole states, and a patch is a small part of the state it stands for.

#![cfg(feature = "native")]

use std::path::PathBuf;

use agentworld_data::android::Dump;
use agentworld_data::os::AtspiTree;
use agentworld_data::web::WebPage;
use agentworld_data::{
    AndroidDataConfig, OsDataConfig, WebDataConfig, generate_android, generate_os, generate_web,
};
use agentworld_world::Row;
use agentworld_world::diff::{PatchKind, apply_patch, write_patch};

fn cases() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cases")
}

/// Per kind, rows; and the patch rows' written bytes over their whole states' bytes.
struct Tally {
    unchanged: usize,
    patch: usize,
    whole: usize,
    patch_bytes: usize,
    state_bytes: usize,
}

fn tally(domain: &str, rows: &[Row]) -> Tally {
    let mut t = Tally {
        unchanged: 0,
        patch: 0,
        whole: 0,
        patch_bytes: 0,
        state_bytes: 0,
    };
    for row in rows {
        let current = row.current_state();
        let next = row.target_observation().unwrap();
        let written = write_patch(&current, &next);
        // As the benchmark's parser extracts it: trimmed.
        let applied = apply_patch(&current, written.trim());
        assert_eq!(
            applied.state.lines().collect::<Vec<_>>(),
            next.lines().collect::<Vec<_>>(),
            "{domain} row {}: the patch does not give the next state back:\n{written}",
            row.id
        );
        assert!(applied.unplaced.is_empty(), "{domain} row {}", row.id);
        match applied.kind {
            PatchKind::Unchanged => t.unchanged += 1,
            PatchKind::Whole => {
                t.whole += 1;
            }
            PatchKind::Patch => {
                t.patch += 1;
                t.patch_bytes += written.len();
                t.state_bytes += next.len();
            }
        }
    }
    eprintln!(
        "{domain}: {} rows: unchanged {}, patch {}, whole {}; patches are {:.1}% of their states' bytes",
        rows.len(),
        t.unchanged,
        t.patch,
        t.whole,
        100.0 * t.patch_bytes as f64 / t.state_bytes.max(1) as f64
    );
    t
}

#[test]
fn web_edits_are_written_as_patches_and_navigations_whole() {
    let pages = WebPage::load_dir(cases().join("web/browsergym")).unwrap();
    let rows = generate_web(&WebDataConfig {
        n: 300,
        seed: 5,
        pages,
        ..Default::default()
    })
    .unwrap();
    let t = tally("web", &rows);
    // Link clicks and go_back open another page: whole states. Edits are patches.
    assert!(t.patch > t.whole, "patch {} whole {}", t.patch, t.whole);
    assert!(t.whole > 0 && t.unchanged > 0);
    assert!(t.patch_bytes * 4 < t.state_bytes);
}

#[test]
fn desktop_windows_opened_and_closed_are_patches() {
    let trees = AtspiTree::load_dir(cases().join("os")).unwrap();
    let rows = generate_os(&OsDataConfig {
        n: 300,
        seed: 5,
        trees,
        ..Default::default()
    })
    .unwrap();
    let t = tally("os", &rows);
    assert_eq!(t.whole, 0, "every desktop change is a patch");
    // The synthetic desktops are a few rows: a window opened is most of the next state.
    assert!(t.patch_bytes * 3 < t.state_bytes * 2);
}

#[test]
fn android_edits_are_patches() {
    let dumps = Dump::load_dir(cases().join("android")).unwrap();
    let rows = generate_android(&AndroidDataConfig {
        n: 300,
        seed: 5,
        dumps,
        ..Default::default()
    })
    .unwrap();
    let t = tally("android", &rows);
    assert!(
        t.patch * 10 > (t.patch + t.whole) * 9,
        "patch {} whole {}",
        t.patch,
        t.whole
    );
    assert!(t.patch_bytes * 10 < t.state_bytes * 3);
}
