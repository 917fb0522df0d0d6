#!/usr/bin/env python3
"""The PyTorch side of `agentworld bench`: the same figures for transformers on the same
checkpoint, prompt ids and thread count.

`agentworld bench` runs this script itself (side by side, in one invocation) and reads the JSON
object it prints on its last line. Run by hand:

    python tools/bench/torch_bench.py --model public/models/agentworld-demo --plan plan.json
    python tools/bench/torch_bench.py --synthetic tools/bench/qwen3_5_35b_a3b.json --plan plan.json

where plan.json is {"prompt": [ids], "batch_prompts": [[ids], ...], "decode_tokens": N,
"threads": N, "repeats": N, "device": "cpu"|"cuda", "dtype": "f32"|"bf16"}.

Figures (all with transformers' defaults for attention and experts, the plan's dtype, greedy
decoding through the model's own cache, the sampled ids read back to the host every step):
- load_secs, peak_rss_delta_bytes (VmHWM after load minus RSS before; VmHWM is reset first
  through /proc/self/clear_refs), weight_bytes (parameters x 4);
- prefill_tok_s: prompt tokens / median time of one prefill (logits of the last position and
  its argmax included); ttft_secs: that median time;
- decode_tok_s: one stream, tokens / time of decode_tokens steps after the prefill;
- batch_decode_tok_s: all batch_prompts together, rows x steps / time of the steps.
"""
import argparse
import json
import os
import statistics
import sys
import time


def rss_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def sync(device):
    if device.type == "cuda":
        import torch
        torch.cuda.synchronize()


def main():
    ap = argparse.ArgumentParser()
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="checkpoint directory")
    src.add_argument("--synthetic", help="config.json to build with random weights")
    ap.add_argument("--plan", required=True)
    args = ap.parse_args()
    plan = json.load(open(args.plan))
    import torch

    torch.set_num_threads(int(plan["threads"]))
    from transformers import AutoConfig, AutoModelForCausalLM

    device = torch.device(plan.get("device", "cpu"))
    dtype = {"f32": torch.float32, "bf16": torch.bfloat16}[plan.get("dtype", "f32")]
    rss_before = rss_bytes("VmRSS")
    peak_reset = reset_peak()
    t0 = time.perf_counter()
    if args.model:
        model = AutoModelForCausalLM.from_pretrained(args.model, dtype=dtype).to(device).eval()
    else:
        config = AutoConfig.from_pretrained(args.synthetic)
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(config, dtype=dtype).eval()
    sync(device)
    load_secs = time.perf_counter() - t0
    peak = rss_bytes("VmHWM")
    params = sum(p.numel() for p in model.parameters())

    def prefill(ids):
        out = model(input_ids=ids, use_cache=True)
        return out.past_key_values, out.logits[:, -1].argmax(-1)

    def decode(ids, steps):
        cache, nxt = prefill(ids)
        sync(device)
        t = time.perf_counter()
        for _ in range(steps):
            out = model(input_ids=nxt[:, None], past_key_values=cache, use_cache=True)
            # The sampled ids come back to the host each step, as in our engine.
            cache, nxt = out.past_key_values, out.logits[:, -1].argmax(-1)
            nxt.tolist()
        return time.perf_counter() - t

    prompt = torch.tensor([plan["prompt"]], device=device)
    batch = torch.tensor(plan["batch_prompts"], device=device)
    steps = int(plan["decode_tokens"])
    repeats = int(plan["repeats"])
    with torch.inference_mode():
        prefill(prompt[:, :16])  # warm-up
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            prefill(prompt)[1].tolist()
            times.append(time.perf_counter() - t)
        ttft = statistics.median(times)
        decode_secs = statistics.median(decode(prompt, steps) for _ in range(repeats))
        batch_secs = statistics.median(decode(batch, steps) for _ in range(repeats))
    result = {
        "engine": f"transformers {__import__('transformers').__version__} / torch {torch.__version__}",
        "attention": model.config._attn_implementation,
        "experts": getattr(model.config, "_experts_implementation", None),
        "threads": torch.get_num_threads(),
        "load_secs": load_secs,
        "peak_rss_delta_bytes": (peak - rss_before) if peak_reset and device.type == "cpu" else None,
        "weight_bytes": params * (4 if dtype == torch.float32 else 2),
        "prefill_tok_s": prompt.shape[1] / ttft,
        "ttft_secs": ttft,
        "decode_tok_s": steps / decode_secs,
        "batch_decode_tok_s": batch.shape[0] * steps / batch_secs,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
