#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what the tests need (tmux for the TUI
# smoke test), fetches the default real model (pinned, verified; skipped when present),
# then runs every test. CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v tmux >/dev/null 2>&1; then
  echo "installing tmux for the TUI smoke test"
  (apt-get update -qq && apt-get install -y -qq tmux >/dev/null) || echo "warning: could not install tmux"
fi

# One build profile for everything (dependencies optimized, see Cargo.toml).
cargo build --locked --bins
cargo run --locked --quiet -- models fetch qwen2.5-coder-0.5b

cargo test --locked --no-fail-fast 2>&1
