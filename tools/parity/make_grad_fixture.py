#!/usr/bin/env python3
"""Gradient reference for training parity: transformers computes the mean next-token
cross-entropy of the parity fixture model (fused layout) on a batch of two 150-token sequences (three
DeltaNet chunks each) in float64, backpropagates, and records per parameter the sum and sum of squares of its
gradient (both independent of layout, so our transposed burn tensors compare directly).

    python tools/parity/make_grad_fixture.py   # after make_fixtures.py
"""
import json

import numpy as np
import torch
from transformers import Qwen3_5MoeForCausalLM

OUT = "crates/train/tests/fixtures/grad_reference.json"

m = Qwen3_5MoeForCausalLM.from_pretrained("crates/model/tests/fixtures/parity/fused", dtype=torch.float64)
m.config._attn_implementation = "eager"
m.config._experts_implementation = "eager"
m.train()
rng = np.random.default_rng(3)
ids = torch.tensor([rng.integers(0, 256, size=151).tolist() for _ in range(2)])
inp, tgt = ids[:, :-1], ids[:, 1:]
logits = m(input_ids=inp).logits
loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1))
loss.backward()
grads = {}
for name, p in m.named_parameters():
    g = p.grad
    grads[name] = {"shape": list(p.shape), "sum": float(g.sum()), "sumsq": float((g * g).sum())}
json.dump({"ids": ids.tolist(), "loss": float(loss), "grads": grads}, open(OUT, "w"), indent=1)
print(f"wrote {OUT}: loss {float(loss):.6f}, {len(grads)} tensors")
