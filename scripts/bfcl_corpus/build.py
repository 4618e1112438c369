#!/usr/bin/env python3
"""Writes the hand-written corpus in cases_a.py / cases_b.py to data/bfcl/{dev,holdout}/
in the published BFCL shape, after checking every case against its functions' schemas.

    python3 scripts/bfcl_corpus/build.py          # check, then write
    python3 scripts/bfcl_corpus/build.py --check  # check only

Ids are `<category>_<n>` with n from 100 (the 14 cases in data/bfcl/ use 0-4), numbered
across both splits so no id repeats. Of each category 40% go to holdout and 60% to dev,
chosen evenly spaced along the authored order (which runs through the domains) within
the Chinese and the English questions separately, so both splits see every domain and
the same language mix. Optional params a
case does not give are added to its ground truth as "may be left out" (`""`, plus the
default where the schema has one), as BFCL's answers list every param.
"""

import copy
import json
import re
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ next to the data
sys.path.insert(0, str(Path(__file__).resolve().parent))
from functions import FUNCS  # noqa: E402
from cases_a import MULTIPLE, SIMPLE  # noqa: E402
from cases_b import IRRELEVANCE, PARALLEL, PARALLEL_MULTIPLE  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CATEGORIES = [("simple", SIMPLE), ("multiple", MULTIPLE), ("parallel", PARALLEL),
              ("parallel_multiple", PARALLEL_MULTIPLE), ("irrelevance", IRRELEVANCE)]
FIRST_ID = 100
HOLDOUT_SHARE = 0.4
CJK = re.compile(r"[\u4e00-\u9fff]")


class Bad(Exception):
    pass


def accepted(value):
    return value if isinstance(value, list) else [value]


def check_value(v, schema, path):
    t = schema.get("type")
    ok = {
        "string": lambda: isinstance(v, str),
        "integer": lambda: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda: isinstance(v, bool),
        "array": lambda: isinstance(v, list),
        "dict": lambda: isinstance(v, dict),
    }[t]()
    if not ok:
        raise Bad(f"{path}: {v!r} is not a {t}")
    if "enum" in schema and v not in schema["enum"]:
        raise Bad(f"{path}: {v!r} not in {schema['enum']}")
    if t == "array":
        for i, item in enumerate(v):
            check_value(item, schema["items"], f"{path}[{i}]")
    if t == "dict":
        check_spec(v, schema, path)


def check_spec(spec, schema, path):
    """`spec` is {param: [accepted]} against a dict schema; fills optional params in."""
    props, required = schema["properties"], schema.get("required", [])
    for key in spec:
        if key not in props:
            raise Bad(f"{path}: unknown param {key!r}")
    for key in required:
        if key not in spec:
            raise Bad(f"{path}: required param {key!r} missing")
    for key, prop in props.items():
        if key not in spec:
            spec[key] = [""] + ([prop["default"]] if "default" in prop else [])
            continue
        spec[key] = accepted(spec[key])
        for v in spec[key]:
            if v == "":
                if key in required:
                    raise Bad(f"{path}.{key}: required, but \"\" accepted")
                continue
            check_value(v, prop, f"{path}.{key}")
        if len(set(json.dumps(v, sort_keys=True) for v in spec[key])) != len(spec[key]):
            raise Bad(f"{path}.{key}: repeated accepted value")


def faithful_strings(case, warn):
    """Free-text string values (no enum) should be written in the question (or be an alternative)."""
    q = case["question"].lower()
    for name, spec in case["calls"]:
        props = FUNCS[name]["parameters"]["properties"]
        for key, values in spec.items():
            prop = props[key]
            if prop["type"] != "string" or "enum" in prop:
                continue
            first = next((v for v in values if v != ""), None)
            if "" not in values and first is not None and first.lower() not in q:
                warn.append(f"{case['id']}: {name}.{key}={first!r} not in the question")


def holdout_positions(cases):
    """Indices of `cases` that go to holdout: evenly spaced within each language."""
    total = round(len(cases) * HOLDOUT_SHARE)
    zh = [i for i, c in enumerate(cases) if CJK.search(c["question"])]
    en = [i for i, c in enumerate(cases) if not CJK.search(c["question"])]
    k_zh = round(len(zh) * total / len(cases))
    picked = set()
    for subset, k in ((zh, k_zh), (en, total - k_zh)):
        n = len(subset)
        picked |= {subset[j] for j in range(n) if (j + 1) * k // n > j * k // n}
    return picked


def build():
    seen_questions, warn, out = set(), [], {"dev": ([], []), "holdout": ([], [])}
    chinese = 0
    for category, cases in CATEGORIES:
        holdout = holdout_positions(cases)
        for i, case in enumerate(cases):
            case = copy.deepcopy(case)
            case["id"] = f"{category}_{FIRST_ID + i}"
            where = case["id"]
            try:
                if case["question"] in seen_questions:
                    raise Bad("question repeated")
                seen_questions.add(case["question"])
                chinese += bool(CJK.search(case["question"]))
                names = case["functions"]
                if len(set(names)) != len(names) or any(n not in FUNCS for n in names):
                    raise Bad(f"bad function list {names}")
                calls = case["calls"]
                if category == "irrelevance":
                    if calls is not None:
                        raise Bad("irrelevance with calls")
                else:
                    if category.startswith("parallel") and not 2 <= len(calls) <= 4:
                        raise Bad("parallel needs 2-4 calls")
                    if category in ("simple", "multiple") and len(calls) != 1:
                        raise Bad("one call expected")
                    if category == "multiple" and len(names) < 3:
                        raise Bad("multiple offers at least three functions")
                    if category == "parallel_multiple" and len({n for n, _ in calls}) < 2:
                        raise Bad("parallel_multiple needs two functions")
                    if category == "parallel" and len({n for n, _ in calls}) != 1:
                        raise Bad("parallel uses one function")
                    if len({json.dumps(c, sort_keys=True, ensure_ascii=False) for c in calls}) != len(calls):
                        raise Bad("two identical calls")
                    for name, spec in calls:
                        if name not in names:
                            raise Bad(f"{name} not offered")
                        check_spec(spec, FUNCS[name]["parameters"], f"{where}:{name}")
                    faithful_strings(case, warn)
            except Bad as e:
                sys.exit(f"{where}: {e}")
            split = "holdout" if i in holdout else "dev"
            questions, answers = out[split]
            questions.append({"id": case["id"], "question": [[{"role": "user", "content": case["question"]}]],
                              "function": [FUNCS[n] for n in case["functions"]]})
            if case["calls"] is not None:
                answers.append({"id": case["id"], "ground_truth": [{n: spec} for n, spec in case["calls"]]})
    return out, chinese, len(seen_questions), warn


def main():
    out, chinese, total, warn = build()
    for w in warn:
        print("note:", w)
    for split, (questions, answers) in out.items():
        counts = {}
        for q in questions:
            cat = q["id"].rsplit("_", 1)[0]
            counts[cat] = counts.get(cat, 0) + 1
        zh = sum(bool(CJK.search(q["question"][0][0]["content"])) for q in questions)
        print(f"{split}: {len(questions)} questions ({zh} Chinese), {len(answers)} answers, {counts}")
    print(f"total {total}, Chinese {chinese} ({chinese / total:.0%})")
    if chinese * 3 < total:
        sys.exit("fewer than a third of the questions are Chinese")
    if "--check" in sys.argv:
        return
    for split, (questions, answers) in out.items():
        d = ROOT / "data/bfcl" / split
        d.mkdir(parents=True, exist_ok=True)
        for name, rows in (("questions.json", questions), ("answers.json", answers)):
            (d / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


if __name__ == "__main__":
    main()
