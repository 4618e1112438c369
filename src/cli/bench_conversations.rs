//! `b4 bench --conversations QUESTIONS.json`: every conversation of a set asked through the
//! agent loop `b4 chat` runs, under every setting (profiles x tool-calling ways x
//! decodings), on a fresh copy of the set's workspace; each final answer scored. Ctrl+C
//! (or SIGTERM) cancels the current question and still writes the report of the answered
//! ones; a second one quits at once.
//!
//! Files under `--outdir`: `report.json`, `report.md`, and each conversation's transcript
//! as `<setting>/<conversation>.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};

use super::bench::{command_line, grid, now, write_text, BenchArgs};
use super::decide::write_json;
use super::interrupt::Interrupt;
use crate::bench::conversations::{self, build_report, render_markdown, render_table, ChatObserver, ChatPlan, QuestionJob, QuestionRecord};
use crate::bench::report::ReportMeta;
use crate::bench::runner::safe_name;
use crate::bench::{BenchMode, Setting};
use crate::brain::make_brain;
use crate::protocol::{AgentMode, Message};
use crate::runtime::SharedBrain;

pub fn run(args: &BenchArgs, questions: &Path, outdir: &Path) -> Result<ExitCode> {
    if args.repeat > 1 {
        anyhow::bail!("--repeat repeats single decisions; with --conversations each question is asked once");
    }
    let config = super::load_config(args.model_config.as_deref())?;
    let tools: Vec<String> = crate::skills::all().iter().map(|s| s.manifest().name.clone()).collect();
    let set = conversations::load(questions, &tools)?.select(&args.ids, args.limit)?;
    let (profiles, settings) = grid(args, &config)?;
    let plan = ChatPlan {
        set,
        settings,
        mode: match args.mode {
            BenchMode::PlanExecute => AgentMode::PlanExecute,
            BenchMode::Mock | BenchMode::PromptJson => AgentMode::React,
        },
        max_turns: config.runtime.max_turns,
        exclusivity: config.runtime.exclusivity,
        tool_timeout: Duration::from_secs(config.runtime.tool_timeout_secs.max(1)),
    };
    let mut brains: BTreeMap<String, SharedBrain> = BTreeMap::new();
    for profile in &profiles {
        eprintln!("model: {}", profile.label());
        let brain = make_brain(profile).with_context(|| format!("cannot start profile {}", profile.name))?;
        brains.insert(profile.name.clone(), Arc::new(Mutex::new(brain)));
    }
    std::fs::create_dir_all(outdir).with_context(|| format!("{}: cannot create", outdir.display()))?;
    let rt = super::tokio_runtime()?;
    // The signal's flag stops the run, cancelling the question it is in.
    let interrupt = Interrupt::watch(&rt, || {})?;
    eprintln!(
        "bench: {} conversations ({} questions) x {} settings = {} questions",
        plan.set.conversations.len(),
        plan.set.questions(),
        plan.settings.len(),
        plan.questions()
    );

    let started_at = now();
    let mut observer = Files { outdir: outdir.to_path_buf() };
    let outcome = rt.block_on(conversations::run(&plan, &brains, &mut observer, &interrupt.cancel));
    let chat_run = outcome?;

    let meta = ReportMeta { command: command_line(), started_at, finished_at: now() };
    let report = build_report(&plan, &chat_run, meta, args.mode.as_str());
    write_json(&outdir.join("report.json"), &serde_json::to_value(&report)?)?;
    write_text(&outdir.join("report.md"), &render_markdown(&report))?;
    print!("{}", render_table(&report));
    eprintln!("report: {}", outdir.join("report.md").display());
    if interrupt.received() {
        let done = chat_run.records.len();
        let what = format!("stopped after {done} of {} questions; the report covers those {done}; nothing half-written", plan.questions());
        return Ok(interrupt.exit(&what));
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints a line per question and writes each conversation's transcript.
struct Files {
    outdir: PathBuf,
}

impl ChatObserver for Files {
    fn finished(&mut self, job: &QuestionJob<'_>, record: &QuestionRecord) -> Result<()> {
        let tools: Vec<&str> = record.tools.iter().map(|t| t.name.as_str()).collect();
        let tools = if tools.is_empty() { "no tool".to_string() } else { tools.join(", ") };
        let verdict = if record.passed { "PASS".to_string() } else { format!("FAIL · {}", record.reasons.join("; ")) };
        eprintln!(
            "[{}/{}] {} {}#{}: {verdict} · {tools} · {:.1} s",
            job.index + 1,
            job.total,
            job.setting.name,
            job.conversation.id,
            job.turn,
            record.latency_ms / 1e3
        );
        Ok(())
    }

    fn transcript(&mut self, setting: &Setting, conversation: &conversations::Conversation, messages: &[Message]) -> Result<()> {
        let dir = self.outdir.join(safe_name(&setting.name));
        std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
        let path = dir.join(format!("{}.json", safe_name(&conversation.id)));
        write_json(&path, &serde_json::to_value(messages)?)
    }
}
