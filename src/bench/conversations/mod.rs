//! The conversation bench: whole questions through the agent loop `b4 chat` runs (the
//! runtime's [`Run`](crate::runtime::Run) with the real skills, on a fresh copy of a
//! workspace), scored on the final answer, not on one decision.
//!
//! | step | module |
//! |---|---|
//! | the set: `questions.json` with its workspace, loaded and checked | [`set`] |
//! | one answer against a question's expectations | [`score`] |
//! | settings x conversations, one record per question | [`run`] |
//! | per-setting accuracy (overall, per language, per category), `report.json`, `report.md`, the printed table | [`report`] |
//!
//! `b4 bench --conversations FILE` (src/cli/bench_conversations.rs) writes the files.

pub mod report;
pub mod run;
pub mod score;
pub mod set;

pub use report::{build_report, render_markdown, render_table, ChatReport};
pub use run::{run, ChatObserver, ChatPlan, ChatRun, QuestionJob, QuestionRecord, ToolUse};
pub use score::{score, Verdict};
pub use set::{load, Conversation, ConversationSet, Evidence, Lang, Turn};
