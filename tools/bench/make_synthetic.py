#!/usr/bin/env python3
"""Writes the mid-size synthetic Qwen3.5-MoE checkpoint that `agentworld bench` measures beside
the demo model: the real architecture (Gated DeltaNet + gated attention every fourth layer,
sparse MoE with a shared expert) at about 1.2B parameters, 160M active per token, with
transformers' random initialisation (seed 0), saved in bf16 by save_pretrained.

    python tools/bench/make_synthetic.py [--out ~/.cache/agentworld-bench/mid]

Shape: 12 layers, hidden_size 1024, 64 experts top-4 (moe_intermediate_size 384) plus a shared
expert of 512, 8 attention heads of 128 (2 KV heads), DeltaNet 4 key / 8 value heads of 128,
vocab 32000. About 2.2 GB on disk; our engine and transformers each hold it in float32 (4.4 GB).
Weights are random, so the tokens it generates mean nothing: it is for speed and memory only.
"""
import argparse
import os

import torch
from transformers import Qwen3_5MoeForCausalLM, Qwen3_5MoeTextConfig


def config():
    return Qwen3_5MoeTextConfig(
        vocab_size=32000, hidden_size=1024, num_hidden_layers=12,
        num_attention_heads=8, num_key_value_heads=2, head_dim=128,
        linear_num_key_heads=4, linear_num_value_heads=8,
        linear_key_head_dim=128, linear_value_head_dim=128, linear_conv_kernel_dim=4,
        num_experts=64, num_experts_per_tok=4, moe_intermediate_size=384,
        shared_expert_intermediate_size=512, max_position_embeddings=4096,
        tie_word_embeddings=False, rms_norm_eps=1e-6,
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.expanduser("~/.cache/agentworld-bench/mid"))
    args = ap.parse_args()
    torch.manual_seed(0)
    model = Qwen3_5MoeForCausalLM(config()).eval()
    total = sum(p.numel() for p in model.parameters())
    print(f"parameters: {total / 1e9:.2f}B")
    model.to(torch.bfloat16).save_pretrained(args.out, safe_serialization=True)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
