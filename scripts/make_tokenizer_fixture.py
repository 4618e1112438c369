#!/usr/bin/env python3
"""Builds the reference fixtures for the Rust tokenizer and chat-template tests.

Reference implementation: Hugging Face `transformers` (its GGUF tokenizer converter and its
`apply_chat_template`, which renders with Python jinja2) over the `tokenizers` Python package,
reading the GGUF metadata with the `gguf` package. None of that shares code with our Rust
side except the Rust core of `tokenizers`; the parts we rebuild ourselves (vocabulary
respelling, merges, special-token typing, the pre-tokenizer regex, Jinja rendering with
`tojson`) come from independent code.

Why not `AutoTokenizer.from_pretrained(dir, gguf_file=...)` directly: in transformers 5 that
route imports torch only to read tensors (transformers/integrations/gguf/reader.py), and torch
is a multi-gigabyte install. We call the very converter that route uses,
`convert_gguf_tokenizer(architecture, tokenizer_dict)`, with the same `tokenizer_dict` built
from the metadata by the same `GGUF_TOKENIZER_MAPPING`.

Setup (once, in a virtual environment):
    python3 -m venv /tmp/tokref && /tmp/tokref/bin/pip install transformers gguf tokenizers jinja2
Run:
    /tmp/tokref/bin/python scripts/make_tokenizer_fixture.py [path/to/model.gguf]
Writes tests/fixtures/tokenizer/qwen2.5-coder-tokens.json and chat_template_cases.json.
"""

import hashlib
import json
import os
import sys
from pathlib import Path

from gguf import GGUFReader
from transformers import PreTrainedTokenizerFast
from transformers.integrations.gguf.gguf_tokenizer_mapping import (
    GGUF_TOKENIZER_MAPPING,
    convert_gguf_tokenizer,
)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "tokenizer"
DEFAULT_MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"

TEXTS = [
    "Hello, world!",
    "你好，世界！今天天气怎么样？",
    "请读取 docs/agent_intro.txt 并总结要点。",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "fn main() {\n\tlet x: Vec<u32> = (0..10).collect();\n\tprintln!(\"{x:?}\");\n}\n",
    "Emoji: 🎉🚀 👩‍💻 👍🏽 ❤️ 🇨🇳",
    "   leading spaces, trailing spaces   ",
    "tabs\t\tand\r\nCRLF\r\n\r\nand   \n\n\n   blank lines",
    "a          b                    c",
    "Numbers 1234567890 3.14159 -42 1e-9 0x1F",
    "I'm sure they've said it's what we'd do; WE'LL SEE, you're right.",
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n你好<|im_end|>\n<|im_start|>assistant\n",
    "<tool_call>\n{\"name\": \"file_reader\", \"arguments\": {\"path\": \"docs/agent_intro.txt\"}}\n</tool_call>",
    "<|endoftext|><|fim_prefix|>def<|fim_suffix|>pass<|fim_middle|>",
    "[PAD151900] is not a token in text, <|im_end|> is",
    "{\"content\": \"\", \"tool_calls\": [{\"name\": \"calculator\", \"args\": {\"expression\": \"(3+5)*2\"}}]}",
    "日本語のテキストと한국어 텍스트 and Ελληνικά and русский текст",
    "cafe\u0301 vs caf\u00e9, ﬁ ligature, full-width ＡＢＣ１２３",
    "\u200b zero width, \u00a0 nbsp, \u3000 ideographic space",
    "",
    " ",
    "\n",
    "x" * 64,
    "| col1 | 列2 |\n|---|---|\n| 1 | 二 |\n",
]

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "file_reader",
            "description": "读取工作区中的文本文件 (read a text file in the workspace)",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "相对路径 relative path"},
                    "max_chars": {"type": "integer", "default": 4000},
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "calculator",
            "description": "Evaluate an arithmetic expression like \"(3+5)*2\"\nReturns a number.",
            "parameters": {
                "type": "object",
                "properties": {"expression": {"type": "string"}, "precision": {"type": "number", "default": 1.5}},
                "required": ["expression"],
            },
        },
    },
]

TEMPLATE_CASES = [
    {
        "name": "system_user",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "你好，请介绍一下你自己。"},
        ],
        "tools": None,
        "add_generation_prompt": True,
    },
    {
        "name": "user_only_default_system",
        "messages": [{"role": "user", "content": "Hi"}],
        "tools": None,
        "add_generation_prompt": False,
    },
    {
        "name": "tools_hermes_block",
        "messages": [
            {"role": "system", "content": "你是一个智能助手。"},
            {"role": "user", "content": "读取 docs/agent_intro.txt，并计算 (3+5)*2"},
        ],
        "tools": TOOLS,
        "add_generation_prompt": True,
    },
    {
        "name": "tools_without_system",
        "messages": [{"role": "user", "content": "2+2?"}],
        "tools": TOOLS,
        "add_generation_prompt": True,
    },
    {
        "name": "assistant_tool_calls_and_results",
        "messages": [
            {"role": "system", "content": "You are an agent."},
            {"role": "user", "content": "Read the intro and compute (3+5)*2."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_001",
                        "type": "function",
                        "function": {"name": "file_reader", "arguments": {"path": "docs/agent_intro.txt"}},
                    },
                    {"id": "call_002", "type": "function", "function": {"name": "calculator", "arguments": {"expression": "(3+5)*2", "precision": 2.0}}},
                ],
            },
            {"role": "tool", "tool_call_id": "call_001", "name": "file_reader", "content": "{\"status\": \"success\", \"output\": {\"content\": \"B4 是大脑。\"}}"},
            {"role": "tool", "tool_call_id": "call_002", "name": "calculator", "content": "{\"status\": \"success\", \"output\": 16}"},
            {"role": "assistant", "content": "The intro says B4 is the brain; (3+5)*2 = 16."},
            {"role": "user", "content": "谢谢！"},
        ],
        "tools": TOOLS,
        "add_generation_prompt": True,
    },
    {
        "name": "assistant_content_with_call_no_function_wrapper",
        "messages": [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": "Let me check.",
                "tool_calls": [{"name": "calculator", "arguments": {"expression": "1/3", "note": "引号\"与\\反斜杠\t制表"}}],
            },
            {"role": "tool", "content": "0.333"},
        ],
        "tools": None,
        "add_generation_prompt": True,
    },
]


def models_dir() -> Path:
    env = os.environ.get("B4_MODELS_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "b4-agent" / "models"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main() -> None:
    gguf_path = Path(sys.argv[1]) if len(sys.argv) > 1 else models_dir() / DEFAULT_MODEL
    reader = GGUFReader(str(gguf_path))
    metadata = {key: field.contents() for key, field in reader.fields.items()}
    tokenizer_dict = {
        name: metadata[f"tokenizer.{key}"]
        for key, name in GGUF_TOKENIZER_MAPPING["tokenizer"].items()
        if f"tokenizer.{key}" in metadata
    }
    backend, _ = convert_gguf_tokenizer(metadata["general.architecture"], tokenizer_dict)

    cases = []
    for text in TEXTS:
        ids = backend.encode(text, add_special_tokens=False).ids
        cases.append({"text": text, "ids": ids})
    OUT.mkdir(parents=True, exist_ok=True)
    source = {
        "model_file": gguf_path.name,
        "model_sha256": sha256(gguf_path),
        "reference": "transformers convert_gguf_tokenizer + tokenizers (Python)",
    }
    (OUT / "qwen2.5-coder-tokens.json").write_text(
        json.dumps({"source": source, "cases": cases}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )

    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend)
    tokenizer.chat_template = metadata["tokenizer.chat_template"]
    rendered = []
    for case in TEMPLATE_CASES:
        text = tokenizer.apply_chat_template(
            case["messages"],
            tools=case["tools"],
            add_generation_prompt=case["add_generation_prompt"],
            tokenize=False,
        )
        rendered.append(dict(case, rendered=text))
    source = dict(source, reference="transformers apply_chat_template (jinja2)")
    (OUT / "chat_template_cases.json").write_text(
        json.dumps({"source": source, "chat_template": tokenizer.chat_template, "cases": rendered}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    print(f"wrote {len(cases)} token cases and {len(rendered)} template cases to {OUT}")


if __name__ == "__main__":
    main()
