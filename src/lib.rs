//! b4-agent: a whole LLM agent in one process.
//!
//! | part | module |
//! |---|---|
//! | B1 runtime (ReAct, plan-and-execute) | [`runtime`] |
//! | B2 skills | [`skills`] |
//! | B3 tool layer (schema, validation, dispatch) | [`tools`] |
//! | B4 brain (candle Qwen, prompts, parsing) | [`brain`] |
//! | B5 memory | [`memory`] |
//! | the benchmark | [`bench`] |
//!
//! [`protocol`] holds the messages and the one event type the engine sends to the CLI and
//! the TUI; [`tui`] renders it; [`bench`] measures the brain; [`input`] reads the files a
//! user names (regular files only, with a size cap).

pub mod bench;
pub mod brain;
pub mod cli;
pub mod input;
pub mod memory;
pub mod perf;
pub mod protocol;
pub mod runtime;
pub mod skills;
pub mod text;
pub mod tools;
pub mod tui;
