//! The benchmark: runs bench cases (ours, or the Berkeley Function Calling Leaderboard's
//! question files) through one or more brain settings and scores every decision for
//! validity (it parsed) and correctness (the right calls with the right arguments, or
//! the right final answer).
//!
//! | step | module |
//! |---|---|
//! | our case files (bare messages array or `{id, messages, tools?, expected}`) | [`case`] |
//! | BFCL question and answer files, Python type names to JSON schema | [`bfcl`] |
//! | the AST-style checker | [`score`] |
//! | final answers after tool results: the facts they must state | [`answer`] |
//! | settings grid x cases x repeats, one record per decision | [`runner`] |
//! | summary statistics, `report.json`, `report.md`, the printed table | [`report`] |
//! | whole conversations through the agent loop, answers scored | [`conversations`] |
//! | accuracy intervals, the paired test of two runs | [`significance`] |
//! | two runs' reports compared case by case (`b4 bench --compare`) | [`compare`] |
//!
//! The library computes; `b4 bench` (src/cli/bench.rs) does the file writing, the
//! progress bar and Ctrl+C.

pub mod answer;
pub mod bfcl;
pub mod case;
pub mod compare;
pub mod conversations;
pub mod report;
pub mod runner;
pub mod score;
pub mod significance;

pub use case::{BenchCase, Expected, ExpectedCall};
pub use report::{build_report, render_markdown, render_table, Report};
pub use runner::{run, BenchMode, BenchPlan, BenchRun, CaseRecord, Job, Observer, RecordStatus, Setting};

/// Why cases could not be loaded or a run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{file}: cannot read: {source}")]
    Read { file: String, source: std::io::Error },
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    #[error("{file}: not valid JSON: {source}")]
    Json { file: String, source: serde_json::Error },
    #[error("{file}: {reason}")]
    Case { file: String, reason: String },
    #[error("{file}:{line}: {reason}")]
    Line { file: String, line: usize, reason: String },
    #[error("case id {id:?} appears twice: {first} and {second}")]
    DuplicateId { id: String, first: String, second: String },
    #[error("unknown case id {id:?} (available: {available})")]
    UnknownId { id: String, available: String },
    #[error("no bench cases to run")]
    NoCases,
    #[error("case {case}: it has no tools and no --tools_schema was given")]
    NoTools { case: String },
    #[error("no brain was loaded for profile {0}")]
    NoBrain(String),
    #[error("{0:#}")]
    Output(anyhow::Error),
}
