//! The session record the app keeps, and its export to `outputs/session-<time>.{json,md}`.
//! An export never overwrites: a name already taken gets a `-2`, `-3`... suffix, and files
//! are created with `create_new` so even a race cannot clobber one.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::cells::{format_args_inline, result_text};
use crate::protocol::{
    AgentMode, AiMessage, DecisionStats, Message, Phase, Plan, StepState, ToolCall, ToolCalling, ToolStatus,
};
use crate::protocol::{Settings, StopReason};

/// What the session did, by conversation (Ctrl+N starts a new one) and question.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SessionLog {
    /// Memory notes the engine injected, each once however many questions used it.
    pub memory_notes: Vec<String>,
    pub conversations: Vec<ConversationLog>,
    /// Errors outside any question (a model that failed to load, an export...).
    pub errors: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ConversationLog {
    pub questions: Vec<QuestionLog>,
}

/// One question and what answering it took.
#[derive(Clone, Debug, Serialize)]
pub struct QuestionLog {
    pub question: String,
    pub profile: String,
    pub mode: AgentMode,
    pub messages: Vec<Message>,
    pub decisions: Vec<DecisionRecord>,
    pub plans: Vec<PlanRecord>,
    pub tool_runs: Vec<ToolRunRecord>,
    pub final_answer: Option<String>,
    pub stop_reason: Option<StopReason>,
    pub errors: Vec<String>,
}

impl SessionLog {
    pub fn new_conversation(&mut self) {
        if self.conversations.last().is_none_or(|c| !c.questions.is_empty()) {
            self.conversations.push(ConversationLog::default());
        }
    }

    pub fn start_question(&mut self, question: String, profile: String, mode: AgentMode) {
        if self.conversations.is_empty() {
            self.conversations.push(ConversationLog::default());
        }
        if let Some(conversation) = self.conversations.last_mut() {
            conversation.questions.push(QuestionLog {
                question,
                profile,
                mode,
                messages: Vec::new(),
                decisions: Vec::new(),
                plans: Vec::new(),
                tool_runs: Vec::new(),
                final_answer: None,
                stop_reason: None,
                errors: Vec::new(),
            });
        }
    }

    /// The question being answered, or the last one.
    pub fn current(&mut self) -> Option<&mut QuestionLog> {
        self.conversations.last_mut().and_then(|c| c.questions.last_mut())
    }

    /// Every question of the session, in order.
    pub fn questions(&self) -> impl Iterator<Item = &QuestionLog> {
        self.conversations.iter().flat_map(|c| c.questions.iter())
    }

    pub fn add_notes(&mut self, notes: &[String]) {
        for note in notes {
            if !self.memory_notes.contains(note) {
                self.memory_notes.push(note.clone());
            }
        }
    }

    /// An error of the running question, or of the session when none runs.
    pub fn error(&mut self, message: String, in_question: bool) {
        match self.current() {
            Some(q) if in_question => q.errors.push(message),
            _ => self.errors.push(message),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct DecisionRecord {
    pub turn: usize,
    pub profile: String,
    pub phase: Phase,
    pub tool_calling: ToolCalling,
    /// The decoding the decision really had: constrained only when a grammar was applied.
    pub decoding: crate::brain::Decoding,
    pub ai: AiMessage,
    pub raw: String,
    pub stats: DecisionStats,
    pub warnings: Vec<String>,
    /// Set on the question's last decision: why the question stopped there.
    pub stop_reason: Option<StopReason>,
}

impl DecisionRecord {
    /// What the decision led to: `2 tool calls`, `plan`, `answer`.
    pub fn outcome(&self) -> String {
        match (self.ai.tool_calls.len(), self.phase) {
            (0, Phase::Plan) if self.ai.content.trim().is_empty() => "plan".into(),
            (0, _) => "answer".into(),
            (1, _) => "1 tool call".into(),
            (n, _) => format!("{n} tool calls"),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct PlanRecord {
    pub plan: Plan,
    pub states: Vec<StepState>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ToolRunRecord {
    pub call: ToolCall,
    pub status: ToolStatus,
    pub duration_ms: f64,
}

#[derive(Serialize)]
struct ExportFile<'a> {
    exported_at: String,
    settings: &'a Settings,
    #[serde(flatten)]
    log: &'a SessionLog,
}

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot create {dir}: {source}")]
    CreateDir { dir: String, source: std::io::Error },
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("cannot encode the session as JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("no free file name for session-{stamp} in {dir}")]
    NoFreeName { stamp: String, dir: String },
}

/// Writes the JSON and Markdown files; returns their paths.
pub fn write_session(
    dir: &Path,
    settings: &Settings,
    log: &SessionLog,
    now: chrono::DateTime<chrono::Local>,
) -> Result<(PathBuf, PathBuf), ExportError> {
    std::fs::create_dir_all(dir)
        .map_err(|source| ExportError::CreateDir { dir: dir.display().to_string(), source })?;
    let stamp = now.format("%Y%m%d-%H%M%S").to_string();
    let file = ExportFile { exported_at: now.to_rfc3339(), settings, log };
    let json = serde_json::to_string_pretty(&file)?;
    let markdown = to_markdown(settings, log, &now.format("%Y-%m-%d %H:%M:%S").to_string());
    for n in 1..1000 {
        let stem = if n == 1 { format!("session-{stamp}") } else { format!("session-{stamp}-{n}") };
        let json_path = dir.join(format!("{stem}.json"));
        let md_path = dir.join(format!("{stem}.md"));
        if json_path.exists() || md_path.exists() {
            continue;
        }
        let Some(mut json_file) = create_new(&json_path)? else { continue };
        let Some(mut md_file) = create_new(&md_path)? else {
            // Someone took the Markdown name in between: leave this stem, try the next.
            drop(json_file);
            let _ = std::fs::remove_file(&json_path);
            continue;
        };
        json_file
            .write_all(json.as_bytes())
            .map_err(|source| ExportError::Write { path: json_path.display().to_string(), source })?;
        md_file
            .write_all(markdown.as_bytes())
            .map_err(|source| ExportError::Write { path: md_path.display().to_string(), source })?;
        return Ok((json_path, md_path));
    }
    Err(ExportError::NoFreeName { stamp, dir: dir.display().to_string() })
}

/// `Ok(None)` when the file already exists.
fn create_new(path: &Path) -> Result<Option<std::fs::File>, ExportError> {
    match std::fs::OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
        Err(source) => Err(ExportError::Write { path: path.display().to_string(), source }),
    }
}

/// The session as a person reads it: the settings at export, the memory notes once,
/// then each conversation's questions with their messages, plans, tool runs and decisions.
pub fn to_markdown(settings: &Settings, log: &SessionLog, when: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# b4 session {when}\n");
    let _ = writeln!(
        md,
        "Settings at export:\n\n- profile: `{}`\n- mode: `{}`\n- tool passing: `{}`\n- decoding: `{}`\n- step mode: {}\n",
        settings.profile,
        settings.mode.as_str(),
        settings.tool_calling.as_str(),
        settings.decoding.as_str(),
        if settings.step_mode { "on" } else { "off" }
    );
    if !log.memory_notes.is_empty() {
        let _ = writeln!(md, "## Memory notes\n");
        for note in &log.memory_notes {
            let _ = writeln!(md, "- {note}");
        }
        md.push('\n');
    }
    for (c, conversation) in log.conversations.iter().enumerate() {
        let _ = writeln!(md, "## Conversation {}\n", c + 1);
        for (q, question) in conversation.questions.iter().enumerate() {
            question_markdown(&mut md, q + 1, question);
        }
    }
    if !log.errors.is_empty() {
        let _ = writeln!(md, "## Other errors\n");
        for e in &log.errors {
            let _ = writeln!(md, "- {e}");
        }
        md.push('\n');
    }
    md
}

fn question_markdown(md: &mut String, n: usize, q: &QuestionLog) {
    let stop = q.stop_reason.map_or("unfinished", |r| r.describe());
    let _ = writeln!(md, "### Question {n} · `{}` · `{}` · {stop}\n", q.profile, q.mode.as_str());
    let _ = writeln!(md, "{}\n", quote(&q.question));
    for message in &q.messages {
        match message {
            Message::System { content } => {
                let _ = writeln!(md, "<details><summary>system</summary>\n\n```text\n{content}\n```\n</details>\n");
            }
            // The question is quoted above.
            Message::User { content } if *content == q.question => {}
            Message::User { content } => {
                let _ = writeln!(md, "**user**\n\n{}\n", quote(content));
            }
            Message::Assistant(ai) if ai.tool_calls.is_empty() => {
                let _ = writeln!(md, "**assistant**\n\n{}\n", quote(&ai.content));
            }
            Message::Assistant(ai) => {
                let _ = writeln!(md, "**assistant** → tool calls\n");
                for call in &ai.tool_calls {
                    let _ = writeln!(md, "- `{}` `{}` {}", call.id, call.name, format_args_inline(&call.args));
                }
                md.push('\n');
            }
            Message::Tool(tm) => {
                let status = match tm.status {
                    ToolStatus::Success => "success",
                    ToolStatus::Error => "error",
                };
                let _ = writeln!(md, "**tool** `{}` ({}, {status})\n", tm.name, tm.tool_call_id);
                let _ = writeln!(md, "```text\n{}\n```\n", result_text(tm));
            }
        }
    }
    for plan in &q.plans {
        let _ = writeln!(md, "#### Plan\n");
        if !plan.plan.reasoning.is_empty() {
            let _ = writeln!(md, "{}\n", quote(&plan.plan.reasoning));
        }
        for (step, state) in plan.plan.plan.iter().zip(plan.states.iter()) {
            let tool = step.tool_call.as_ref().map(|c| format!(" (`{}`)", c.name)).unwrap_or_default();
            let _ = writeln!(md, "{}. [{}] {}{tool}", step.step, step_state_name(*state), step.description);
        }
        md.push('\n');
    }
    if !q.tool_runs.is_empty() {
        let _ = writeln!(md, "#### Tool runs\n\n| id | tool | status | ms |\n|---|---|---|---|");
        for run in &q.tool_runs {
            let status = if run.status == ToolStatus::Success { "done" } else { "failed" };
            let _ = writeln!(md, "| {} | {} | {status} | {:.1} |", run.call.id, run.call.name, run.duration_ms);
        }
        md.push('\n');
    }
    if !q.decisions.is_empty() {
        let _ = writeln!(
            md,
            "#### Decisions\n\n| turn | profile | phase | tool passing | decoding | prompt | reused | generated | tok/s | ms | mask | led to |\n|---|---|---|---|---|---|---|---|---|---|---|---|"
        );
        for d in &q.decisions {
            let led_to = match d.stop_reason {
                Some(reason) if reason != StopReason::FinalAnswer => format!("{} · {}", d.outcome(), reason.describe()),
                _ => d.outcome(),
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {} | {led_to} |",
                d.turn,
                d.profile,
                super::raw::phase_name(d.phase),
                d.tool_calling.as_str(),
                d.decoding.as_str(),
                d.stats.prompt_tokens,
                d.stats.reused_tokens,
                d.stats.generated_tokens,
                super::raw::tok_s(&d.stats).unwrap_or_else(|| "–".into()),
                d.stats.latency_ms,
                if d.decoding == crate::brain::Decoding::Constrained { super::raw::mask_line(&d.stats) } else { "–".into() }
            );
        }
        md.push('\n');
        for d in &q.decisions {
            let _ = writeln!(md, "##### Raw output, turn {}\n\n```text\n{}\n```\n", d.turn, d.raw);
            for w in &d.warnings {
                let _ = writeln!(md, "- warning: {w}");
            }
            if !d.warnings.is_empty() {
                md.push('\n');
            }
        }
    }
    if !q.errors.is_empty() {
        let _ = writeln!(md, "#### Errors\n");
        for e in &q.errors {
            let _ = writeln!(md, "- {e}");
        }
        md.push('\n');
    }
}

fn quote(text: &str) -> String {
    text.lines().map(|l| format!("> {l}")).collect::<Vec<_>>().join("\n")
}

pub fn step_state_name(state: StepState) -> &'static str {
    match state {
        StepState::Pending => "pending",
        StepState::Running => "running",
        StepState::Done => "done",
        StepState::Failed => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brain::Decoding;
    use chrono::TimeZone;

    fn settings() -> Settings {
        Settings {
            profile: "mock".into(),
            mode: AgentMode::React,
            tool_calling: ToolCalling::PromptJson,
            step_mode: false,
            decoding: Decoding::Free,
            strategy: Default::default(),
            prompt_cache: false,
        }
    }

    #[test]
    fn an_export_never_overwrites_either_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let when = chrono::Local.with_ymd_and_hms(2026, 7, 1, 9, 30, 0).single().expect("a local time");
        // Someone's file already holds the first Markdown name.
        std::fs::write(dir.path().join("session-20260701-093000.md"), "mine").expect("write");
        let mut log = SessionLog::default();
        log.start_question("你好".into(), "mock".into(), AgentMode::React);
        let (json, md) = write_session(dir.path(), &settings(), &log, when).expect("export");
        assert_eq!(json, dir.path().join("session-20260701-093000-2.json"));
        assert_eq!(md, dir.path().join("session-20260701-093000-2.md"));
        let (json3, _) = write_session(dir.path(), &settings(), &log, when).expect("export");
        assert_eq!(json3, dir.path().join("session-20260701-093000-3.json"));
        assert_eq!(std::fs::read_to_string(dir.path().join("session-20260701-093000.md")).expect("read"), "mine");
        assert!(!dir.path().join("session-20260701-093000.json").exists());
        let value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(json).expect("read")).expect("json");
        assert_eq!(value["conversations"][0]["questions"][0]["question"], "你好");
        assert_eq!(value["settings"]["profile"], "mock");
    }
}
