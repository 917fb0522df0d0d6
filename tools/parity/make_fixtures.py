#!/usr/bin/env python3
"""Writes the transformers parity fixtures for agentworld-model.

Builds a tiny random Qwen3.5-MoE with transformers (the independent reference), saves it in the
three checkpoint layouts the Rust loader must read, and records reference logits and greedy
continuations computed by transformers' own PyTorch path.

Run (CPU, no flash-linear-attention / causal-conv1d installed, so the torch fallbacks run):
    python tools/parity/make_fixtures.py [--out crates/model/tests/fixtures/parity]

Layouts written under OUT:
  per_expert/  config.json (qwen3_5_moe_text), model.safetensors: f32, per-expert keys
               (`mlp.experts.{e}.{gate,up,down}_proj.weight`), written by save_pretrained.
  fused/       config.json, model.safetensors: f16, fused `gate_up_proj`/`down_proj`.
  composite/   config.json (qwen3_5_moe with text_config), sharded bf16 safetensors with an index,
               keys under `model.language_model.`, plus `mtp.*` and `model.visual.*` tensors the
               loader must skip.
All weights are rounded so that f32, f16 and bf16 hold them exactly: every layout is the same
model, and the reference logits below apply to all three.

reference.json + reference.bin (little-endian f32) hold:
  prefill:  logits of a 160-token prompt (3 chunks of the chunked DeltaNet path), every position;
  decode:   8 single-token decode steps from the cache (recurrent path + conv state), feeding the
            greedy token each time, logits per step;
  batch:    two prompts of different lengths, left-padded into one batch, logits at real positions;
  greedy:   32-token greedy continuations of the single prompt (model.generate) and of both
            padded rows (manual cached loop with explicit positions).
The reference outputs are computed by transformers in float64 on those weights (see below).
"""
import argparse
import copy
import json
import os
import shutil

import numpy as np
import torch
from safetensors.torch import save_file
from transformers import Qwen3_5MoeConfig, Qwen3_5MoeForCausalLM, Qwen3_5MoeTextConfig

SEED = 0
VOCAB = 256


def tiny_config():
    return Qwen3_5MoeTextConfig(
        vocab_size=VOCAB, hidden_size=64, num_hidden_layers=4,  # layer_types -> [lin, lin, lin, full]
        num_attention_heads=4, num_key_value_heads=2, head_dim=32,  # rotary dim 8
        linear_num_key_heads=2, linear_num_value_heads=4,  # DeltaNet GQA ratio 2, like the 35B
        linear_key_head_dim=16, linear_value_head_dim=16, linear_conv_kernel_dim=4,
        num_experts=8, num_experts_per_tok=2, moe_intermediate_size=16,
        shared_expert_intermediate_size=32, max_position_embeddings=512, rms_norm_eps=1e-6,
        tie_word_embeddings=False, initializer_range=0.05,
        rope_parameters={"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25,
                         "mrope_section": [2, 1, 1], "mrope_interleaved": True},
    )


def representable(t):
    """Rounds to bf16 and zeroes values f16 would store as subnormals, so f32/f16/bf16 agree."""
    t = t.to(torch.bfloat16).to(torch.float32)
    t[t.abs() < 2.0 ** -14] = 0.0
    assert torch.equal(t.to(torch.float16).to(torch.float32), t)
    return t


def build_model():
    torch.manual_seed(SEED)
    m = Qwen3_5MoeForCausalLM(tiny_config()).float().eval()
    with torch.no_grad():
        for n, p in m.named_parameters():
            if n.endswith("norm.weight"):  # zero/one-initialised norms: make them non-trivial
                p.add_(0.2 * torch.randn_like(p))
            if n.endswith("mlp.gate.weight"):  # large router weights: no near-ties in top-k
                p.normal_(0, 1.0)
            if n.endswith("dt_bias"):
                p.add_(0.5 * torch.randn_like(p))
            p.copy_(representable(p))
    return m


def run(m, ids, mask=None, pos=None, cache=None):
    with torch.no_grad():
        out = m(input_ids=ids, attention_mask=mask, position_ids=pos, cache=cache, use_cache=cache is not None)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="crates/model/tests/fixtures/parity")
    args = ap.parse_args()
    out = args.out
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    m = build_model()
    m.config._attn_implementation = "eager"
    m.config._experts_implementation = "eager"

    # --- layouts -----------------------------------------------------------------------------
    m.save_pretrained(f"{out}/per_expert")  # save_original_format defaults to True
    # A copy: .half() would also round the model's float buffers (the RoPE inv_freq).
    copy.deepcopy(m).half().save_pretrained(f"{out}/fused", save_original_format=False)
    sd = {k: v.detach().clone() for k, v in m.state_dict().items()}
    from safetensors import safe_open
    with safe_open(f"{out}/fused/model.safetensors", "pt") as f:
        fused = {k: f.get_tensor(k).to(torch.float32) for k in f.keys()}
    assert any(k.endswith("experts.gate_up_proj") for k in fused), "fused layout expected"
    with safe_open(f"{out}/per_expert/model.safetensors", "pt") as f:
        assert any(".experts.0.gate_proj.weight" in k for k in f.keys()), "per-expert layout expected"
    comp = {}
    for k, v in fused.items():
        k2 = k.replace("model.", "model.language_model.", 1) if k.startswith("model.") else k
        comp[k2] = v.to(torch.bfloat16).contiguous()
    g = torch.Generator().manual_seed(1)
    comp["mtp.fc.weight"] = torch.randn(64, 128, generator=g).to(torch.bfloat16)
    comp["mtp.norm.weight"] = torch.zeros(64, dtype=torch.bfloat16)
    comp["model.visual.patch_embed.proj.weight"] = torch.randn(8, 3, 2, 2, generator=g).to(torch.bfloat16)
    os.makedirs(f"{out}/composite")
    names = sorted(comp)
    shards = [names[i::3] for i in range(3)]
    weight_map = {}
    for i, group in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{len(shards):05d}.safetensors"
        save_file({k: comp[k] for k in group}, f"{out}/composite/{fname}", metadata={"format": "pt"})
        weight_map.update({k: fname for k in group})
    with open(f"{out}/composite/model.safetensors.index.json", "w") as f:
        json.dump({"metadata": {"total_size": sum(v.numel() * 2 for v in comp.values())},
                   "weight_map": weight_map}, f, indent=2, sort_keys=True)
    text_cfg = json.load(open(f"{out}/fused/config.json"))
    composite_cfg = Qwen3_5MoeConfig(text_config=text_cfg).to_dict()
    composite_cfg["architectures"] = ["Qwen3_5MoeForConditionalGeneration"]
    with open(f"{out}/composite/config.json", "w") as f:
        json.dump(composite_cfg, f, indent=2, sort_keys=True)
    # Make sure transformers itself reads the fused and per-expert layouts back to the same model.
    for layout in ("per_expert", "fused"):
        m2 = Qwen3_5MoeForCausalLM.from_pretrained(f"{out}/{layout}", dtype=torch.float32).eval()
        for (n1, p1), (n2, p2) in zip(m.state_dict().items(), m2.state_dict().items()):
            assert n1 == n2 and torch.equal(p1, p2), (layout, n1)

    # --- reference outputs ---------------------------------------------------------------------
    # The reference runs transformers' own code in float64 on the same (f32-exact) weights, so it
    # is the reference implementation's math with little rounding (its DeltaNet kernel and RoPE
    # tables still run in float32 by design). transformers' plain float32 run deviates from it by
    # a few 1e-6 on this model (recorded as hf_f32_max_dev).
    m32 = copy.deepcopy(m)
    m = m.double()
    rng = np.random.default_rng(SEED)
    blob = []
    ref = {"vocab_size": VOCAB, "seed": SEED, "transformers": __import__("transformers").__version__,
           "torch": torch.__version__}

    def put(name, arr):
        arr = np.ascontiguousarray(arr, dtype="<f4")
        offset = sum(a.size for a in blob)
        blob.append(arr.reshape(-1))
        ref[name] = {"offset": int(offset), "shape": list(arr.shape)}

    prompt = rng.integers(0, VOCAB, size=160).tolist()
    ids = torch.tensor([prompt])
    full = run(m, ids).logits[0]
    put("prefill_logits", full.numpy())
    ref["hf_f32_max_dev"] = float((run(m32, ids).logits[0].double() - full).abs().max())
    ref["prompt"] = prompt

    # prefill, then 8 cached single-token decodes feeding the greedy token
    from transformers import DynamicCache
    cache = DynamicCache(config=m.config)
    logits = run(m, ids, cache=cache).logits[0, -1]
    steps, step_logits = [], []
    for _ in range(8):
        tok = int(logits.argmax())
        steps.append(tok)
        logits = run(m, torch.tensor([[tok]]), cache=cache).logits[0, -1]
        step_logits.append(logits.numpy())
    ref["decode_tokens"] = steps
    put("decode_logits", np.stack(step_logits))
    # cross-check: one forward over prompt + fed tokens equals the cached path
    again = run(m, torch.tensor([prompt + steps])).logits[0, -8:]
    assert torch.allclose(again, torch.tensor(np.stack(step_logits)), atol=1e-5), "cache mismatch in HF"

    gen = m.generate(ids, max_new_tokens=32, do_sample=False, attention_mask=torch.ones_like(ids))
    ref["greedy_single"] = gen[0, len(prompt):].tolist()

    # left-padded batch of two prompts
    a = rng.integers(0, VOCAB, size=70).tolist()
    b = rng.integers(0, VOCAB, size=100).tolist()
    pad_id = 0
    length = max(len(a), len(b))
    rows = [[pad_id] * (length - len(r)) + r for r in (a, b)]
    mask = torch.tensor([[0] * (length - len(r)) + [1] * len(r) for r in (a, b)])
    pos = (mask.cumsum(-1) - 1).clamp(min=0)
    batch_logits = run(m, torch.tensor(rows), mask=mask, pos=pos).logits
    ref["batch_prompts"] = [a, b]
    put("batch_logits_row0", batch_logits[0, length - len(a):].numpy())
    put("batch_logits_row1", batch_logits[1, length - len(b):].numpy())
    # each row alone must give the same logits (padding is neutral in HF too)
    for r, row in enumerate((a, b)):
        alone = run(m, torch.tensor([row])).logits[0]
        assert torch.allclose(alone, batch_logits[r, length - len(row):], atol=1e-5), "padding leaks in HF"

    # greedy continuation of the padded batch: manual cached loop with explicit positions
    cache = DynamicCache(config=m.config)
    cur_ids, cur_mask, cur_pos = torch.tensor(rows), mask.clone(), pos
    gen_rows = [[], []]
    min_gap = float("inf")
    for _ in range(32):
        lg = run(m, cur_ids, mask=cur_mask, pos=cur_pos, cache=cache).logits[:, -1]
        top2 = lg.topk(2, dim=-1).values
        min_gap = min(min_gap, float((top2[:, 0] - top2[:, 1]).min()))
        nxt = lg.argmax(-1)
        for r in range(2):
            gen_rows[r].append(int(nxt[r]))
        cur_pos = cur_mask.sum(-1, keepdim=True)
        cur_mask = torch.cat([cur_mask, torch.ones(2, 1, dtype=cur_mask.dtype)], dim=1)
        cur_ids = nxt[:, None]
    ref["greedy_batch"] = gen_rows
    ref["greedy_batch_min_top2_gap"] = min_gap
    for r, row in enumerate((a, b)):
        alone = m.generate(torch.tensor([row]), max_new_tokens=32, do_sample=False,
                           attention_mask=torch.ones(1, len(row), dtype=torch.long))
        assert alone[0, len(row):].tolist() == gen_rows[r], "batched greedy differs from single"

    ref["logit_std"] = float(full.std())
    np.concatenate(blob).tofile(f"{out}/reference.bin")
    with open(f"{out}/reference.json", "w") as f:
        json.dump(ref, f, indent=1)
    print(f"wrote {out}: logit std {ref['logit_std']:.3f}, min greedy top-2 gap {min_gap:.4f}, "
          f"transformers f32 vs f64 {ref['hf_f32_max_dev']:.2e}")


if __name__ == "__main__":
    main()
