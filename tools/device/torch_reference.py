#!/usr/bin/env python3
"""PyTorch's own run of a parity fixture, in the format `agentworld parity --reference` reads.

Loads MODEL (a transformers checkpoint folder, e.g. the committed parity fixture) in DTYPE on
DEVICE with the eager attention and experts paths, runs the prompt of PROMPT_FROM (a
reference.json), and writes OUT (json) and OUT with .bin (little-endian f32): `prompt`,
`prefill_logits` ({offset, shape}) and `greedy_single` (model.generate, 32 tokens).

    python3 tools/device/torch_reference.py --model crates/model/tests/fixtures/parity/per_expert \
        --dtype bf16 --device cuda --out /tmp/ref_bf16.json

Used by tools/device/check.sh (on the GPU machine: torch 2.11+, transformers 5.17+).
"""
import argparse
import json

import numpy as np
import torch
from transformers import AutoModelForCausalLM


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--dtype", choices=["f32", "bf16", "f16"], default="f32")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--prompt-from", default="crates/model/tests/fixtures/parity/reference.json")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    prompt = json.load(open(args.prompt_from))["prompt"]
    m = AutoModelForCausalLM.from_pretrained(args.model, dtype=dtype).to(args.device).eval()
    m.config._attn_implementation = "eager"
    m.config._experts_implementation = "eager"
    ids = torch.tensor([prompt], device=args.device)
    with torch.no_grad():
        logits = m(input_ids=ids).logits[0].float().cpu().numpy()
        gen = m.generate(ids, max_new_tokens=32, do_sample=False, attention_mask=torch.ones_like(ids))
    out = {
        "prompt": prompt,
        "prefill_logits": {"offset": 0, "shape": list(logits.shape)},
        "greedy_single": gen[0, len(prompt):].tolist(),
        "torch": torch.__version__,
        "transformers": __import__("transformers").__version__,
        "device": args.device,
        "dtype": args.dtype,
    }
    np.ascontiguousarray(logits, dtype="<f4").tofile(args.out[: -len(".json")] + ".bin"
                                                      if args.out.endswith(".json") else args.out + ".bin")
    with open(args.out, "w") as f:
        json.dump(out, f)
    print(f"wrote {args.out}: torch {torch.__version__} {args.device} {args.dtype}")


if __name__ == "__main__":
    main()
