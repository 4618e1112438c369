#!/usr/bin/env bash
# llama.cpp's OpenAI-compatible server (llama-cpp-python[server], pinned) in a virtual
# environment cached outside the clone, for the served-model tests (tests/served_model.rs)
# and `b4 perf`. The first run builds llama.cpp from source: about 7 minutes on a fresh
# 2-core machine; later runs find it and return at once. Prints the environment's python.
#
# Where: $B4_LLAMA_SERVER_ENV, else ~/.cache/b4-agent/llama-server-<version>.
# Built with the host CPU's features; on CPUs with AMX, llama.cpp's native build dies with
# SIGILL in its AMX code (seen on a 5th-generation Xeon), so there it is built with the
# AVX-512 flags and AMX off. $CMAKE_ARGS, when set, wins.
set -euo pipefail

VERSION=0.3.36
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/b4-agent"
DIR="${B4_LLAMA_SERVER_ENV:-$CACHE/llama-server-$VERSION}"

if [ -x "$DIR/bin/python" ] && "$DIR/bin/python" -c "import llama_cpp.server.app" >/dev/null 2>&1; then
  echo "$DIR/bin/python"
  exit 0
fi

if [ -z "${CMAKE_ARGS:-}" ] && grep -qw amx_tile /proc/cpuinfo 2>/dev/null; then
  flags="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
  grep -qw avx512f /proc/cpuinfo && flags="$flags -DGGML_AVX512=ON"
  grep -qw avx512_vnni /proc/cpuinfo && flags="$flags -DGGML_AVX512_VNNI=ON"
  grep -qw avx512_vbmi /proc/cpuinfo && flags="$flags -DGGML_AVX512_VBMI=ON"
  grep -qw avx512_bf16 /proc/cpuinfo && flags="$flags -DGGML_AVX512_BF16=ON"
  export CMAKE_ARGS="$flags -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
  echo "AMX CPU: building llama.cpp with $CMAKE_ARGS" >&2
fi

echo "building llama-cpp-python[server]==$VERSION into $DIR (about 7 minutes on 2 cores, once per machine)" >&2
mkdir -p "$(dirname "$DIR")"
tmp="$DIR.partial.$$"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp" >&2
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"
"$tmp/bin/pip" install --quiet --no-cache-dir "llama-cpp-python[server]==$VERSION" >&2
# A venv's scripts name its own folder: build in a temporary one, then rebuild the venv's
# launchers in place after the move (python -m is all the tests use).
rm -rf "$DIR"
mv "$tmp" "$DIR"
trap - EXIT
python3 -m venv --upgrade "$DIR" >&2 || true
"$DIR/bin/python" -c "import llama_cpp.server.app" >&2
echo "$DIR/bin/python"
