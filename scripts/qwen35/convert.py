#!/usr/bin/env python3
"""Runs llama.cpp's convert_hf_to_gguf.py on one of our tiny Qwen3.5 folders.

Usage: python convert.py LLAMA_CPP_DIR [convert_hf_to_gguf.py arguments...]

The one change to the converter: it names the pre-tokenizer (`tokenizer.ggml.pre`) by hashing
the token ids of a test string, a hash that only the real Qwen3.5 tokenizer has. Our tiny
tokenizer has the same pre-tokenizer (NFC, the Qwen3.5 split regex, byte-level) but other
merges, so its hash is unknown and the converter would stop. Here an unknown hash is answered
with "qwen35" when, and only when, the tokenizer's normalizer and pre-tokenizer are exactly
Qwen3.5's; everything else runs as shipped.
"""

import json
import runpy
import sys
from pathlib import Path

QWEN35_SPLIT_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def is_qwen35_pretokenizer(tokenizer) -> bool:
    spec = json.loads(tokenizer.backend_tokenizer.to_str())
    pre = spec.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers") or []
    if spec.get("normalizer", {}).get("type") != "NFC" or len(steps) != 2:
        return False
    split, byte_level = steps
    return (
        split.get("type") == "Split"
        and split.get("pattern", {}).get("Regex") == QWEN35_SPLIT_REGEX
        and split.get("behavior") == "Isolated"
        and split.get("invert") is False
        and byte_level.get("type") == "ByteLevel"
        and byte_level.get("add_prefix_space") is False
        and byte_level.get("use_regex") is False
    )


def main() -> None:
    llama_cpp = Path(sys.argv[1]).resolve()
    script = llama_cpp / "convert_hf_to_gguf.py"
    sys.path.insert(0, str(llama_cpp))
    sys.path.insert(1, str(llama_cpp / "gguf-py"))

    from conversion import TextModel  # the converter's own package, from llama_cpp

    original = TextModel.get_vocab_base_pre

    def get_vocab_base_pre(self, tokenizer) -> str:
        try:
            return original(self, tokenizer)
        except NotImplementedError:
            if is_qwen35_pretokenizer(tokenizer):
                print("convert.py: unknown tokenizer hash, Qwen3.5 pre-tokenizer -> 'qwen35'", file=sys.stderr)
                return "qwen35"
            raise

    TextModel.get_vocab_base_pre = get_vocab_base_pre
    sys.argv = [str(script)] + sys.argv[2:]
    runpy.run_path(str(script), run_name="__main__")


if __name__ == "__main__":
    main()
