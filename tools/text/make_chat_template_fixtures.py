#!/usr/bin/env python3
"""Reference renders of chat templates, for the byte-for-byte parity test of agentworld-text.

Renders a fixed list of conversations with transformers' `apply_chat_template(...,
tokenize=False)` through each template under test and writes the conversations and the
expected strings (or the template's error) to crates/text/tests/fixtures/chat_templates.json.
The Rust test (crates/text/tests/chat_template_parity.rs) renders the same conversations
with MiniJinja and compares.

Usage (from the repository root, with transformers 5.x and jinja2 installed):

    python tools/text/make_chat_template_fixtures.py [--cases ../shared/cases]

Only the files under the cases folder and crates/text/templates/ are read; nothing is
downloaded.
"""

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "crates/text/tests/fixtures/chat_templates.json"

# name -> (where the template lives, path). "cases" paths are relative to the shared cases
# folder, "repo" paths to the repository root. A tokenizer_config.json path means "its
# chat_template field".
TEMPLATES = {
    "qwen3_0_6b": ("cases", "qwen/Qwen-Qwen3-0.6B.chat_template.jinja"),
    "qwen3_coder": ("cases", "qwen/Qwen3-Coder.chat_template.jinja"),
    "qwen3_tokenizer_config": ("cases", "qwen/qwen3-tokenizer/tokenizer_config.json"),
    "agentworld": ("repo", "crates/text/templates/agentworld.jinja"),
}

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "click",
            "description": "Click an element of the page.\n",
            "parameters": {
                "type": "object",
                "properties": {
                    "element_id": {"type": "integer", "description": "The element's bid."},
                    "button": {"type": ["string", "null"], "enum": ["left", "right"], "default": "left"},
                },
                "required": ["element_id"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "type_text",
            "description": "  Type text into a field — «quoted», 中文, emoji 😀  ",
            "parameters": {
                "type": "object",
                "properties": {
                    "element_id": {"type": "integer"},
                    "text": {"type": "string", "description": "What to type", "maxLength": 200},
                    "delay": {"type": "number", "minimum": 0.0, "maximum": 1e16, "multipleOf": 0.05},
                    "clear": {"type": "boolean", "default": False, "examples": [True, None]},
                },
                "required": ["element_id", "text"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    },
]

SYSTEM = "You are a Terminal World Model. Predict the next terminal screen."


def tc(name, arguments, call_id=None):
    call = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id:
        call["id"] = call_id
    return call


# Each case: name, messages, optional tools, add_generation_prompt, template kwargs.
CASES = [
    {
        "name": "system_user_generation_prompt",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "### Turn 1\n**Action:**\n```json\n[{\"keystrokes\": \"ls -la\\n\", \"duration\": 0.1}]\n```"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "system_user_no_generation_prompt",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "pwd"},
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "user_only_thinking_true",
        "messages": [{"role": "user", "content": "What is 2+2?"}],
        "add_generation_prompt": True,
        "kwargs": {"enable_thinking": True},
    },
    {
        "name": "user_only_thinking_false",
        "messages": [{"role": "user", "content": "What is 2+2?"}],
        "add_generation_prompt": True,
        "kwargs": {"enable_thinking": False},
    },
    {
        "name": "multi_turn_with_reasoning",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "### Turn 1\n**Action:** cd /tmp"},
            {"role": "assistant", "content": "<predicted_observation>\nuser@host:/tmp$\n</predicted_observation>",
             "reasoning_content": "cd prints nothing; the prompt changes."},
            {"role": "user", "content": "### Turn 2\n**Action:** ls"},
            {"role": "assistant", "content": "<predicted_observation>\nnotes.txt\n</predicted_observation>",
             "reasoning_content": "\nThe folder holds one file.\n"},
            {"role": "user", "content": "### Turn 3\n**Action:** cat notes.txt"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "final_assistant_with_reasoning",
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "\n\nHello!", "reasoning_content": "Greet back."},
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "final_assistant_thinking_false_kwarg",
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello!"},
        ],
        "add_generation_prompt": False,
        "kwargs": {"enable_thinking": False},
    },
    {
        "name": "think_tags_inside_content",
        "messages": [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "<think>\nold plan\n</think>\n\nold answer"},
            {"role": "user", "content": "second"},
            {"role": "assistant", "content": "<think>\nnew plan\n</think>\n\nnew answer"},
        ],
        "add_generation_prompt": False,
    },
    {
        "name": "tool_calls_object_arguments",
        "tools": TOOLS,
        "messages": [
            {"role": "system", "content": "You operate a browser."},
            {"role": "user", "content": "Search for rust and submit."},
            {"role": "assistant", "content": "I will type, then press Enter.",
             "reasoning_content": "Two steps: type then submit.",
             "tool_calls": [
                 tc("type_text", {"element_id": 7, "text": "rust \"lang\" — 中文", "clear": True, "delay": 0.5}, "c1"),
                 tc("click", {"element_id": 8, "options": {"double": False, "modifiers": ["Shift", None]}, "ratio": 1.0}, "c2"),
             ]},
            {"role": "tool", "tool_call_id": "c1", "content": "typed"},
            {"role": "tool", "tool_call_id": "c2", "content": "clicked\n"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "tool_calls_then_answer_then_new_query",
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "Click 42."},
            {"role": "assistant", "content": "", "reasoning_content": "Just click.",
             "tool_calls": [tc("click", {"element_id": 42})]},
            {"role": "tool", "content": "{\"ok\": true}"},
            {"role": "assistant", "content": "Done.", "reasoning_content": "It worked."},
            {"role": "user", "content": "Thanks. Now click 43."},
        ],
        "add_generation_prompt": True,
        "kwargs": {"enable_thinking": True},
    },
    {
        "name": "tool_calls_string_arguments",
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "Click 42."},
            {"role": "assistant", "content": "", "tool_calls": [tc("click", "{\"element_id\": 42}")]},
            {"role": "tool", "content": "ok"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "assistant_content_null_with_tool_calls",
        "messages": [
            {"role": "user", "content": "Click 42."},
            {"role": "assistant", "content": None, "tool_calls": [tc("click", {"element_id": 42})]},
            {"role": "tool", "content": "ok"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "tools_without_system_message",
        "tools": TOOLS[:1],
        "messages": [{"role": "user", "content": "Press the button."}],
        "add_generation_prompt": True,
    },
    {
        "name": "tool_response_wrapped_in_user_turn",
        "messages": [
            {"role": "user", "content": "List files."},
            {"role": "assistant", "content": "", "reasoning_content": "use ls",
             "tool_calls": [tc("run", {"cmd": "ls"})]},
            {"role": "user", "content": "<tool_response>\na.txt\n</tool_response>"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "special_text_and_whitespace_in_content",
        "messages": [
            {"role": "system", "content": "  Keep <|im_end|> literal.  \n"},
            {"role": "user", "content": "\n  Text with <|im_start|>user and </think> inside — 你好 😀\t\n"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "content_as_list_of_parts",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Describe this."}, {"type": "image_url", "image_url": {"url": "x.png"}}]},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "only_tool_messages",
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "tool", "content": "orphan result"},
        ],
        "add_generation_prompt": True,
    },
    {
        "name": "system_message_not_first",
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "system", "content": "Late system."},
            {"role": "user", "content": "Again"},
        ],
        "add_generation_prompt": True,
    },
]


def load_template(where, rel, cases_dir):
    path = (cases_dir if where == "cases" else REPO) / rel
    if path.name == "tokenizer_config.json":
        return json.loads(path.read_text(encoding="utf-8"))["chat_template"]
    return path.read_text(encoding="utf-8")


def render(tokenizer, template, case):
    try:
        text = tokenizer.apply_chat_template(
            case["messages"],
            tools=case.get("tools"),
            chat_template=template,
            add_generation_prompt=case["add_generation_prompt"],
            tokenize=False,
            **case.get("kwargs", {}),
        )
        return {"text": text}
    except Exception as err:  # the template's own exception, or a Jinja type error
        import jinja2

        raised = type(err) is jinja2.exceptions.TemplateError
        return {"error": str(err), "raised": raised}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=Path, default=REPO.parent / "shared" / "cases")
    args = parser.parse_args()

    import transformers
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(args.cases / "qwen" / "qwen3-tokenizer"))
    templates = {name: load_template(where, rel, args.cases) for name, (where, rel) in TEMPLATES.items()}

    cases = []
    for case in CASES:
        expected = {name: render(tokenizer, template, case) for name, template in templates.items()}
        cases.append({**case, "expected": expected})

    fixture = {
        "generator": "tools/text/make_chat_template_fixtures.py",
        "transformers_version": transformers.__version__,
        "tokenizer": "qwen/qwen3-tokenizer",
        "templates": {name: {"root": where, "path": rel} for name, (where, rel) in TEMPLATES.items()},
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    errors = sum("error" in e for c in cases for e in c["expected"].values())
    print(f"wrote {OUT.relative_to(REPO)}: {len(cases)} cases x {len(templates)} templates, {errors} errors", file=sys.stderr)


if __name__ == "__main__":
    main()
