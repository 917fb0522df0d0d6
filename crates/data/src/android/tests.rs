//! Generator tests on two small hand-made dumps: the new kinds (scroll, back), longer rows,
//! budgets, determinism.

use super::moves::check_move;
use super::*;
use agentworld_world::action::android::{AndroidAction, apply};
use agentworld_world::messages::strip_observation_marker;
use agentworld_world::state::android::{parse_compact, to_uiautomator_xml};

const SCREENS: [&str; 2] = [
    "\
FrameLayout [0,0][1080,1920]
  LinearLayout [0,0][1080,1800]
    TextView #title \"Settings\" [0,0][1080,120]
    EditText #search \"Search\" clickable [0,120][1080,240]
    Switch #wifi \"Wi-Fi\" checkable clickable [0,240][1080,360]
    RecyclerView #rows scrollable [0,360][1080,840]
      TextView #row \"Display\" clickable [0,360][1080,480]
      TextView #row \"Sound\" clickable [0,480][1080,600]
      TextView #row \"Battery\" clickable [0,600][1080,720]
      TextView #row \"Storage\" clickable [0,720][1080,840]
    Button #save \"Save\" disabled clickable [0,900][540,1000]
    TextView \"Version 1.2\" [0,1000][1080,1100]",
    "\
FrameLayout [0,0][1080,1920]
  LinearLayout [0,0][1080,1800]
    TextView #head \"Sign in\" [0,0][1080,120]
    EditText #user \"Username\" clickable [0,120][1080,240]
    CheckBox #remember \"Remember me\" checkable clickable [0,240][1080,360]
    TextView \"Help\" [0,400][1080,500]",
];

fn cfg(n: usize, seed: u64) -> AndroidDataConfig {
    let dumps = SCREENS
        .iter()
        .enumerate()
        .map(|(i, s)| Dump {
            name: format!("{i:02}.xml"),
            xml: to_uiautomator_xml(&parse_compact(s).unwrap().tree),
        })
        .collect();
    AndroidDataConfig {
        n,
        seed,
        dumps,
        multi_turn_fraction: 0.5,
        // both small dumps in training: the first one's only subtree within budget is a list
        held_out: Some(vec![]),
        test_every: 0,
        ..Default::default()
    }
}

fn fenced(prompt: &str) -> &str {
    prompt
        .split("```json\n")
        .nth(1)
        .unwrap()
        .split("\n```")
        .next()
        .unwrap()
}

/// Replays a row: every observation must be the exact effect of its action.
fn replay(row: &Row) -> Vec<&'static str> {
    let state = row.prompt[0].split("**Current State:**\n").nth(1).unwrap();
    let mut tree = parse_compact(state).unwrap().tree;
    let mut names = Vec::new();
    for (p, r) in row.prompt.iter().zip(&row.response) {
        let action = AndroidAction::parse(fenced(p)).unwrap();
        let after = parse_compact(&strip_observation_marker(r)).unwrap().tree;
        match action {
            AndroidAction::Scroll { .. } | AndroidAction::Back => {
                check_move(&tree, &action, &after).unwrap_or_else(|e| panic!("{}: {e}", row.id))
            }
            _ => {
                let out = apply(&tree, &action);
                let want = out.tree_after(&tree).unwrap();
                assert_eq!(render_compact(want), render_compact(&after), "{}", row.id);
            }
        }
        names.push(action.name());
        tree = after;
    }
    names
}

#[test]
fn new_kinds_are_exact_and_rows_run_up_to_four_turns() {
    let c = cfg(300, 7);
    let rows = generate_android(&c).unwrap();
    let mut turns = [0usize; 5];
    let (mut scrolls, mut backs) = (Vec::new(), Vec::new());
    for row in &rows {
        assert!(row_tokens(row) <= c.max_row_tokens, "{}", row.id);
        assert!((1..=4).contains(&row.turn_idx), "{}", row.id);
        turns[row.turn_idx] += 1;
        let state = row.prompt[0].split("**Current State:**\n").nth(1).unwrap();
        let limit = if row.turn_idx > 1 {
            c.max_multi_turn_state_chars
        } else {
            c.max_state_chars
        };
        assert!(state.len() <= limit, "{}", row.id);
        let names = replay(row);
        if let Some(b) = names.iter().position(|n| *n == "back") {
            assert_eq!(b, 0, "{}: back comes first", row.id);
            backs.push(row);
        }
        if names.last() == Some(&"scroll") {
            scrolls.push(row);
        }
    }
    println!(
        "rows by turns (0..=4): {turns:?}; {} scroll targets, {} with back",
        scrolls.len(),
        backs.len()
    );
    assert!(turns[2] > 0 && turns[3] > 0 && turns[4] > 0, "{turns:?}");
    assert!(
        scrolls.len() >= 10 && backs.len() >= 3,
        "{} scrolls, {} backs",
        scrolls.len(),
        backs.len()
    );
    for row in scrolls.iter().take(2).chain(backs.iter().take(2)) {
        println!(
            "=== {} ({} turns)\n{}\n--- thinking: {}",
            row.id,
            row.turn_idx,
            row.prompt
                .iter()
                .zip(&row.response)
                .map(|(p, r)| format!("{p}\n{r}"))
                .collect::<Vec<_>>()
                .join("\n"),
            row.thinking.as_deref().unwrap()
        );
    }
}

#[test]
fn deterministic_and_max_turns_respected() {
    let a = generate_android(&cfg(60, 3)).unwrap();
    let b = generate_android(&cfg(60, 3)).unwrap();
    assert_eq!(a, b);
    let one = generate_android(&AndroidDataConfig {
        max_turns: 1,
        ..cfg(40, 3)
    })
    .unwrap();
    assert!(one.iter().all(|r| r.turn_idx == 1));
    let two = generate_android(&AndroidDataConfig {
        max_turns: 2,
        ..cfg(40, 3)
    })
    .unwrap();
    assert!(two.iter().all(|r| r.turn_idx <= 2) && two.iter().any(|r| r.turn_idx == 2));
}

#[test]
fn made_up_screens_tile_their_parents_and_make_exact_rows() {
    let mut rng = Rng::new(11);
    let mut classes = std::collections::BTreeSet::new();
    let (mut chains, mut two_lines, mut tabs) = (0, 0, 0);
    for _ in 0..200 {
        let tree = screen::synthetic_screen(&mut rng);
        tree.check().unwrap();
        // Nested full-screen containers, two-line texts and tab bars, as in real dumps.
        if tree.len() > 2 && tree.nodes[2].bounds == tree.nodes[0].bounds {
            chains += 1;
        }
        let texts = tree.nodes.iter().flat_map(|n| [&n.text, &n.content_desc]);
        two_lines += texts.filter(|t| t.contains('\n')).count();
        tabs += tree
            .nodes
            .iter()
            .filter(|n| n.content_desc.contains("\nTab "))
            .count();
        assert!(tree.len() >= 4, "{}", render_compact(&tree));
        // The compact form reads back as the same tree.
        let text = render_compact(&tree);
        assert_eq!(render_compact(&parse_compact(&text).unwrap().tree), text);
        for i in 1..tree.len() {
            let (b, p) = (
                tree.nodes[i].bounds.unwrap(),
                tree.nodes[tree.parent(i).unwrap()].bounds.unwrap(),
            );
            assert!(b.width() > 0 && b.height() > 0, "{text}");
            assert!(
                b.left >= p.left && b.right <= p.right && b.top >= p.top && b.bottom <= p.bottom,
                "node {i} outside its parent:\n{text}"
            );
            classes.insert(tree.nodes[i].simple_class().to_string());
        }
    }
    assert!(classes.len() >= 10, "{classes:?}");
    assert!((20..80).contains(&chains), "{chains} chains of two or more");
    assert!(
        two_lines > 50 && tabs > 20,
        "{two_lines} two-line texts, {tabs} tabs"
    );

    // Every training row comes from a made-up screen at share 1, and replays exactly;
    // held-out rows still come from the held-out dump.
    let rows = generate_android(&AndroidDataConfig {
        synthetic_share: 1.0,
        held_out: None,
        test_every: 4,
        ..cfg(60, 5)
    })
    .unwrap();
    for row in &rows {
        let source = row.extra["source"].as_str().unwrap();
        match row.split {
            Some(Split::Train) => assert_eq!(source, "synthetic", "{}", row.id),
            _ => assert_eq!(source, "01.xml", "{}", row.id),
        }
        replay(row);
    }
    // The rows a share leaves on the dumps are the rows of share 0, row for row.
    let half = generate_android(&AndroidDataConfig {
        synthetic_share: 0.5,
        ..cfg(40, 5)
    })
    .unwrap();
    let none = generate_android(&cfg(40, 5)).unwrap();
    let kept: Vec<usize> = (0..half.len())
        .filter(|&i| half[i].extra["source"] != "synthetic")
        .collect();
    assert!(
        kept.len() > 5 && kept.len() < 35,
        "{} rows kept",
        kept.len()
    );
    for i in kept {
        assert_eq!(half[i], none[i]);
    }
}
