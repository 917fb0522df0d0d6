//! The hand-written edge cases of `cases/qwen/example_strings.md`, read at test time.
//! In that file `\n` inside a code span stands for a newline.

#[path = "support/cases.rs"]
mod cases;

use agentworld_text::reasoning::{ReasoningEvent, ReasoningSplitter, split_reasoning};
use agentworld_text::tool_calls::{ToolCall, ToolSchemas, parse_tool_calls, parse_tool_calls_with};
use serde_json::json;

fn doc() -> String {
    cases::read_case("qwen/example_strings.md")
}

/// The section of the document starting at `heading` and ending at the next heading of the
/// same or a higher level.
fn section(doc: &str, heading: &str) -> String {
    let start = doc
        .find(heading)
        .unwrap_or_else(|| panic!("no section {heading:?}"));
    let level = heading.chars().take_while(|c| *c == '#').count();
    let rest = &doc[start + heading.len()..];
    let end = rest
        .lines()
        .scan(0, |off, line| {
            let at = *off;
            *off += line.len() + 1;
            Some((at, line))
        })
        .find(|(_, line)| {
            let hashes = line.chars().take_while(|c| *c == '#').count();
            hashes > 0 && hashes <= level
        })
        .map_or(rest.len(), |(at, _)| at);
    rest[..end].to_owned()
}

/// Fenced code blocks, in order.
fn code_blocks(text: &str) -> Vec<String> {
    text.split("```")
        .skip(1)
        .step_by(2)
        .map(|b| b.trim_start_matches('\n').trim_end_matches('\n').to_owned())
        .collect()
}

/// The first inline code span of a line, with `\n` turned into newlines.
fn code_span(line: &str) -> String {
    let start = line.find('`').unwrap() + 1;
    let end = start + line[start..].find('`').unwrap();
    line[start..end].replace("\\n", "\n")
}

/// Rows of the `<think>` table: case id → raw output.
fn think_rows() -> Vec<(String, String)> {
    section(&doc(), "## 2. `<think>` blocks")
        .lines()
        .filter(|l| l.starts_with("| T"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let id = cells[0]
                .trim_start_matches("| ")
                .split(' ')
                .next()
                .unwrap()
                .to_owned();
            (id, code_span(cells[1]))
        })
        .collect()
}

fn raw(id: &str) -> String {
    think_rows()
        .into_iter()
        .find(|(i, _)| i == id)
        .unwrap_or_else(|| panic!("no row {id}"))
        .1
}

fn split(id: &str, enabled: bool) -> (Option<String>, Option<String>) {
    split_reasoning(&raw(id), enabled)
}

fn s(x: &str) -> Option<String> {
    Some(x.to_owned())
}

#[test]
fn think_table_splits() {
    assert_eq!(think_rows().len(), 9, "T1..T9");
    assert_eq!(split("T1", true), (s("plan: click search"), s("Clicked.")));
    assert_eq!(
        split("T2", true),
        split("T1", true),
        "open tag in the prompt gives the same split"
    );
    assert_eq!(split("T3", false), (None, s("Clicked.")));
    assert_eq!(split("T4", true), (s("plan: click sea"), None));
    assert_eq!(split("T5", true), (None, s("Clicked.")));
    assert_eq!(
        split("T8", true),
        (s("ok"), s("Use the <think> tag like this."))
    );
    let (reasoning, content) = split("T9", true);
    assert!(reasoning.unwrap().starts_with("Here's a thinking process:"));
    assert_eq!(content, None);
}

#[test]
fn think_table_tool_calls() {
    let (reasoning, content) = split("T6", true);
    assert_eq!(reasoning, s("need search"));
    let parsed = parse_tool_calls(&content.unwrap());
    assert_eq!(
        parsed.calls,
        vec![ToolCall {
            name: "search".into(),
            arguments: json!({"q": "x"})
        }]
    );
    assert_eq!(parsed.content, "");

    // T7: a call quoted inside the thinking must not count.
    let (reasoning, content) = split("T7", true);
    assert!(reasoning.unwrap().contains("I will call <tool_call>"));
    let parsed = parse_tool_calls(&content.unwrap());
    assert_eq!(
        parsed.calls,
        vec![ToolCall {
            name: "a".into(),
            arguments: json!({})
        }]
    );
}

#[test]
fn streaming_fixtures_match_the_one_shot_split() {
    let sec = section(&doc(), "## 2. `<think>` blocks");
    let start = sec.find("Streaming split fixtures").unwrap();
    let chunk_lists: Vec<Vec<String>> = sec[start..]
        .lines()
        .filter(|l| l.starts_with("- `["))
        .map(|l| {
            let span = &l[l.find('`').unwrap() + 1..];
            serde_json::from_str(&span[..span.find('`').unwrap()]).unwrap()
        })
        .collect();
    assert_eq!(chunk_lists.len(), 4);
    let mut results = Vec::new();
    for chunks in &chunk_lists {
        let mut splitter = ReasoningSplitter::new(true);
        let mut events = Vec::new();
        for chunk in chunks {
            let got = splitter.push(chunk);
            // Reasoning never ends in a partial tag (content after </think> is verbatim).
            for e in &got {
                if let ReasoningEvent::Reasoning(t) = e {
                    for partial in ["</thi", "<thin", "</", "<"] {
                        assert!(!t.ends_with(partial), "leaked {t:?}");
                    }
                }
            }
            events.extend(got);
        }
        events.extend(splitter.finish());
        let (r, c) = ReasoningEvent::collect(events);
        let whole = chunks.concat();
        let norm = |x: &str| (!x.trim().is_empty()).then(|| x.trim().to_owned());
        assert_eq!(
            (norm(&r), norm(&c)),
            split_reasoning(&whole, true),
            "{chunks:?}"
        );
        results.push((norm(&r), norm(&c)));
    }
    assert_eq!(results[0], (s("weighing it"), s("Answer.")));
    assert_eq!(results[1], (s("...think"), s("<tool_call>...")));
    assert_eq!(results[2], (None, s("Final answer")));
    assert_eq!(results[3], (s("first"), s("mid<think>second</think>end")));
}

#[test]
fn hermes_json_examples() {
    let sec = section(&doc(), "### 1a.");
    let blocks = code_blocks(&sec);
    assert_eq!(blocks.len(), 2);
    let one = parse_tool_calls(&blocks[0]);
    assert_eq!(
        one.calls,
        vec![ToolCall {
            name: "click".into(),
            arguments: json!({"element_id": 42})
        }]
    );
    let two = parse_tool_calls(&blocks[1]);
    assert_eq!(
        two.calls,
        vec![
            ToolCall {
                name: "type_text".into(),
                arguments: json!({"element_id": 7, "text": "hello"})
            },
            ToolCall {
                name: "press_key".into(),
                arguments: json!({"key": "Enter"})
            },
        ]
    );

    // The first code span at or after the list item (some items wrap onto the next line).
    let variant = |prefix: &str| -> String {
        let at = sec.find(prefix).unwrap_or_else(|| panic!("{prefix}"));
        code_span(&sec[at..])
    };
    let wrap = |body: &str| format!("<tool_call>\n{body}\n</tool_call>");
    // Arguments as a JSON string.
    let p = parse_tool_calls(&wrap(&variant("- arguments given as a JSON *string*")));
    assert_eq!(
        p.calls,
        vec![ToolCall {
            name: "click".into(),
            arguments: json!({"element_id": 42})
        }]
    );
    // Glued objects ("parameters" appears in the same list, without its own span).
    let p = parse_tool_calls(&wrap(&variant("- two JSON objects glued")));
    assert_eq!(p.calls.len(), 2);
    assert!(
        p.calls
            .iter()
            .all(|c| c.name == "a" && c.arguments == json!({}))
    );
    // "parameters" instead of "arguments" (described in prose).
    let p = parse_tool_calls(&wrap(
        r#"{"name": "click", "parameters": {"element_id": 42}}"#,
    ));
    assert_eq!(p.calls[0].arguments, json!({"element_id": 42}));
    // A string value that itself contains </tool_call>.
    let p = parse_tool_calls(&wrap(
        r#"{"name": "note", "arguments": {"text": "ends with </tool_call> ok"}}"#,
    ));
    assert_eq!(
        p.calls[0].arguments,
        json!({"text": "ends with </tool_call> ok"})
    );
    // Unterminated at max_tokens.
    let cut = variant("- unterminated block at max_tokens");
    let p = parse_tool_calls(&cut);
    assert!(p.calls.is_empty());
    assert_eq!(p.invalid.len(), 1);
    assert_eq!(p.invalid[0].raw, cut);
}

#[test]
fn qwen3_coder_xml_examples() {
    let sec = section(&doc(), "### 1b.");
    let blocks = code_blocks(&sec);
    assert_eq!(blocks.len(), 3);
    let schemas = ToolSchemas::from_tools(&[
        json!({"type": "function", "function": {"name": "click", "parameters": {"type": "object",
            "properties": {"element_id": {"type": "integer"}}}}}),
        json!({"type": "function", "function": {"name": "set_location", "parameters": {"type": "object",
            "properties": {"location": {"type": "object"}}}}}),
        json!({"name": "write_file", "parameters": {"properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}),
    ]);
    let calls: Vec<ToolCall> = blocks
        .iter()
        .flat_map(|b| parse_tool_calls_with(b, &schemas).calls)
        .collect();
    assert_eq!(
        calls,
        vec![
            ToolCall {
                name: "click".into(),
                arguments: json!({"element_id": 42})
            },
            ToolCall {
                name: "write_file".into(),
                arguments: json!({"path": "/tmp/notes.txt", "content": "line one\n  indented line two"})
            },
            ToolCall {
                name: "set_location".into(),
                arguments: json!({"location": {"city": "Paris", "country": "France"}})
            },
        ]
    );
    // Without schemas every value is text.
    assert_eq!(
        parse_tool_calls(&blocks[0]).calls[0].arguments,
        json!({"element_id": "42"})
    );
}

#[test]
fn qwen3_coder_xml_edge_variants() {
    let schemas = ToolSchemas::from_tools(&[json!({"name": "f", "parameters": {"properties": {
        "day": {"type": "integer"}, "code": {"type": "string"}}}})]);
    let call = |body: &str| format!("<tool_call>\n<function=f>\n{body}</function>\n</tool_call>");
    // integer schema, date value: the call is kept, the value stays text.
    let p = parse_tool_calls_with(
        &call("<parameter=day>\n2026-01-15\n</parameter>\n"),
        &schemas,
    );
    assert_eq!(p.calls[0].arguments, json!({"day": "2026-01-15"}));
    // "123" for a string parameter stays a string.
    let p = parse_tool_calls_with(&call("<parameter=code>\n123\n</parameter>\n"), &schemas);
    assert_eq!(p.calls[0].arguments, json!({"code": "123"}));
    // Value containing the closing tags.
    let p = parse_tool_calls(&call(
        "<parameter=code>\nx </parameter> y </function> z\n</parameter>\n",
    ));
    assert_eq!(
        p.calls[0].arguments,
        json!({"code": "x </parameter> y </function> z"})
    );
    // Missing </parameter> before </function>.
    let p = parse_tool_calls(&call("<parameter=code>\nabc\n"));
    assert_eq!(p.calls[0].arguments, json!({"code": "abc"}));
    // Two calls separated by a blank line, names with dots and dashes.
    let two = "<tool_call>\n<function=browser.click-element>\n</function>\n</tool_call>\n\n<tool_call>\n<function=a>\n</function>\n</tool_call>";
    let p = parse_tool_calls(two);
    let names: Vec<&str> = p.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["browser.click-element", "a"]);
    assert_eq!(p.content, "");
}
