//! Tests of content renaming.

use super::*;

fn android_row(text: &str) -> Row {
    let state = format!(
        "FrameLayout [0,0][100,100]\n  EditText #field \"\" clickable [0,0][50,10]\n  TextView \"{text}\" [0,10][50,20]"
    );
    let after = state.replacen("\"\"", &format!("\"{text}\""), 1);
    let mut row = Row::from_turns(
        Domain::Android,
        "a-1",
        "You are an Android World Model.",
        vec![(
            format!(
                "### Turn 1\n**Action:**\n```json\n{{\"action\": \"type\", \"target\": 1, \"text\": \"{text}\"}}\n```\n\n**Current State:**\n{state}"
            ),
            format!("**Environment Observation:**\n{after}"),
        )],
    );
    row.thinking = Some(format!("Typing \"{text}\" fills the field."));
    row
}

/// One [`android_row`] per text, each from its own dump (`source` "dump-<i>").
fn rows_from_dumps(texts: &[&str]) -> Vec<Row> {
    texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut r = android_row(t);
            r.extra.insert("source".into(), format!("dump-{i}").into());
            r
        })
        .collect()
}

#[test]
fn generator_words_are_content_however_common() {
    // "Coralbay" (a built-in site name) and "Zorbex" are in every row of two sources; only
    // the one that is not a generator's word passes for a format word.
    let rows: Vec<Row> = (0..10)
        .map(|i| {
            let mut r = android_row("Coralbay Zorbex");
            r.extra
                .insert("source".into(), format!("dump-{}", i % 2).into());
            r
        })
        .collect();
    let kept = kept_words(&rows.iter().collect::<Vec<_>>(), 0.05);
    assert!(kept.contains("Zorbex"), "{kept:?}");
    assert!(!kept.contains("Coralbay"), "{kept:?}");
}

#[test]
fn content_words_are_renamed_consistently_and_structure_is_kept() {
    let mut rows = rows_from_dumps(&["Pizza", "Coffee", "Lemonade", "Espresso"]);
    let original = rows.clone();
    let n = rename_content(
        &mut rows,
        &RenameConfig {
            share: 1.0,
            keep_share: 0.5,
            seed: 3,
        },
    );
    assert_eq!(n, 4);
    for (old, new) in original.iter().zip(&rows) {
        let word = old.thinking.as_ref().unwrap().split('"').nth(1).unwrap();
        let renamed = new.thinking.as_ref().unwrap().split('"').nth(1).unwrap();
        assert_ne!(word, renamed);
        assert!(
            renamed.chars().next().unwrap().is_ascii_uppercase(),
            "{renamed}"
        );
        // The same word everywhere in the row, and nothing else changed.
        for (a, b) in texts(old).zip(texts(new)) {
            assert_eq!(a.replace(word, renamed), b);
        }
        // Structure (classes, flags, the action's keys and kind) is shared by every row.
        assert!(new.prompt[0].contains("\"action\": \"type\""));
        assert!(new.response[0].contains("EditText #field"));
    }
}

#[test]
fn escaped_line_breaks_survive_renaming() {
    // A two-line text is written `Pizza\nCoffee` in the compact form: the `n` of the
    // escape is not a letter of the word after it.
    let mut rows = rows_from_dumps(&[r"Pizza\nCoffee", r"Lemon\nSoda"]);
    let before = rows[0].response[0].clone();
    rename_content(
        &mut rows,
        &RenameConfig {
            share: 1.0,
            keep_share: 0.5,
            seed: 5,
        },
    );
    let after = &rows[0].response[0];
    assert!(
        !after.contains("Pizza") && !after.contains("Coffee"),
        "{after}"
    );
    assert_eq!(
        before.matches(r"\n").count(),
        after.matches(r"\n").count(),
        "{after}"
    );
    let line = after.lines().find(|l| l.contains("TextView")).expect(after);
    let second = line.split(r"\n").nth(1).unwrap();
    assert!(
        second.starts_with(|c: char| c.is_ascii_uppercase()),
        "{line}"
    );
}

#[test]
fn appended_text_is_renamed_as_its_parts() {
    let mut row = android_row("pizza");
    // The field held "pizza"; appending "cafe" makes "pizzacafe".
    row.response[0] = row.response[0].replace("\"pizza\" clickable", "\"pizzacafe\" clickable");
    row.prompt[0] = row.prompt[0].replace("\"text\": \"pizza\"", "\"text\": \"cafe\"");
    let kept: HashSet<String> = [
        "Turn",
        "Action",
        "json",
        "action",
        "type",
        "target",
        "text",
        "Current",
        "State",
        "FrameLayout",
        "EditText",
        "field",
        "clickable",
        "TextView",
        "Environment",
        "Observation",
        "Typing",
        "fills",
        "the",
    ]
    .iter()
    .map(|w| w.to_string())
    .collect();
    let new = rename_row(&row, &kept, &mut Rng::new(9)).unwrap();
    let piece = |text: &str, after: &str| {
        let i = text.find(after).unwrap() + after.len();
        text[i..].split('"').next().unwrap().to_string()
    };
    let pizza = piece(&new.prompt[0], "TextView \"");
    let cafe = piece(&new.prompt[0], "\"text\": \"");
    assert!(pizza != "pizza" && cafe != "cafe");
    assert_eq!(
        piece(&new.response[0], "#field \""),
        format!("{pizza}{cafe}")
    );
}

#[test]
fn terminal_rows_and_action_code_keep_their_words() {
    let mut rows = vec![Row::from_turns(
        Domain::Terminal,
        "t-1",
        "sys",
        vec![(
            "### Turn 1\n**Action:**\n```json\n[{\"keystrokes\": \"sort fruits.txt\\n\"}]\n```"
                .into(),
            "**Environment Observation:**\napple\nbanana".into(),
        )],
    )];
    let before = rows.clone();
    let config = RenameConfig {
        share: 1.0,
        keep_share: 1.0,
        seed: 1,
    };
    assert_eq!(rename_content(&mut rows, &config), 0);
    assert_eq!(rows, before);
    let mut kept = HashSet::new();
    action_keywords(
        "\"pyautogui.moveTo(10, 20); pyautogui.write('hello world')\"",
        &mut kept,
    );
    assert!(kept.contains("moveTo") && kept.contains("pyautogui") && kept.contains("write"));
    assert!(!kept.contains("hello"));
    action_keywords(
        "{\"action\": \"long_press\", \"text\": \"Mango\"}",
        &mut kept,
    );
    assert!(kept.contains("long") && kept.contains("press") && !kept.contains("Mango"));
}

#[test]
fn made_up_words_follow_the_case_of_the_original() {
    let mut rng = Rng::new(5);
    assert!(
        made_up_word(&mut rng, 5, "OK")
            .chars()
            .all(|c| c.is_ascii_uppercase())
    );
    let w = made_up_word(&mut rng, 7, "Settings");
    assert!(w.len() >= 7 && w.chars().next().unwrap().is_ascii_uppercase());
    assert!(
        made_up_word(&mut rng, 4, "wifi")
            .chars()
            .all(|c| c.is_ascii_lowercase())
    );
}
