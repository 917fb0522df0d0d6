#!/usr/bin/env python3
"""Reference encodings of the real Qwen3 tokenizer, for agentworld-text's tokenizer tests.

Encodes a fixed list of strings with transformers' tokenizer loaded from the shared cases
folder (qwen/qwen3-tokenizer: tokenizer.json + tokenizer_config.json), and writes the ids
and the decodes (with and without skipping special tokens) to
crates/text/tests/fixtures/qwen3_tokenizer.json. The Rust test
(crates/text/tests/tokenizer_qwen3.rs) loads the same tokenizer.json with the `tokenizers`
crate (pure-Rust fancy-regex backend) and compares.

Usage (from the repository root, transformers 5.x installed):

    python tools/text/make_tokenizer_fixtures.py [--cases ../shared/cases]
"""

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "crates/text/tests/fixtures/qwen3_tokenizer.json"

TEXTS = [
    "Hello world",
    "  leading spaces, trailing spaces   ",
    "I'm sure they've gone; we'll see. It's DON'T shouting.",
    "numbers 1234567 and 3.14159 and -42",
    "line one\nline two\r\nline three\n\n\nend",
    "tabs\tand\u00a0non-breaking\u2003spaces",
    "中文文本，混合 English 和 emoji 😀👍🏽 and ñ, é (NFC: e\u0301)",
    "def f(x):\n    return {\"a\": [1, 2]}  # comment\n",
    "<|im_start|>user\nls -la<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
    "<tool_call>\n<function=click>\n<parameter=element_id>\n42\n</parameter>\n</function>\n</tool_call>",
    "<predicted_observation>\nuser@host:~$ ls\nnotes.txt\n</predicted_observation><|endoftext|>",
    "literal <|im_start without close and <think",
    "",
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=Path, default=REPO.parent / "shared" / "cases")
    args = parser.parse_args()

    import transformers
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(args.cases / "qwen" / "qwen3-tokenizer"))
    cases = []
    for text in TEXTS:
        ids = tok.encode(text, add_special_tokens=False)
        cases.append({
            "text": text,
            "ids": ids,
            "decoded": tok.decode(ids, skip_special_tokens=False),
            "decoded_skip_special": tok.decode(ids, skip_special_tokens=True),
        })
    special = {t: tok.convert_tokens_to_ids(t) for t in ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"]}
    fixture = {
        "generator": "tools/text/make_tokenizer_fixtures.py",
        "transformers_version": transformers.__version__,
        "tokenizer": "qwen/qwen3-tokenizer/tokenizer.json",
        "vocab_size_with_added": len(tok),
        "token_ids": special,
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}: {len(cases)} texts", file=sys.stderr)


if __name__ == "__main__":
    main()
