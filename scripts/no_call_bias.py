#!/usr/bin/env python3
"""Single-turn accuracy of a prompt_json setting at each `no_call_bias`, computed from one
bench run at bias 0 (`b4 bench --bfcl ... --outdir OUT` with a profile whose no_call_bias is
0): each decision's raw record gives `no_call_margin`, the model's best logit for "no call"
minus its best for a call where it chose. Decoding up to that choice does not depend on the
bias, so with bias b a decision answers instead of calling exactly when margin + b > 0; an
answer is right for an irrelevance question and wrong for any other. Multi-turn cases
(their choice comes after tool results) are left out.

usage: scripts/no_call_bias.py OUTDIR SETTING [BIAS ...]
"""
import json
import os
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    outdir, setting = sys.argv[1], sys.argv[2]
    biases = [float(b) for b in sys.argv[3:]] or [0, 0.5, 1, 1.5, 2, 2.5, 3]
    report = json.load(open(os.path.join(outdir, "report.json")))
    rows = []
    for r in report["records"]:
        if r["setting"] != setting or r["category"].startswith("multi_turn"):
            continue
        raw = json.load(open(os.path.join(outdir, setting, r["case"], "raw_model_output.json")))
        rows.append((r["category"], r["correct"], r["tool_calls"] > 0, raw.get("no_call_margin")))
    if not rows:
        sys.exit(f"no single-turn records of {setting} in {outdir}")
    categories = sorted({c for c, *_ in rows})
    print("bias  " + "  ".join(f"{c[:12]:>12}" for c in categories) + "         all")
    for bias in biases:
        right = {c: 0 for c in categories}
        total = {c: 0 for c in categories}
        for category, correct, called, margin in rows:
            total[category] += 1
            flips = called and margin is not None and margin + bias > 0
            right[category] += (category == "irrelevance") if flips else correct
        cells = "  ".join(f"{right[c]:>5}/{total[c]:<6}" for c in categories)
        print(f"{bias:<4}  {cells}  {sum(right.values()):>4}/{len(rows)} = {100 * sum(right.values()) / len(rows):.1f}%")


if __name__ == "__main__":
    main()
