#!/usr/bin/env python3
"""Writes the hand-written corpus in cases_a.py / cases_b.py / cases_multi.py /
cases_followup.py to
data/bfcl/{dev,holdout}/ in the published BFCL shape, after checking every case against
its functions' schemas.

    python3 scripts/bfcl_corpus/build.py          # check, then write
    python3 scripts/bfcl_corpus/build.py --check  # check only

Ids are `<category>_<n>` with n from 100 (the 14 cases in data/bfcl/ use 0-4), numbered
across both splits so no id repeats. Of each category 40% go to holdout and 60% to dev,
chosen evenly spaced along the authored order (which runs through the domains) within
the Chinese and the English questions separately, so both splits see every domain and
the same language mix (multi_turn: within each language and kind of expected decision,
final answer or next call). The follow-up conversations of cases_followup.py come after
the other multi_turn cases (ids multi_turn_140 on) with the split each names, so adding
them moved no earlier case. Optional params a case does not give are added to its ground
truth as "may be left out" (`""`, plus the default where the schema has one), as BFCL's
answers list every param.

multi_turn questions are one turn of messages in our message shape: the user's request,
assistant messages with `tool_calls` ({"id": "call_001", "name", "args"}), one
{"role": "tool", "tool_call_id", "name", "status", "content"} per call right after them
(content: the JSON text of {"status": "success", "output": ...} or {"status": "error",
"error": ...}, as the agent's tool layer writes it), maybe an assistant answer and a
further user message. Their answer line is a `ground_truth` (the next call) or
{"id", "final_answer": {"must_contain": [[alternatives...]], "example": "..."}}.
"""

import copy
import importlib
import json
import re
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ next to the data
sys.path.insert(0, str(Path(__file__).resolve().parent))
from functions import FUNCS  # noqa: E402
from cases_a import MULTIPLE, SIMPLE  # noqa: E402
from cases_b import IRRELEVANCE, PARALLEL, PARALLEL_MULTIPLE  # noqa: E402
from cases_multi import MULTI_TURN, Failed  # noqa: E402
from cases_followup import FOLLOW_UP  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# Later batches (fresh.py), each case with its split, numbered after the cases above.
BATCHES = [importlib.import_module(f.stem).BATCH for f in sorted(Path(__file__).resolve().parent.glob("cases_fresh_*.py"))]
CATEGORIES = [(name, cases + [c for b in BATCHES for c in b.cases[name]]) for name, cases in
              [("simple", SIMPLE), ("multiple", MULTIPLE), ("parallel", PARALLEL),
               ("parallel_multiple", PARALLEL_MULTIPLE), ("irrelevance", IRRELEVANCE), ("multi_turn", MULTI_TURN + FOLLOW_UP)]]
FIRST_ID = 100
HOLDOUT_SHARE = 0.4
CJK = re.compile(r"[\u4e00-\u9fff]")
THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


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


def faithful_strings(case, warn, context=None):
    """Free-text string values (no enum) should be written in the question, or for
    multi_turn in the conversation (or be an alternative)."""
    q = (context or case["question"]).lower()
    for name, spec in case["calls"]:
        props = FUNCS[name]["parameters"]["properties"]
        for key, values in spec.items():
            prop = props[key]
            if prop["type"] != "string" or "enum" in prop:
                continue
            first = next((v for v in values if v != ""), None)
            if "" not in values and first is not None and first.lower() not in q:
                warn.append(f"{case['id']}: {name}.{key}={first!r} not in the question")


def stratum(case):
    """What the split keeps in the same mix: the language, and for multi_turn the kind."""
    language = "zh" if CJK.search(case["question"]) else "en"
    if "messages" not in case:
        return (language,)
    return (language, "final" if case["final"] else "next")


def holdout_positions(cases):
    """Indices of `cases` that go to holdout: those with a fixed "split" of "holdout" (the
    follow-ups), and of the others some evenly spaced within each stratum."""
    fixed = {i for i, c in enumerate(cases) if "split" in c}
    if any(cases[i]["split"] not in ("dev", "holdout") for i in fixed):
        sys.exit("a case's split is dev or holdout")
    spaced = [i for i in range(len(cases)) if i not in fixed]
    picked = {spaced[j] for j in spaced_positions([cases[i] for i in spaced])}
    return picked | {i for i in fixed if cases[i]["split"] == "holdout"}


def spaced_positions(cases):
    """Indices of `cases` that go to holdout: evenly spaced within each stratum."""
    total = round(len(cases) * HOLDOUT_SHARE)
    order = [("zh",), ("en",), ("zh", "final"), ("zh", "next"), ("en", "final"), ("en", "next")]
    strata = [[i for i, c in enumerate(cases) if stratum(c) == key] for key in order]
    strata = [s for s in strata if s]
    picked, left = set(), total
    for n_stratum, subset in enumerate(strata):
        n = len(subset)
        k = left if n_stratum == len(strata) - 1 else round(n * total / len(cases))
        left -= k
        picked |= {subset[j] for j in range(n) if (j + 1) * k // n > j * k // n}
    return picked


def check_args(args, schema, path):
    """Concrete call arguments (one value each) against a dict schema."""
    props, required = schema["properties"], schema.get("required", [])
    for key, value in args.items():
        if key not in props:
            raise Bad(f"{path}: unknown param {key!r}")
        check_value(value, props[key], f"{path}.{key}")
    for key in required:
        if key not in args:
            raise Bad(f"{path}: required param {key!r} missing")


def tool_content(result):
    body = {"status": "error", "error": result.error} if isinstance(result, Failed) else {"status": "success", "output": result}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def conversation(case):
    """The case's messages in our message shape, checked: calls valid against the offered
    functions, each followed by its result with the same id and name, the request first
    and the decision point (a result or a user message) last."""
    messages, n_calls = [], 0
    for i, (kind, payload) in enumerate(case["messages"]):
        if kind == "user":
            messages.append({"role": "user", "content": payload})
        elif kind == "assistant":
            messages.append({"role": "assistant", "content": payload})
        elif kind == "calls":
            if not payload:
                raise Bad(f"message {i}: no calls")
            calls, results = [], []
            for name, args, result in payload:
                if name not in case["functions"]:
                    raise Bad(f"message {i}: {name} not offered")
                check_args(args, FUNCS[name]["parameters"], f"message {i}:{name}")
                if not isinstance(result, (dict, Failed)):
                    raise Bad(f"message {i}: {name}: a result is an object or Failed(...)")
                n_calls += 1
                call_id = f"call_{n_calls:03d}"
                calls.append({"id": call_id, "name": name, "args": args})
                status = "error" if isinstance(result, Failed) else "success"
                results.append({"role": "tool", "tool_call_id": call_id, "name": name, "status": status, "content": tool_content(result)})
            messages.append({"role": "assistant", "content": "", "tool_calls": calls})
            messages.extend(results)
        else:
            raise Bad(f"message {i}: unknown kind {kind!r}")
    if messages[0]["role"] != "user":
        raise Bad("the conversation starts with the user's request")
    if not any(m["role"] == "tool" for m in messages):
        raise Bad("no tool results")
    if messages[-1]["role"] not in ("tool", "user"):
        raise Bad("the conversation ends where the model decides: after a result or a user message")
    # The ids pair up as the loader checks them (the helpers above make it so; this guards edits).
    open_calls = []
    for i, m in enumerate(messages):
        if m["role"] == "tool":
            match = [c for c in open_calls if c["id"] == m["tool_call_id"] and c["name"] == m["name"]]
            if not match:
                raise Bad(f"message {i}: result {m['tool_call_id']} follows no call of that id and name")
            open_calls.remove(match[0])
            continue
        if open_calls:
            raise Bad(f"message {i}: call {open_calls[0]['id']} has no result")
        open_calls = list(m.get("tool_calls", []))
    return messages


def normalized(text):
    """Lower case, no thousands separators: the build's rough version of the bench's
    matcher (src/bench/answer.rs, which the Rust tests run on every case)."""
    return THOUSANDS.sub("", text.lower())


def check_final(case, messages):
    final = case["final"]
    groups, example = final["must_contain"], final["example"]
    if not groups or any(not g or any(not isinstance(a, str) or not a.strip() for a in g) for g in groups):
        raise Bad("must_contain: groups of non-blank alternatives")
    asked = normalized(" ".join(m["content"] for m in messages if m["role"] == "user"))
    results = normalized(" ".join(m["content"] for m in messages if m["role"] == "tool"))
    for group in groups:
        # A follow-up that no offered function fits: its groups hold what any fitting reply
        # says (a courtesy, the fact asked, a refusal), not facts of the earlier results.
        if not case.get("no_tool") and not any(normalized(a) in results for a in group):
            raise Bad(f"must_contain {group}: no alternative is in the tool results")
        if not any(normalized(a) in normalized(example) for a in group):
            raise Bad(f"must_contain {group}: not in the example answer")
    if all(any(normalized(a) in asked for a in group) for group in groups):
        raise Bad("must_contain: every group is already in the question")


def split_batches():
    """Each later batch is split as the first cases were: within each category, 40% to
    holdout, evenly spaced within each stratum of the batch (its language, and for
    multi_turn the kind of decision), so a batch grows both splits in the same mix."""
    for batch in BATCHES:
        for cases in batch.cases.values():
            for case in cases:
                if "messages" in case:
                    case["question"] = next((p for k, p in case["messages"] if k == "user"), "")
            holdout = spaced_positions(cases)
            for i, case in enumerate(cases):
                case["split"] = "holdout" if i in holdout else "dev"


def build():
    seen_questions, warn, out = set(), [], {"dev": ([], []), "holdout": ([], [])}
    chinese = 0
    split_batches()
    for category, cases in CATEGORIES:
        for case in cases:
            if "messages" in case:
                case["question"] = next((p for k, p in case["messages"] if k == "user"), "")
        holdout = holdout_positions(cases)
        for i, case in enumerate(cases):
            case = copy.deepcopy(case)
            case["id"] = f"{category}_{FIRST_ID + i}"
            where = case["id"]
            messages = None
            try:
                if case["question"] in seen_questions:
                    raise Bad("question repeated")
                seen_questions.add(case["question"])
                chinese += bool(CJK.search(case["question"]))
                names = case["functions"]
                if len(set(names)) != len(names) or any(n not in FUNCS for n in names):
                    raise Bad(f"bad function list {names}")
                calls = case["calls"]
                if category == "multi_turn":
                    messages = conversation(case)
                    if (calls is None) == (case["final"] is None):
                        raise Bad("give either the next calls or a final answer")
                    if case["final"] is not None:
                        check_final(case, messages)
                if category == "irrelevance":
                    if calls is not None:
                        raise Bad("irrelevance with calls")
                elif calls is not None:
                    if category.startswith("parallel") and not 2 <= len(calls) <= 4:
                        raise Bad("parallel needs 2-4 calls")
                    if category in ("simple", "multiple") and len(calls) != 1:
                        raise Bad("one call expected")
                    if category == "multi_turn" and not 1 <= len(calls) <= 4:
                        raise Bad("1-4 next calls")
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
                    context = None
                    if messages is not None:
                        context = " ".join(m["content"] for m in messages if m["role"] in ("user", "tool"))
                    faithful_strings(case, warn, context)
            except Bad as e:
                sys.exit(f"{where}: {e}")
            split = "holdout" if i in holdout else "dev"
            questions, answers = out[split]
            question = messages if messages is not None else [{"role": "user", "content": case["question"]}]
            questions.append({"id": case["id"], "question": [question], "function": [FUNCS[n] for n in case["functions"]]})
            if case["calls"] is not None:
                answers.append({"id": case["id"], "ground_truth": [{n: spec} for n, spec in case["calls"]]})
            elif case.get("final") is not None:
                answers.append({"id": case["id"], "final_answer": case["final"]})
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
