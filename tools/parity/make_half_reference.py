#!/usr/bin/env python3
"""Writes transformers' own half-precision outputs on the committed parity fixture, for the
bf16/f16 parity tests of agentworld-model.

transformers loads `crates/model/tests/fixtures/parity/per_expert` (the same weights as every
layout, exact in bf16 and f16) in torch.bfloat16 and in torch.float16 and runs, on the CPU,
with the eager attention and experts paths: the 160-token prompt's prefill logits, and its
32-token greedy continuation (model.generate). In half precision transformers rounds every
activation to the dtype, so these outputs differ from the float64 reference (reference.json)
by the rounding of half-precision arithmetic; the maximum of that difference is recorded
beside them.

Run (the torch + transformers venv the other fixture scripts use):
    python tools/parity/make_half_reference.py [--fixtures crates/model/tests/fixtures/parity]
Writes FIXTURES/reference_half.json and reference_half.bin (little-endian f32 logits).
"""
import argparse
import json

import numpy as np
import torch
from transformers import AutoModelForCausalLM


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default="crates/model/tests/fixtures/parity")
    args = ap.parse_args()
    ref = json.load(open(f"{args.fixtures}/reference.json"))
    full = np.fromfile(f"{args.fixtures}/reference.bin", dtype="<f4")
    e = ref["prefill_logits"]
    f64_prefill = full[e["offset"]:e["offset"] + e["shape"][0] * e["shape"][1]].reshape(e["shape"])
    prompt = torch.tensor([ref["prompt"]])
    out = {"transformers": __import__("transformers").__version__, "torch": torch.__version__}
    blob = []
    for name, dtype in (("bf16", torch.bfloat16), ("f16", torch.float16)):
        m = AutoModelForCausalLM.from_pretrained(f"{args.fixtures}/per_expert", dtype=dtype).eval()
        m.config._attn_implementation = "eager"
        m.config._experts_implementation = "eager"
        with torch.no_grad():
            logits = m(input_ids=prompt).logits[0].float().numpy()
            gen = m.generate(prompt, max_new_tokens=32, do_sample=False,
                             attention_mask=torch.ones_like(prompt))
        offset = sum(a.size for a in blob)
        blob.append(np.ascontiguousarray(logits, dtype="<f4").reshape(-1))
        out[name] = {
            "prefill_logits": {"offset": int(offset), "shape": list(logits.shape)},
            "greedy_single": gen[0, prompt.shape[1]:].tolist(),
            "max_dev_from_f64": float(np.abs(logits - f64_prefill).max()),
            "greedy_equals_f64": gen[0, prompt.shape[1]:].tolist() == ref["greedy_single"],
        }
        print(f"{name}: prefill max |transformers {name} - f64| = {out[name]['max_dev_from_f64']:.3e}, "
              f"greedy equals f64: {out[name]['greedy_equals_f64']}")
    np.concatenate(blob).tofile(f"{args.fixtures}/reference_half.bin")
    with open(f"{args.fixtures}/reference_half.json", "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
