#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what the tests need (tmux for the TUI
# smoke test, llama.cpp's server for the served-model tests), fetches the default real model (pinned, verified; skipped when present),
# then runs every test. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v tmux >/dev/null 2>&1; then
  echo "installing tmux for the TUI smoke test"
  (apt-get update -qq && apt-get install -y -qq tmux >/dev/null) || echo "warning: could not install tmux"
fi

# llama.cpp's OpenAI-compatible server for the served-model tests (tests/served_model.rs):
# built once per machine into ~/.cache/b4-agent (about 7 minutes on a 2-core machine), found
# at once afterwards.
B4_LLAMA_SERVER_PYTHON="$(bash scripts/llama_server_env.sh)"
export B4_LLAMA_SERVER_PYTHON

# One build profile for everything (dependencies optimized, see Cargo.toml).
cargo build --locked --bins
cargo run --locked --quiet -- models fetch qwen2.5-coder-0.5b

cargo test --locked --no-fail-fast 2>&1
