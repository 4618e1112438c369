#!/usr/bin/env python3
"""Builds tiny random-weight Qwen3.5 models (hybrid Gated DeltaNet + gated full attention) and
records reference outputs from Hugging Face transformers and from llama.cpp.

Run under the environment of scripts/qwen35/env.sh:
    eval "$(bash scripts/qwen35/env.sh)"
    "$B4_QWEN35_PYTHON" scripts/qwen35/make_fixtures.py --out tests/fixtures/qwen35
    "$B4_QWEN35_PYTHON" scripts/qwen35/make_fixtures.py --real-shape-0.8b /tmp/q35-0.8b
    "$B4_QWEN35_PYTHON" scripts/qwen35/make_fixtures.py --describe tests/fixtures/qwen35/tiny/model.gguf

Per model, under OUT/<name>/: hf/ (config.json, model.safetensors in bfloat16, tokenizer files,
chat_template.jinja), model.gguf (llama.cpp's convert_hf_to_gguf.py, f32) and reference.json.
OUT/template_renders/ holds chat-template renders made by transformers' apply_chat_template.

Everything is seeded; the tokenizer and the weights come out the same on every run with the
pinned packages. The llama.cpp side runs as a subprocess under llama-cpp-python's environment
($B4_LLAMA_SERVER_PYTHON, default ~/.cache/b4-agent/llama-server-0.3.36/bin/python).
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
ADDED_TOKENS = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<think>", "</think>"]
PRETOKENIZE_REGEX = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"
    r"| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
BPE_VOCAB_TARGET = 1000  # the corpus runs out of pairs seen twice before this
VOCAB_MULTIPLE = 16  # config vocab_size is rounded up; the converter pads with [PADn]
N_PREDICT = 32

# Greedy steps must be decided by far more than the expected f32 kernel differences.
MIN_GREEDY_MARGIN = 0.05
MAX_REFERENCE_DIFF = 2e-3  # transformers vs llama.cpp, logits, absolute
MIN_PERTURBATION_EFFECT = 0.1  # each deliberate mistake must move some prompt logit this much

PROMPT_MESSAGES = [{"role": "user", "content": "Hi! 请列出 docs 目录下的文件。"}]

LIN, FULL = "linear_attention", "full_attention"

COMMON = dict(
    hidden_act="silu",
    rms_norm_eps=1e-6,
    max_position_embeddings=262144,
    attention_bias=False,
    linear_conv_kernel_dim=4,
    initializer_range=0.2,
)

# seed: picked so that transformers and llama.cpp agree on every greedy step with a margin.
# mrope_section: Qwen3.5 writes [11, 11, 10] for rotary dim 64; ggml requires the sections to
# sum to at most head_dim, so the tiny models use [2, 1, 1] (their rotary dim is 8). With text
# positions (t = h = w) interleaved M-RoPE is plain NeoX RoPE over the first rotary dims.
MODELS = {
    "tiny": dict(
        seed=25,
        lm_gain=4.0,
        config=dict(
            hidden_size=64,
            num_hidden_layers=4,
            layer_types=[LIN, LIN, LIN, FULL],
            full_attention_interval=4,
            linear_num_key_heads=2,
            linear_num_value_heads=4,
            linear_key_head_dim=16,
            linear_value_head_dim=16,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=32,
            intermediate_size=128,
            tie_word_embeddings=False,
            rope=dict(rope_theta=10000000.0, partial_rotary_factor=0.25, mrope_section=[2, 1, 1]),
        ),
    ),
    "tied": dict(
        seed=20,
        lm_gain=4.0,
        config=dict(
            hidden_size=64,
            num_hidden_layers=6,
            layer_types=[LIN, FULL, LIN, FULL, LIN, FULL],
            full_attention_interval=2,
            linear_num_key_heads=4,
            linear_num_value_heads=4,
            linear_key_head_dim=16,
            linear_value_head_dim=16,
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=16,
            intermediate_size=96,
            tie_word_embeddings=True,
            rope=dict(rope_theta=10000000.0, partial_rotary_factor=0.5, mrope_section=[2, 1, 1]),
        ),
    ),
    "pattern-0.8b": dict(
        seed=1,
        lm_gain=4.0,
        config=dict(
            hidden_size=64,
            num_hidden_layers=4,
            layer_types=[LIN, LIN, LIN, FULL],
            full_attention_interval=4,
            linear_num_key_heads=16,
            linear_num_value_heads=16,
            linear_key_head_dim=16,
            linear_value_head_dim=16,
            num_attention_heads=8,
            num_key_value_heads=2,
            head_dim=32,
            intermediate_size=128,
            tie_word_embeddings=True,
            rope=dict(rope_theta=10000000.0, partial_rotary_factor=0.25, mrope_section=[2, 1, 1]),
        ),
    ),
}

# Random weights, so quantized files do not track the F16 one: the 24-layer random network
# amplifies weight noise (even Q8_0 flips the top token at some positions). It is for loading,
# shapes and speed; compare numbers on the F16 file.
REAL_08B = dict(
    seed=0,
    lm_gain=4.0,
    vocab_size=248320,
    config=dict(
        hidden_size=1024,
        num_hidden_layers=24,
        layer_types=[LIN, LIN, LIN, FULL] * 6,
        full_attention_interval=4,
        linear_num_key_heads=16,
        linear_num_value_heads=16,
        linear_key_head_dim=128,
        linear_value_head_dim=128,
        num_attention_heads=8,
        num_key_value_heads=2,
        head_dim=256,
        intermediate_size=3584,
        tie_word_embeddings=True,
        rope=dict(rope_theta=10000000.0, partial_rotary_factor=0.25, mrope_section=[11, 11, 10]),
    ),
)


# ---------------------------------------------------------------------------------------------
# environment


def llama_cpp_dir() -> Path:
    env = os.environ.get("B4_QWEN35_LLAMA_CPP")
    path = Path(env) if env else Path(sys.prefix) / "src" / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}" / "vendor" / "llama.cpp"
    if not (path / "convert_hf_to_gguf.py").is_file():
        sys.exit(f"llama.cpp source not found at {path}: run scripts/qwen35/env.sh or set B4_QWEN35_LLAMA_CPP")
    return path


def llama_python() -> str:
    env = os.environ.get("B4_LLAMA_SERVER_PYTHON")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "b4-agent"
    path = Path(env) if env else cache / f"llama-server-{LLAMA_CPP_PYTHON_VERSION}" / "bin" / "python"
    if not path.exists():
        sys.exit(f"llama-cpp-python's python not found at {path}: run scripts/llama_server_env.sh or set B4_LLAMA_SERVER_PYTHON")
    return str(path)


def run(cmd, **kw) -> subprocess.CompletedProcess:
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if res.returncode != 0:
        sys.stderr.write(res.stdout[-6000:] + res.stderr[-6000:])
        sys.exit(f"command failed ({res.returncode}): {' '.join(str(c) for c in cmd)}")
    return res


# ---------------------------------------------------------------------------------------------
# tokenizer and template


def build_tokenizer():
    """Byte-level BPE in the structure of Qwen3.5's tokenizer.json, trained on a fixed corpus."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import BPE
    from tokenizers.trainers import BpeTrainer

    tok = Tokenizer(
        BPE(byte_fallback=False, fuse_unk=False, dropout=None, unk_token=None, continuing_subword_prefix="", end_of_word_suffix="")
    )
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = BpeTrainer(
        vocab_size=BPE_VOCAB_TARGET,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
    )
    corpus = (HERE / "tokenizer_corpus.txt").read_text(encoding="utf-8")
    tok.train_from_iterator([corpus], trainer=trainer)
    assert tok.get_vocab_size() >= 256 + 300, tok.get_vocab_size()
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in ADDED_TOKENS])
    return tok


def tokenizer_config(tok, template: str) -> dict:
    spec = json.loads(tok.to_str())
    decoder = {
        str(a["id"]): {
            "content": a["content"],
            "lstrip": a["lstrip"],
            "normalized": a["normalized"],
            "rstrip": a["rstrip"],
            "single_word": a["single_word"],
            "special": a["special"],
        }
        for a in spec["added_tokens"]
    }
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": decoder,
        "bos_token": None,
        "chat_template": template,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 262144,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        # PreTrainedTokenizerFast loads tokenizer.json as it is; transformers 5's Qwen2Tokenizer
        # would rebuild the pre-tokenizer with Qwen2's regex (without \p{M}).
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": None,
    }


def write_tokenizer_files(hf_dir: Path, tok, template: str) -> None:
    tok.save(str(hf_dir / "tokenizer.json"))
    write_json(hf_dir / "tokenizer_config.json", tokenizer_config(tok, template), indent=2)
    (hf_dir / "chat_template.jinja").write_text(template, encoding="utf-8")
    ids = {t: tok.token_to_id(t) for t in SPECIAL_TOKENS}
    write_json(
        hf_dir / "generation_config.json",
        {
            "bos_token_id": None,
            "do_sample": False,
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        indent=2,
    )


TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "list_dir",
            "description": "List the files in a directory.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The directory to list."},
                    "recursive": {"type": "boolean"},
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "获取城市的当前天气。Get the current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
]

TOOL_TURNS = [
    {"role": "system", "content": "You are a helpful assistant. 你是一个有用的助手。"},
    {"role": "user", "content": "What is in docs? 请列出 docs 目录。"},
    {
        "role": "assistant",
        "content": "<think>\nThe user wants a listing.\n</think>\n\nLet me look.",
        "tool_calls": [
            {
                "type": "function",
                "function": {
                    "name": "list_dir",
                    "arguments": {
                        "path": "docs",
                        "recursive": False,
                        "depth": 2,
                        "filters": ["*.md", "*.txt"],
                        "options": {"hidden": False, "note": "只看文本"},
                    },
                },
            }
        ],
    },
    {"role": "tool", "content": "agent_intro.txt\nmodels.md"},
    {"role": "tool", "content": '{"count": 2}'},
    {"role": "assistant", "content": "<think>\nTwo files.\n</think>\n\ndocs 里有两个文件：agent_intro.txt 和 models.md。"},
    {"role": "user", "content": "北京天气怎么样？And in Paris?"},
    {
        "role": "assistant",
        "content": "",
        "reasoning_content": "I need the weather tool twice.",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "北京"}}},
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}},
        ],
    },
    {"role": "tool", "content": "晴，25°C"},
    {"role": "tool", "content": "Rain, 14°C"},
]

TEMPLATE_CASES = {
    "tool_turns_thinking_off": dict(messages=TOOL_TURNS, tools=TOOLS, add_generation_prompt=True, enable_thinking=False),
    "tool_turns_thinking_on": dict(messages=TOOL_TURNS, tools=TOOLS, add_generation_prompt=True, enable_thinking=True),
    "no_tools_default": dict(
        messages=[
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": [{"type": "text", "text": "你好！"}, {"type": "text", "text": " Who are you?"}]},
            {"role": "assistant", "content": "<think>\nA greeting.\n</think>\n\n你好，我是助手。"},
            {"role": "user", "content": "What is (17 + 25) * 3 - 4?"},
        ],
        add_generation_prompt=True,
    ),
    "string_arguments": dict(
        messages=[
            {"role": "user", "content": "List docs."},
            {
                "role": "assistant",
                "content": "Listing.",
                "tool_calls": [
                    {"type": "function", "function": {"name": "list_dir", "arguments": '{"path": "docs", "recursive": true}'}}
                ],
            },
            {"role": "tool", "content": "agent_intro.txt"},
        ],
        tools=TOOLS,
        add_generation_prompt=True,
        enable_thinking=False,
    ),
    "prompt": dict(messages=PROMPT_MESSAGES, add_generation_prompt=True, enable_thinking=False),
}


def render(hf_tok, case: dict) -> str:
    kwargs = {k: v for k, v in case.items() if k not in ("messages", "tools", "add_generation_prompt")}
    return hf_tok.apply_chat_template(
        case["messages"],
        tools=case.get("tools"),
        add_generation_prompt=case["add_generation_prompt"],
        tokenize=False,
        **kwargs,
    )


def write_template_renders(out: Path, hf_tok, template: str) -> dict:
    d = out / "template_renders"
    d.mkdir(parents=True, exist_ok=True)
    (d / "chat_template.jinja").write_text(template, encoding="utf-8")
    texts = {}
    for name, case in TEMPLATE_CASES.items():
        text = render(hf_tok, case)
        texts[name] = text
        write_json(d / f"{name}.json", case, indent=2)
        (d / f"{name}.txt").write_text(text, encoding="utf-8")
    # The enable_thinking switch and the grouping must show in the renders.
    assert texts["tool_turns_thinking_off"].endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert texts["tool_turns_thinking_on"].endswith("<|im_start|>assistant\n<think>\n")
    assert texts["no_tools_default"].endswith("<|im_start|>assistant\n<think>\n")
    assert "</tool_response>\n<tool_response>" in texts["tool_turns_thinking_on"]
    assert "The user wants a listing" not in texts["tool_turns_thinking_on"]  # stripped history
    assert "<think>\nI need the weather tool twice.\n</think>" in texts["tool_turns_thinking_on"]  # kept
    return texts


# ---------------------------------------------------------------------------------------------
# models


def make_config(spec: dict, vocab_size: int, tok_ids: dict):
    from transformers import Qwen3_5TextConfig

    c = dict(COMMON)
    c.update({k: v for k, v in spec["config"].items() if k not in ("rope", "full_attention_interval")})
    rope = spec["config"]["rope"]
    c["rope_parameters"] = {
        "rope_type": "default",
        "rope_theta": rope["rope_theta"],
        "partial_rotary_factor": rope["partial_rotary_factor"],
        "mrope_section": list(rope["mrope_section"]),
        "mrope_interleaved": True,
    }
    c["vocab_size"] = vocab_size
    c["eos_token_id"] = tok_ids["<|im_end|>"]
    c["pad_token_id"] = tok_ids["<|endoftext|>"]
    c["bos_token_id"] = None
    cfg = Qwen3_5TextConfig(**c)
    cfg.architectures = ["Qwen3_5ForCausalLM"]
    return cfg


@torch.no_grad()
def init_weights(model, spec: dict) -> None:
    """Deterministic, deliberately non-trivial weights, rounded to bfloat16 values (stored as f32).

    Linear weights ~ N(0, 1.5/sqrt(fan_in)), embeddings ~ N(0, 1) (N(0, lm_gain/sqrt(hidden)) when tied),
    lm_head ~ N(0, lm_gain/sqrt(hidden));
    zero-centred RMSNorm weights (used as 1 + w) ~ N(0, 0.4); gated-norm weights (used as w) ~ U(0.25, 1.75);
    A_log = log(U(0.1, 2)); dt_bias ~ U(-1.5, 1.5); conv1d taps ~ N(0, 0.5).
    """
    g = torch.Generator().manual_seed(spec["seed"])
    hidden = model.config.hidden_size
    for name, p in sorted(model.named_parameters(), key=lambda kv: kv[0]):
        shape = p.shape
        if name.endswith("embed_tokens.weight"):
            # Tied: the embedding is the lm_head too, scaled like one so logits stay a few units wide.
            scale = spec["lm_gain"] / math.sqrt(hidden) if model.config.tie_word_embeddings else 1.0
            v = torch.randn(shape, generator=g) * scale
        elif name == "lm_head.weight":
            v = torch.randn(shape, generator=g) * (spec["lm_gain"] / math.sqrt(hidden))
        elif name.endswith("linear_attn.norm.weight"):
            v = torch.rand(shape, generator=g) * 1.5 + 0.25
        elif name.endswith("norm.weight"):
            v = torch.randn(shape, generator=g) * 0.4
        elif name.endswith("A_log"):
            v = torch.log(torch.rand(shape, generator=g) * 1.9 + 0.1)
        elif name.endswith("dt_bias"):
            v = torch.rand(shape, generator=g) * 3.0 - 1.5
        elif name.endswith("conv1d.weight"):
            v = torch.randn(shape, generator=g) * 0.5
        elif p.ndim == 2:
            v = torch.randn(shape, generator=g) * (1.5 / math.sqrt(shape[1]))
        else:
            raise ValueError(f"no init rule for {name} {tuple(shape)}")
        p.copy_(v.to(torch.bfloat16).to(torch.float32))


def save_hf(hf_dir: Path, spec: dict, cfg, tok, template: str, dtype=torch.float32) -> None:
    from transformers import Qwen3_5ForCausalLM

    hf_dir.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(spec["seed"])
    model = Qwen3_5ForCausalLM(cfg).to(torch.float32)
    init_weights(model, spec)
    model = model.to(dtype)
    model.save_pretrained(hf_dir, safe_serialization=True)
    # Real Qwen3.5 configs carry full_attention_interval next to layer_types; transformers drops
    # it on load/save, and without it the converter writes its default (4).
    conf = json.loads((hf_dir / "config.json").read_text())
    conf["full_attention_interval"] = spec["config"]["full_attention_interval"]
    write_json(hf_dir / "config.json", dict(sorted(conf.items())), indent=2)
    write_tokenizer_files(hf_dir, tok, template)


def load_hf(hf_dir: Path, **overrides):
    from transformers import AutoConfig, Qwen3_5ForCausalLM

    cfg = AutoConfig.from_pretrained(hf_dir)
    for k, v in overrides.items():
        if k.startswith("rope."):
            cfg.rope_parameters[k[5:]] = v
        else:
            setattr(cfg, k, v)
    model = Qwen3_5ForCausalLM.from_pretrained(hf_dir, config=cfg, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    return model


@torch.no_grad()
def prompt_logits(model, ids) -> torch.Tensor:
    return model(input_ids=torch.tensor([ids]), use_cache=False).logits[0].float()


@torch.no_grad()
def transformers_reference(model, ids, n_predict):
    """Prefill logits (one pass), greedy ids three ways that must agree, and greedy margins."""
    from transformers import GenerationConfig

    logits = prompt_logits(model, ids)
    # 1. generate() with the hybrid cache; no EOS, so it never stops and never masks a token.
    gc = GenerationConfig(do_sample=False, max_new_tokens=n_predict, eos_token_id=None, pad_token_id=None, bos_token_id=None)
    inp = torch.tensor([ids])
    gen = model.generate(inp, attention_mask=torch.ones_like(inp), generation_config=gc)[0, len(ids):].tolist()
    # 2. token by token through the cache (prefill uses the chunked delta rule, steps the recurrent one).
    out = model(input_ids=inp, use_cache=True)
    past = out.past_key_values
    row = out.logits[0, -1].float()
    step, step_rows = [], []
    for _ in range(n_predict):
        tok = int(torch.argmax(row))
        step.append(tok)
        step_rows.append(row)
        out = model(input_ids=torch.tensor([[tok]]), past_key_values=past, use_cache=True)
        past = out.past_key_values
        row = out.logits[0, -1].float()
    # 3. no cache: the whole sequence again at every step.
    seq = list(ids)
    margins, cache_vs_full = [], 0.0
    for i in range(n_predict):
        full_row = prompt_logits(model, seq)[-1]
        top = torch.topk(full_row, 2).values
        margins.append(float(top[0] - top[1]))
        cache_vs_full = max(cache_vs_full, float((full_row - step_rows[i]).abs().max()))
        seq.append(int(torch.argmax(full_row)))
    full = seq[len(ids):]
    assert gen == step == full, f"transformers greedy disagrees with itself:\n{gen}\n{step}\n{full}"
    return logits, gen, margins, cache_vs_full


# Deliberate mistakes a Rust port could make, expressed on the HF weights/config. Each must move
# the prompt logits by at least MIN_PERTURBATION_EFFECT, or the fixture could not catch it.
def _reorder_v_heads(t: torch.Tensor, dim: int, nk: int, per_k: int, head_dim: int) -> torch.Tensor:
    shape = list(t.shape)
    new_shape = shape[:dim] + [nk, per_k, head_dim] + shape[dim + 1:]
    t = t.reshape(*new_shape)
    perm = list(range(len(new_shape)))
    perm[dim], perm[dim + 1] = perm[dim + 1], perm[dim]
    return t.permute(*perm).contiguous().reshape(*shape)


def perturbations(cfg) -> dict:
    nk, nv = cfg.linear_num_key_heads, cfg.linear_num_value_heads
    dk, dv = cfg.linear_key_head_dim, cfg.linear_value_head_dim

    def edit(pred, fn):
        return lambda sd: {k: (fn(k, v) if pred(k) else v) for k, v in sd.items()}

    zero_centred = lambda k: k.endswith(("layernorm.weight", "q_norm.weight", "k_norm.weight")) or k == "model.norm.weight"
    out = {
        "rmsnorm_uses_w_not_1_plus_w": (edit(zero_centred, lambda k, v: v - 1.0), {}),
        "qk_norm_uses_w_not_1_plus_w": (edit(lambda k: k.endswith(("q_norm.weight", "k_norm.weight")), lambda k, v: v - 1.0), {}),
        "gated_norm_uses_1_plus_w": (edit(lambda k: k.endswith("linear_attn.norm.weight"), lambda k, v: v + 1.0), {}),
        "A_log_off_by_one": (edit(lambda k: k.endswith("A_log"), lambda k, v: v + 1.0), {}),
        "dt_bias_dropped": (edit(lambda k: k.endswith("dt_bias"), lambda k, v: torch.zeros_like(v)), {}),
        "conv1d_taps_reversed": (edit(lambda k: k.endswith("conv1d.weight"), lambda k, v: v.flip(-1)), {}),
        "rope_over_full_head_dim": (None, {"rope.partial_rotary_factor": 1.0}),
        "rope_theta_1e4": (None, {"rope.rope_theta": 10000.0}),
    }
    if nv != nk:
        per = nv // nk

        def tiled(k, v):
            if k.endswith("in_proj_qkv.weight"):
                return torch.cat([v[: 2 * nk * dk], _reorder_v_heads(v[2 * nk * dk:], 0, nk, per, dv)], 0)
            if k.endswith("conv1d.weight"):
                return torch.cat([v[: 2 * nk * dk], _reorder_v_heads(v[2 * nk * dk:], 0, nk, per, dv)], 0)
            if k.endswith("in_proj_z.weight"):
                return _reorder_v_heads(v, 0, nk, per, dv)
            if k.endswith(("in_proj_a.weight", "in_proj_b.weight", "A_log", "dt_bias")):
                return _reorder_v_heads(v.unsqueeze(-1) if v.ndim == 1 else v, 0, nk, per, 1).reshape(v.shape)
            if k.endswith("out_proj.weight"):
                return _reorder_v_heads(v, 1, nk, per, dv)
            return v

        # The GGUF stores V heads tiled; pairing them with K heads by repeat_interleave is wrong.
        out["v_heads_paired_grouped_on_tiled_data"] = (edit(lambda k: ".linear_attn." in k, tiled), {})
    return out


@torch.no_grad()
def sensitivity(hf_dir: Path, model, ids, base_logits) -> dict:
    from transformers import Qwen3_5ForCausalLM

    sd = {k: v.clone() for k, v in model.state_dict().items()}
    effects = {}
    for name, (fn, overrides) in perturbations(model.config).items():
        if fn is None:
            m = load_hf(hf_dir, **overrides)
        else:
            m = Qwen3_5ForCausalLM(model.config)
            m.load_state_dict(fn(sd), strict=True)
            m.eval()
        effects[name] = round(float((prompt_logits(m, ids) - base_logits).abs().max()), 4)
        del m
    weak = {k: v for k, v in effects.items() if v < MIN_PERTURBATION_EFFECT}
    assert not weak, f"perturbations that barely move the logits: {weak}"
    return effects


def convert(hf_dir: Path, out_file: Path, outtype: str, name: str) -> None:
    run([sys.executable, HERE / "convert.py", llama_cpp_dir(), hf_dir, "--outtype", outtype, "--outfile", out_file, "--model-name", name, "--no-mtp"])


def llama_reference(gguf: Path, ids, n_predict: int, texts=()) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        req, res = Path(tmp) / "req.json", Path(tmp) / "res.json"
        write_json(req, {"prompt_ids": ids, "n_predict": n_predict, "texts": list(texts)})
        run([llama_python(), HERE / "llama_ref.py", "ref", "--model", gguf, "--request", req, "--out", res])
        return json.loads(res.read_text())


# ---------------------------------------------------------------------------------------------
# output


def write_json(path: Path, obj, indent=None) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=indent) + "\n", encoding="utf-8")


def f7(x: float) -> float:
    assert math.isfinite(x)
    return float(f"{x:.7g}")


def rows_json(rows) -> str:
    return "[\n" + ",\n".join("      [" + ",".join(f"{x:.7g}" for x in r) + "]" for r in rows) + "\n    ]"


def write_reference(path: Path, ref: dict) -> None:
    """JSON with one logits row per line (diffable, and about 10 bytes a float)."""
    parts = []
    for key, val in ref.items():
        if key in ("transformers", "llama_cpp"):
            inner = [f'    "logits": {rows_json(val["logits"])}', f'    "greedy": {json.dumps(val["greedy"])}']
            parts.append(f'  "{key}": {{\n' + ",\n".join(inner) + "\n  }")
        else:
            parts.append(f"  {json.dumps(key)}: {json.dumps(val, ensure_ascii=False)}")
    text = "{\n" + ",\n".join(parts) + "\n}\n"
    json.loads(text)
    path.write_text(text, encoding="utf-8")


def build_model(out: Path, name: str, spec: dict, tok, template: str, prompt_text: str, prompt_ids, check_texts) -> dict:
    d = out / name
    if d.exists():
        shutil.rmtree(d)
    hf_dir = d / "hf"
    n_tok = tok.get_vocab_size()
    vocab_size = -(-n_tok // VOCAB_MULTIPLE) * VOCAB_MULTIPLE
    ids = {t: tok.token_to_id(t) for t in SPECIAL_TOKENS}
    cfg = make_config(spec, vocab_size, ids)
    # The weights are bfloat16 values: stored as such in the folder (exact, half the bytes),
    # as f32 in the GGUF (so llama.cpp computes in f32 like the references).
    save_hf(hf_dir, spec, cfg, tok, template, dtype=torch.bfloat16)

    model = load_hf(hf_dir)
    logits, greedy, margins, cache_vs_full = transformers_reference(model, prompt_ids, N_PREDICT)
    effects = sensitivity(hf_dir, model, prompt_ids, logits)
    spread = float(logits.std(dim=-1).mean())

    gguf = d / "model.gguf"
    convert(hf_dir, gguf, "f32", f"qwen35-{name}")
    lref = llama_reference(gguf, prompt_ids, N_PREDICT, [prompt_text] + list(check_texts))
    assert lref["n_vocab"] == vocab_size, (lref["n_vocab"], vocab_size)
    assert lref["tokenized"][0] == prompt_ids, f"llama.cpp tokenizes the prompt differently:\n{lref['tokenized'][0]}\n{prompt_ids}"
    token_mismatch = [i for i, t in enumerate(check_texts) if lref["tokenized"][i + 1] != tok.encode(t).ids]

    t_logits = [[f7(x) for x in r] for r in logits.tolist()]
    l_logits = [[f7(x) for x in r] for r in lref["logits"]]
    diff = max(abs(a - b) for ra, rb in zip(t_logits, l_logits) for a, b in zip(ra, rb))
    min_margin = min(min(margins), min(lref["greedy_margins"]))
    print(
        f"[{name}] vocab {vocab_size}, logit std {spread:.2f}, max |transformers - llama.cpp| = {diff:.3g}, "
        f"min greedy margin {min_margin:.3f}, cache vs no-cache {cache_vs_full:.2g}\n"
        f"  greedy transformers {greedy}\n  greedy llama.cpp    {lref['greedy']}\n  sensitivity {effects}"
    )
    if token_mismatch:
        print(f"  NOTE: llama.cpp tokenizes check texts {token_mismatch} differently from tokenizers")
    assert greedy == lref["greedy"], f"{name}: greedy ids differ between transformers and llama.cpp"
    assert diff < MAX_REFERENCE_DIFF, f"{name}: references differ by {diff}"
    assert min_margin > MIN_GREEDY_MARGIN, f"{name}: a greedy step is decided by only {min_margin}"

    ref = {
        "model": name,
        "prompt_text": prompt_text,
        "prompt_ids": prompt_ids,
        "n_vocab": vocab_size,
        "tolerance_note": (
            "Both references compute in float32: transformers 5.20.0 (eager attention; prefill in one pass, "
            "greedy with its hybrid cache, checked token by token and against no-cache recomputation) and "
            f"llama.cpp via llama-cpp-python {LLAMA_CPP_PYTHON_VERSION} (CPU, f32 K/V cache, no flash attention, "
            f"model.gguf in f32). They differ by at most {diff:.2g} absolute on the prompt logits; a float32 port "
            f"should be within 1e-3 of either. Every greedy step is decided by a top-1/top-2 margin of at least "
            f"{min_margin:.3f}, so greedy ids must match exactly. Floats are rounded to 7 significant digits."
        ),
        "transformers": {"logits": t_logits, "greedy": greedy},
        "llama_cpp": {"logits": l_logits, "greedy": lref["greedy"]},
        "max_abs_diff_between_references": f7(diff),
        "min_greedy_margin": round(min_margin, 4),
        "perturbation_max_abs_logit_change": effects,
    }
    write_reference(d / "reference.json", ref)
    return {"diff": diff, "min_margin": min_margin, "effects": effects}


def make_fixtures(out: Path, only) -> None:
    from transformers import AutoTokenizer

    template = (HERE / "chat_template.jinja").read_text(encoding="utf-8")
    tok = build_tokenizer()
    out.mkdir(parents=True, exist_ok=True)

    # The template is rendered by transformers from a saved tokenizer folder (jinja2).
    with tempfile.TemporaryDirectory() as tmp:
        write_tokenizer_files(Path(tmp), tok, template)
        hf_tok = AutoTokenizer.from_pretrained(tmp)
        assert json.loads(hf_tok.backend_tokenizer.to_str())["pre_tokenizer"] == json.loads(tok.to_str())["pre_tokenizer"]
        texts = write_template_renders(out, hf_tok, template)
    prompt_text = texts["prompt"]
    prompt_ids = tok.encode(prompt_text).ids
    print(f"tokenizer: {tok.get_vocab_size()} tokens; prompt {len(prompt_ids)} ids: {prompt_ids}")

    summary = {}
    for name, spec in MODELS.items():
        if only and name not in only:
            continue
        check = [t for k, t in texts.items() if k != "prompt"] if name == "tiny" else []
        summary[name] = build_model(out, name, spec, tok, template, prompt_text, prompt_ids, check)
    for name, s in summary.items():
        print(f"{name}: max abs logit diff {s['diff']:.3g}, min greedy margin {s['min_margin']:.3f}")


@torch.no_grad()
def find_seeds(names, tries: int) -> None:
    """Transformers-only greedy margins for seeds 0..tries-1 (to pick MODELS[...]['seed'])."""
    from transformers import AutoTokenizer, Qwen3_5ForCausalLM

    template = (HERE / "chat_template.jinja").read_text(encoding="utf-8")
    tok = build_tokenizer()
    with tempfile.TemporaryDirectory() as tmp:
        write_tokenizer_files(Path(tmp), tok, template)
        prompt_ids = tok.encode(render(AutoTokenizer.from_pretrained(tmp), TEMPLATE_CASES["prompt"])).ids
    ids = {t: tok.token_to_id(t) for t in SPECIAL_TOKENS}
    vocab_size = -(-tok.get_vocab_size() // VOCAB_MULTIPLE) * VOCAB_MULTIPLE
    for name in names:
        for seed in range(tries):
            spec = dict(MODELS[name], seed=seed)
            cfg = make_config(spec, vocab_size, ids)
            cfg._attn_implementation = "eager"
            model = Qwen3_5ForCausalLM(cfg).eval()
            init_weights(model, spec)
            seq, margins = list(prompt_ids), []
            for _ in range(N_PREDICT):
                row = prompt_logits(model, seq)[-1]
                top = torch.topk(row, 2).values
                margins.append(float(top[0] - top[1]))
                seq.append(int(torch.argmax(row)))
            print(f"{name} seed {seed}: min greedy margin {min(margins):.3f}, distinct ids {len(set(seq[len(prompt_ids):]))}", flush=True)


# ---------------------------------------------------------------------------------------------
# real shape


def real_shape(out: Path) -> None:
    """A Qwen3.5-0.8B-shaped model with random weights: HF (bf16) -> F16 GGUF -> Q4_K_M GGUF."""
    from transformers import AutoTokenizer

    out.mkdir(parents=True, exist_ok=True)
    template = (HERE / "chat_template.jinja").read_text(encoding="utf-8")
    tok = build_tokenizer()
    ids = {t: tok.token_to_id(t) for t in SPECIAL_TOKENS}
    spec = REAL_08B
    cfg = make_config(spec, spec["vocab_size"], ids)
    hf_dir = out / "hf"
    if hf_dir.exists():
        shutil.rmtree(hf_dir)
    print("building the HF model (bf16) ...", flush=True)
    save_hf(hf_dir, spec, cfg, tok, template, dtype=torch.bfloat16)
    f16 = out / "qwen35-0.8b-shape-f16.gguf"
    q4 = out / "qwen35-0.8b-shape-q4_k_m.gguf"
    print("converting to F16 GGUF ...", flush=True)
    convert(hf_dir, f16, "f16", "qwen35-0.8b-shape")
    print("quantizing to Q4_K_M ...", flush=True)
    run([llama_python(), HERE / "llama_ref.py", "quantize", "--in", f16, "--out", q4, "--ftype", "Q4_K_M"])

    hf_tok = AutoTokenizer.from_pretrained(hf_dir)
    text = render(hf_tok, TEMPLATE_CASES["prompt"])
    prompt = tok.encode(text).ids
    model = load_hf(hf_dir)
    t_logits = prompt_logits(model, prompt)
    del model
    for path in (f16, q4):
        lref = llama_reference(path, prompt, 4)
        l_logits = torch.tensor(lref["logits"])
        diff = float((l_logits - t_logits).abs().max())
        agree = float((l_logits.argmax(-1) == t_logits.argmax(-1)).float().mean())
        print(f"{path.name}: {path.stat().st_size / 2**20:.0f} MiB, max |llama.cpp - transformers| on the prompt "
              f"logits {diff:.3g} (logit std {float(t_logits.std(-1).mean()):.2f}), top-1 agreement {agree:.0%}")


# ---------------------------------------------------------------------------------------------
# describe


def describe(path: Path) -> None:
    try:
        sys.path.insert(0, str(llama_cpp_dir() / "gguf-py"))
    except SystemExit:
        pass  # the installed gguf package reads it too
    from gguf import GGUFReader, GGUFValueType

    r = GGUFReader(str(path))
    print(f"{path}: {len(r.fields)} metadata keys, {len(r.tensors)} tensors")
    for key, field in r.fields.items():
        if key.startswith("GGUF."):
            continue
        vt = field.types[0] if field.types else None
        if vt == GGUFValueType.ARRAY:
            n = len(field.data)
            et = field.types[1]
            if et == GGUFValueType.STRING:
                vals = [bytes(field.parts[i]).decode("utf-8", "replace") for i in field.data[:6]]
            else:
                vals = [field.parts[i].tolist()[0] for i in field.data[:32]]
            print(f"  {key} [{et.name} x {n}] {vals}{' ...' if n > len(vals) else ''}")
        elif vt == GGUFValueType.STRING:
            s = bytes(field.parts[field.data[0]]).decode("utf-8", "replace")
            print(f"  {key} = {s[:80]!r}{' ...' if len(s) > 80 else ''}")
        else:
            print(f"  {key} = {field.parts[field.data[0]].tolist()[0]} ({vt.name})")
    for t in r.tensors:
        print(f"  {t.name:36s} {t.tensor_type.name:5s} ne={list(map(int, t.shape))}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="fixture folder, e.g. tests/fixtures/qwen35")
    ap.add_argument("--only", nargs="*", help="build only these models")
    ap.add_argument("--real-shape-0.8b", dest="real", type=Path, metavar="OUTDIR", help="build the 0.8B-shaped model there")
    ap.add_argument("--describe", type=Path, metavar="GGUF", help="print a GGUF's metadata and tensors")
    ap.add_argument("--find-seeds", type=int, metavar="N", help="print greedy margins of seeds 0..N-1 (with --only)")
    args = ap.parse_args()
    torch.set_num_threads(min(2, os.cpu_count() or 1))
    if args.describe:
        describe(args.describe)
    elif args.find_seeds:
        find_seeds(args.only or list(MODELS), args.find_seeds)
    elif args.real:
        real_shape(args.real)
    elif args.out:
        make_fixtures(args.out, args.only)
    else:
        ap.error("give --out, --real-shape-0.8b or --describe")


if __name__ == "__main__":
    main()
