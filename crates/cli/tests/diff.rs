//! `agentworld diff` as a user runs it: two small dumps written to a temporary directory, as
//! text and `--json`; a terminal screen's line diff; a missing file.

mod common;
use common::{agentworld, text};

const BEFORE: &str = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>
<hierarchy rotation="0">
<node class="android.widget.FrameLayout" bounds="[0,0][1080,1920]">
<node class="android.widget.EditText" resource-id="app:id/search" text="" bounds="[0,0][1080,100]" />
<node class="android.widget.Switch" resource-id="app:id/wifi" text="Wi-Fi" checkable="true" bounds="[0,100][1080,200]" />
<node class="android.widget.LinearLayout" resource-id="app:id/list" bounds="[0,200][1080,800]">
<node class="android.widget.TextView" resource-id="app:id/item1" text="One" bounds="[0,200][1080,300]" />
<node class="android.widget.TextView" resource-id="app:id/item2" text="Two" bounds="[0,300][1080,400]" />
</node>
</node>
</hierarchy>"#;

/// BEFORE with the search typed into, Wi-Fi on, item2 first and an OK button added.
fn after() -> String {
    let item2 = r#"<node class="android.widget.TextView" resource-id="app:id/item2" text="Two" bounds="[0,300][1080,400]" />
"#;
    let ok = r#"<node class="android.widget.Button" resource-id="app:id/ok" text="OK" bounds="[0,800][1080,900]" />
"#;
    BEFORE
        .replace(
            r#"text="" bounds="[0,0]"#,
            r#"text="weather" bounds="[0,0]"#,
        )
        .replace(r#"checkable="true""#, r#"checkable="true" checked="true""#)
        .replace(item2, "")
        .replace(
            r#"<node class="android.widget.TextView" resource-id="app:id/item1""#,
            &format!("{item2}<node class=\"android.widget.TextView\" resource-id=\"app:id/item1\""),
        )
        .replace("</node>\n</node>", &format!("</node>\n{ok}</node>"))
}

/// Writes BEFORE and `after` to a temporary directory; returns it and the two paths.
fn files(after: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let b = dir.path().join("before.xml");
    let a = dir.path().join("after.xml");
    std::fs::write(&b, BEFORE).unwrap();
    std::fs::write(&a, after).unwrap();
    let s = |p: std::path::PathBuf| p.to_str().unwrap().to_string();
    (dir, s(b), s(a))
}

#[test]
fn prints_one_line_per_change() {
    let (_dir, before, after) = files(&after());
    let out = agentworld(&["diff", &before, &after]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stdout,
        concat!(
            "~ text   android.widget.EditText #app:id/search: \"\" -> \"weather\"\n",
            "~ attr   android.widget.Switch #app:id/wifi checked: (none) -> \"true\"\n",
            "> move   android.widget.TextView #app:id/item2 \"Two\" from #app:id/list[1] to #app:id/list[0]\n",
            "+ insert android.widget.Button #app:id/ok \"OK\" under #/0[3]\n",
        )
    );
    assert!(
        stderr.contains("format uiautomator: 6 node(s) before, 7 after; 4 change(s): 1 inserted, 0 removed, 1 moved, 1 text, 1 attribute, 0 document"),
        "{stderr}"
    );

    let out = agentworld(&["diff", &before, &before]);
    assert!(out.status.success());
    assert_eq!(text(&out.stdout), "");
    assert!(text(&out.stderr).contains("0 change(s)"));
}

#[test]
fn json_output() {
    let (_dir, before, after) = files(&after());
    let out = agentworld(&["diff", "--json", &before, &after]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    assert_eq!(v["format"], "uiautomator");
    assert_eq!(v["before"]["nodes"], 6);
    assert_eq!(v["after"]["file"], after.as_str());
    assert!(v["lines"].is_null(), "no line diff for a UI tree");
    let changes = v["changes"].as_array().unwrap();
    let kinds: Vec<&str> = changes
        .iter()
        .map(|c| c["change"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["text-changed", "attribute-changed", "moved", "inserted"]
    );
    assert_eq!(changes[0]["node"]["key"], "app:id/search");
    assert_eq!(changes[0]["node"]["key_kind"], "resource-id");
    assert_eq!(
        (&changes[0]["before"], &changes[0]["after"]),
        (&serde_json::json!(""), &serde_json::json!("weather"))
    );
    assert_eq!(changes[1]["name"], "checked");
    assert!(changes[1]["before"].is_null());
    assert_eq!(
        changes[2]["from"],
        serde_json::json!({"parent": "app:id/list", "index": 1})
    );
    assert_eq!(changes[2]["to"]["index"], 0);
    assert_eq!(changes[3]["size"], 1);
    assert_eq!(v["warnings"].as_array().unwrap().len(), 0);
}

#[test]
fn terminal_screens_get_a_line_diff() {
    let dir = tempfile::tempdir().unwrap();
    let (b, a) = (dir.path().join("s1.txt"), dir.path().join("s2.txt"));
    std::fs::write(&b, "user@box:~$ ls\nnotes.txt\nuser@box:~$ ").unwrap();
    std::fs::write(&a, "user@box:~$ ls\nnotes.txt\ntodo.txt\nuser@box:~$ ").unwrap();
    let (b, a) = (b.to_str().unwrap(), a.to_str().unwrap());
    let out = agentworld(&["diff", b, a]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "+    3 | todo.txt\n");
    assert!(
        text(&out.stderr).contains("lines: 0 removed, 1 added"),
        "{}",
        text(&out.stderr)
    );
    let out = agentworld(&["diff", "--json", b, a]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "terminal");
    assert_eq!(
        v["lines"],
        serde_json::json!([{"op": "added", "before_line": null, "after_line": 3, "text": "todo.txt"}])
    );
    assert!(!v["changes"].as_array().unwrap().is_empty());
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let (_dir, before, _) = files(BEFORE);
    let out = agentworld(&["diff", &before, "no/such/after.xml"]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("reading no/such/after.xml"), "{stderr}");
    assert_eq!(text(&out.stdout), "");

    let out = agentworld(&["diff", "--format", "yaml", &before, &before]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("valid formats are: auto"));
}

#[test]
fn unreadable_text_is_an_empty_state() {
    let (_dir, before, _) = files(BEFORE);
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.xml");
    std::fs::write(&empty, "").unwrap();
    let out = agentworld(&["diff", empty.to_str().unwrap(), &before]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("diffed as an empty state"), "{stderr}");
    assert_eq!(
        text(&out.stdout),
        "~ doc    rotation: (none) -> \"0\"\n+ insert android.widget.FrameLayout #/0 under top[0] (6 nodes)\n"
    );
}
