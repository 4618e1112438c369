#!/usr/bin/env python3
"""llama.cpp's side of `b4 perf`: the same token ids through llama.cpp's C API (the
`llama_cpp` package), timed the same way as ours.

Reads a JSON request on stdin:
  {"model": PATH, "threads": N, "n_ctx": N, "gen_tokens": N, "repeat": K,
   "prompts": [{"name": ..., "ids": [...]}, ...]}
and writes on stdout:
  {"threads", "load_ms", "peak_rss_mib", "build", "runs": [[{prefill_ms, ttft_ms,
   decode_ms, prefill_tok_s, decode_tok_s, tokens}, ...K] per prompt]}

Every run starts from an empty KV cache, prefills in batches of n_batch, then decodes
greedily for exactly gen_tokens tokens. The C API is used directly (not `Llama.eval`) so
that no per-token logits copies or the wrapper's score buffer add time or memory.
"""
import ctypes
import json
import sys
import time

import llama_cpp as L
import numpy as np

N_BATCH = 512


def fn(*names):
    """The first of `names` this llama_cpp version has (the C API renamed things)."""
    for name in names:
        f = getattr(L, name, None)
        if f is not None:
            return f
    raise RuntimeError("llama_cpp has none of " + ", ".join(names))


def peak_rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def system_info():
    """The CPU features this llama.cpp build uses (its own words, the enabled ones)."""
    try:
        info = L.llama_print_system_info()
        info = info.decode() if isinstance(info, bytes) else str(info)
    except Exception as e:  # older builds: the figures still count
        return "unknown (%s)" % e
    return " ".join(info.split())


def main():
    req = json.load(sys.stdin)
    threads = int(req["threads"])
    gen_tokens = int(req["gen_tokens"])

    L.llama_backend_init()
    started = time.perf_counter()
    mparams = L.llama_model_default_params()
    model = fn("llama_model_load_from_file", "llama_load_model_from_file")(req["model"].encode(), mparams)
    if not model:
        raise RuntimeError("cannot load " + req["model"])
    cparams = L.llama_context_default_params()
    cparams.n_ctx = int(req["n_ctx"])
    cparams.n_batch = N_BATCH
    cparams.n_ubatch = N_BATCH
    cparams.n_threads = threads
    cparams.n_threads_batch = threads
    ctx = fn("llama_init_from_model", "llama_new_context_with_model")(model, cparams)
    if not ctx:
        raise RuntimeError("cannot create a context")
    load_ms = (time.perf_counter() - started) * 1000.0

    if hasattr(L, "llama_model_get_vocab") and hasattr(L, "llama_vocab_n_tokens"):
        n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    else:
        n_vocab = L.llama_n_vocab(model)

    if hasattr(L, "llama_memory_clear") and hasattr(L, "llama_get_memory"):
        def clear():
            L.llama_memory_clear(L.llama_get_memory(ctx), True)
    else:
        clear_kv = fn("llama_kv_self_clear", "llama_kv_cache_clear")

        def clear():
            clear_kv(ctx)

    def decode(ids):
        arr = (L.llama_token * len(ids))(*ids)
        rc = L.llama_decode(ctx, L.llama_batch_get_one(arr, len(ids)))
        if rc != 0:
            raise RuntimeError("llama_decode returned %d" % rc)

    def argmax():
        ptr = L.llama_get_logits_ith(ctx, -1)
        return int(np.ctypeslib.as_array(ptr, shape=(n_vocab,)).argmax())

    runs = []
    for prompt in req["prompts"]:
        ids = [int(i) for i in prompt["ids"]]
        per_prompt = []
        for _ in range(int(req["repeat"])):
            clear()
            t0 = time.perf_counter()
            for i in range(0, len(ids), N_BATCH):
                decode(ids[i:i + N_BATCH])
            prefill_ms = (time.perf_counter() - t0) * 1000.0
            token = argmax()
            ttft_ms = (time.perf_counter() - t0) * 1000.0
            tokens = [token]
            t1 = time.perf_counter()
            for _ in range(1, gen_tokens):
                decode([token])
                token = argmax()
                tokens.append(token)
            decode_ms = (time.perf_counter() - t1) * 1000.0
            per_prompt.append({
                "prefill_ms": prefill_ms,
                "ttft_ms": ttft_ms,
                "decode_ms": decode_ms,
                "prefill_tok_s": len(ids) * 1000.0 / prefill_ms if prefill_ms > 0 else 0.0,
                "decode_tok_s": (gen_tokens - 1) * 1000.0 / decode_ms if decode_ms > 0 else 0.0,
                "tokens": tokens,
            })
        runs.append(per_prompt)

    out = {"threads": threads, "load_ms": load_ms, "peak_rss_mib": peak_rss_mib(), "runs": runs,
           "build": system_info()}
    L.llama_free(ctx)
    fn("llama_model_free", "llama_free_model")(model)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
