//! `agentworld parse` as a user runs it: examples, a real case file, cut and unreadable input.

mod common;
use common::{agentworld, repo, text};

#[test]
fn detects_and_prints_an_indented_tree() {
    let out = agentworld(&["parse", "examples/web/browsergym_axtree.txt"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.starts_with("RootWebArea #/0 \"Iframe Example\" focused=true\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n      textbox #a5 \"Level 2.1 Text Field 1\" [8,78][181,99] frame=a"),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 15);
    assert!(
        stderr.contains("format axtree (detected: axtree 0.90"),
        "{stderr}"
    );
    assert!(
        stderr.contains("15 nodes, depth 4, 0 warning(s)"),
        "{stderr}"
    );
}

#[test]
fn json_output_of_a_real_case_file() {
    let out = agentworld(&[
        "parse",
        "../shared/cases/os/atspi2_fixture_test-component.xml",
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON");
    assert_eq!(v["format"], "atspi");
    assert_eq!(v["detected"][0]["format"], "atspi");
    let nodes = v["tree"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 5);
    assert_eq!(nodes[2]["name"], "obj3");
    assert_eq!(nodes[2]["role"], "push button");
    assert_eq!(
        nodes[2]["bounds"],
        serde_json::json!({"left": 250, "top": 250, "right": 600, "bottom": 450})
    );
    assert_eq!(nodes[3]["parent"], 2);
    assert_eq!(
        nodes[3]["key"],
        serde_json::json!({"kind": "path", "value": "/0/1/0"})
    );
    assert_eq!(v["warnings"].as_array().unwrap().len(), 0);
}

#[test]
fn a_cut_file_is_read_with_warnings_and_a_forced_format() {
    let dir = tempfile::tempdir().unwrap();
    let full = std::fs::read_to_string(repo().join("examples/os/osworld_a11y.xml")).unwrap();
    let cut = &full[..full.find("<push-button name=\"Save\"").unwrap() + 30];
    let path = dir.path().join("cut.xml");
    std::fs::write(&path, cut).unwrap();
    let out = agentworld(&["parse", "--format", "osworld-xml", path.to_str().unwrap()]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("push-button #/0/1/0/0 \"Open\" text=\"Open\" [78,35][158,69]"),
        "{stdout}"
    );
    assert!(stderr.contains("format osworld-xml (as asked)"), "{stderr}");
    assert!(stderr.contains("warning: line 12"), "{stderr}");
    assert!(stderr.contains("not closed"), "{stderr}");
}

#[test]
fn nothing_readable_is_an_error() {
    let out = agentworld(&[
        "parse",
        "--format",
        "droidbot",
        "examples/terminal/screen1.txt",
    ]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("droidbot: nothing could be read"),
        "{stderr}"
    );

    let out = agentworld(&["parse", "--format", "yaml", "examples/terminal/screen1.txt"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("valid formats are: auto, uiautomator, appium"));

    let out = agentworld(&["parse", "no/such/file.xml"]);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("reading no/such/file.xml"));

    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "\n  \n").unwrap();
    let out = agentworld(&["parse", empty.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("empty.txt is empty"),
        "{}",
        text(&out.stderr)
    );
}
