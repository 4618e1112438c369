#!/usr/bin/env python3
"""The llama.cpp side of the Qwen3.5 references; runs under llama-cpp-python's environment
(scripts/llama_server_env.sh), called by make_fixtures.py as a subprocess.

  llama_ref.py ref --model M.gguf --request REQ.json --out OUT.json
      REQ: {"prompt_ids": [...], "n_predict": 32, "texts": ["...", ...]}
      OUT: {"logits": [[n_vocab floats] per prompt position], "greedy": [ids],
            "greedy_margins": [top1 - top2 per greedy step], "tokenized": [[ids] per text],
            "n_vocab": N}
  llama_ref.py quantize --in F16.gguf --out Q4_K_M.gguf [--ftype Q4_K_M]
"""

import argparse
import ctypes
import json
import sys

import numpy as np


def reference(args) -> None:
    import llama_cpp

    with open(args.request, encoding="utf-8") as f:
        req = json.load(f)
    prompt = [int(t) for t in req["prompt_ids"]]
    n_predict = int(req.get("n_predict", 32))
    llm = llama_cpp.Llama(
        model_path=args.model,
        n_ctx=256,
        n_batch=256,
        n_ubatch=256,
        n_threads=2,
        n_threads_batch=2,
        logits_all=True,
        # f32 K/V cache (the default is f16) so that only the kernels differ from transformers.
        type_k=llama_cpp.GGML_TYPE_F32,
        type_v=llama_cpp.GGML_TYPE_F32,
        flash_attn=False,
        seed=0,
        verbose=args.verbose,
    )
    n_vocab = llm.n_vocab()
    llm.eval(prompt)
    logits = np.array(llm.scores[: len(prompt)], dtype=np.float32)
    greedy, margins = [], []
    for _ in range(n_predict):
        row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        order = np.argsort(-row, kind="stable")
        tok = int(order[0])
        greedy.append(tok)
        margins.append(float(row[order[0]] - row[order[1]]))
        llm.eval([tok])
    tokenized = [
        llm.tokenize(text.encode("utf-8"), add_bos=False, special=True) for text in req.get("texts", [])
    ]
    out = {
        "n_vocab": n_vocab,
        "logits": logits.tolist(),
        "greedy": greedy,
        "greedy_margins": margins,
        "tokenized": tokenized,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f)


def quantize(args) -> None:
    import llama_cpp

    ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{args.ftype.upper()}")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    rc = llama_cpp.llama_model_quantize(args.inp.encode(), args.out.encode(), ctypes.byref(params))
    if rc != 0:
        sys.exit(f"llama_model_quantize failed with {rc}")
    print(f"quantized {args.inp} -> {args.out} ({args.ftype})")


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("ref")
    r.add_argument("--model", required=True)
    r.add_argument("--request", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--verbose", action="store_true")
    q = sub.add_parser("quantize")
    q.add_argument("--in", dest="inp", required=True)
    q.add_argument("--out", required=True)
    q.add_argument("--ftype", default="Q4_K_M")
    args = ap.parse_args()
    {"ref": reference, "quantize": quantize}[args.cmd](args)


if __name__ == "__main__":
    main()
