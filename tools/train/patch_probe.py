#!/usr/bin/env python3
"""The patch-target probe of issue 34 (docs/demo-model-2026-12-07-line-markers.md, section 2).

  patch_probe.py convert IN.jsonl OUT.jsonl
      Rewrites each one-turn row's target observation to the lines of the next state that
      differ from the current one (difflib opcodes on lines: replaced and inserted lines as
      they become, removed ones as `- LINE`; nothing when nothing changes).
  patch_probe.py score ROWS.jsonl PREDICTIONS.jsonl
      Scores `agentworld eval fidelity --predictions` output on converted rows: patches exact
      and changed lines right (lines compared trimmed), and for OS also without the position
      and size columns.

Standard library only; a probe, not part of the recipe (the world layer does not apply
patches yet).
"""
import difflib
import json
import sys

OBS = "**Environment Observation:**\n"


def current_state(row):
    prompt = row["current_prompt"]
    i = prompt.find("**Current State:**\n")
    return prompt[i + len("**Current State:**\n"):] if i >= 0 else None


def patch(row):
    cur = current_state(row).rstrip("\n").split("\n")
    nxt = row["response"][-1][len(OBS):].rstrip("\n").split("\n")
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=cur, b=nxt, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            out.extend(nxt[j1:j2])
        if tag == "delete":
            out.extend("- " + x for x in cur[i1:i2])
    return OBS + "\n".join(out) + ("\n" if out else "")


def convert(src, dst):
    n = 0
    with open(dst, "w") as f:
        for line in open(src):
            row = json.loads(line)
            if len(row["response"]) != 1 or current_state(row) is None:
                continue
            assert row["response"][-1].startswith(OBS), row["id"]
            row["response"][-1] = patch(row)
            f.write(json.dumps(row) + "\n")
            n += 1
    print(f"wrote {n} rows to {dst}")


def lines(text, key=lambda l: l):
    return [key(l.strip()) for l in (text or "").strip().split("\n") if l.strip()]


def score(rows_path, preds_path):
    preds = {json.loads(l)["row_id"]: json.loads(l) for l in open(preds_path)}
    rows = [json.loads(l) for l in open(rows_path)]
    no_bounds = lambda l: "\t".join(l.split("\t")[:5])
    for domain, key in (("web", lambda l: l), ("os", lambda l: l), ("os", no_bounds)):
        n = exact = total = right = 0
        for row in rows:
            if row["task"] != domain or row["id"] not in preds:
                continue
            truth = lines(row["response"][-1][len(OBS):], key)
            pred = lines(preds[row["id"]]["observation"], key)
            n += 1
            exact += truth == pred
            total += len(truth)
            right += sum(l in pred for l in truth)
        label = domain + (" without bounds" if key is no_bounds else "")
        print(f"{label}: rows {n}, patch exact {100 * exact / max(n, 1):.1f}%, "
              f"changed lines right {100 * right / max(total, 1):.1f}% of {total}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "convert":
        convert(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "score":
        score(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
