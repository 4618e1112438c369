#!/usr/bin/env bash
# The Python environment for scripts/qwen35/make_fixtures.py: a virtual environment with pinned
# torch (CPU use only), transformers, tokenizers, safetensors, gguf and numpy, plus llama.cpp's
# source as vendored by llama-cpp-python 0.3.36 (convert_hf_to_gguf.py, conversion/, gguf-py/ and,
# to read, src/), unpacked inside the environment. llama.cpp itself (to run the GGUFs) comes from
# scripts/llama_server_env.sh, which this calls; it returns at once when already built.
#
# Where: $B4_QWEN35_REF_ENV, else ~/.cache/b4-agent/qwen35-ref. Pieces already there are reused.
# Prints shell assignments, so:
#   eval "$(bash scripts/qwen35/env.sh)"
#   "$B4_QWEN35_PYTHON" scripts/qwen35/make_fixtures.py --out tests/fixtures/qwen35
# First run: about 3 GB of wheels (torch pulls its CUDA libraries; they are not used).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/b4-agent"
DIR="${B4_QWEN35_REF_ENV:-$CACHE/qwen35-ref}"

LCP_VERSION=0.3.36
LCP_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
PACKAGES=(
  torch==2.15.0
  transformers==5.20.0
  tokenizers==0.23.3
  safetensors==0.8.0
  gguf==0.19.0
  numpy==2.4.6
  jinja2==3.1.6
  sentencepiece==0.2.3
)

check_env() {
  "$DIR/bin/python" - <<'EOF' >/dev/null 2>&1
import importlib.metadata as md
want = {"torch": "2.15.0", "transformers": "5.20.0"}
for name, version in want.items():
    assert md.version(name).split("+")[0] == version, (name, md.version(name))
import gguf, numpy, safetensors, tokenizers, jinja2  # noqa: F401
from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig  # noqa: F401
EOF
}

if [ -x "$DIR/bin/python" ] && check_env; then
  echo "reusing $DIR" >&2
else
  echo "installing the reference environment into $DIR" >&2
  [ -x "$DIR/bin/python" ] || python3 -m venv "$DIR" >&2
  "$DIR/bin/pip" install --quiet --upgrade pip >&2
  "$DIR/bin/pip" install --quiet "${PACKAGES[@]}" >&2
  check_env || { echo "the environment in $DIR does not import" >&2; exit 1; }
fi

SRC="$DIR/src"
LLAMA_CPP="$SRC/llama_cpp_python-$LCP_VERSION/vendor/llama.cpp"
if [ ! -f "$LLAMA_CPP/convert_hf_to_gguf.py" ]; then
  mkdir -p "$SRC"
  tarball="$SRC/llama_cpp_python-$LCP_VERSION.tar.gz"
  if [ ! -f "$tarball" ]; then
    echo "downloading the llama-cpp-python $LCP_VERSION sdist" >&2
    "$DIR/bin/pip" download --quiet --no-deps --no-binary llama-cpp-python \
      "llama-cpp-python==$LCP_VERSION" -d "$SRC" >&2
  fi
  echo "$LCP_SHA256  $tarball" | sha256sum -c --quiet - >&2 \
    || { echo "sha256 mismatch for $tarball" >&2; rm -f "$tarball"; exit 1; }
  tar -xzf "$tarball" -C "$SRC" \
    "llama_cpp_python-$LCP_VERSION/vendor/llama.cpp/convert_hf_to_gguf.py" \
    "llama_cpp_python-$LCP_VERSION/vendor/llama.cpp/conversion" \
    "llama_cpp_python-$LCP_VERSION/vendor/llama.cpp/gguf-py" \
    "llama_cpp_python-$LCP_VERSION/vendor/llama.cpp/models/templates" \
    "llama_cpp_python-$LCP_VERSION/vendor/llama.cpp/src" \
    "llama_cpp_python-$LCP_VERSION/vendor/llama.cpp/LICENSE"
  rm -f "$tarball"
fi

LLAMA_PY="${B4_LLAMA_SERVER_PYTHON:-}"
if [ -z "$LLAMA_PY" ]; then
  LLAMA_PY="$(bash "$REPO/scripts/llama_server_env.sh")"
fi

echo "B4_QWEN35_PYTHON=$DIR/bin/python"
echo "B4_QWEN35_LLAMA_CPP=$LLAMA_CPP"
echo "B4_LLAMA_SERVER_PYTHON=$LLAMA_PY"
echo "export B4_QWEN35_PYTHON B4_QWEN35_LLAMA_CPP B4_LLAMA_SERVER_PYTHON"
