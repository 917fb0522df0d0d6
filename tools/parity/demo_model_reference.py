#!/usr/bin/env python3
"""Records how transformers reads the shipped demo model, for tests/tests/demo_transformers.rs.

The demo model is written by our own exporter and tokenizer trainer; this checks it is a
standard Hugging Face folder by loading it with PreTrainedTokenizerFast / AutoModelForCausalLM and
recording, for a few held-out rows: the chat-template render, the prompt ids, the logits of the
last prompt position (top 20) and a 48-token greedy continuation. Rerun after retraining:

    python tools/parity/demo_model_reference.py [--model public/models/agentworld-demo]
"""
import argparse
import json

import torch
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="public/models/agentworld-demo")
    ap.add_argument("--out", default="tests/fixtures/demo_model_reference.json")
    args = ap.parse_args()
    # Read tokenizer.json as it is. AutoTokenizer in transformers 5 maps model_type qwen3_5_moe to
    # Qwen3_5Tokenizer whatever tokenizer_config.json says, and that class rebuilds the
    # pre-tokenizer with Qwen's single-digit split; this demo tokenizer groups up to three digits.
    tok = PreTrainedTokenizerFast.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float64).eval()
    model.config._attn_implementation = "eager"
    model.config._experts_implementation = "eager"
    rows = [json.loads(l) for l in open(f"{args.model}/heldout.jsonl")]
    picked = [next(r for r in rows if r["task"] == d) for d in ("terminal", "android")]
    cases = []
    for row in picked:
        t = row["turn_idx"]
        messages = [{"role": "system", "content": row["system_str"]}]
        for i in range(t - 1):
            messages += [{"role": "user", "content": row["prompt"][i]},
                         {"role": "assistant", "content": row["response"][i]}]
        messages.append({"role": "user", "content": row["prompt"][t - 1]})
        text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        ids = tok(text, add_special_tokens=False)["input_ids"]
        x = torch.tensor([ids])
        with torch.no_grad():
            logits = model(input_ids=x).logits[0, -1]
            gen = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=48, do_sample=False)
        top = logits.topk(20)
        cases.append({
            "row_id": row["id"], "prompt_text": text, "prompt_ids": ids,
            "top_ids": top.indices.tolist(), "top_logits": top.values.tolist(),
            "greedy": gen[0, len(ids):].tolist(),
        })
    import transformers
    json.dump({"transformers": transformers.__version__, "cases": cases}, open(args.out, "w"), indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
