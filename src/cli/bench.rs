//! `b4 bench`: the seeds' `b4_batch_benchmark.py`, scored for correctness, over a grid of
//! settings (profiles x tool-calling ways x decodings), with a progress bar. Ctrl+C (or
//! SIGTERM) cancels the current decision and still writes the report of the finished ones;
//! a second one quits at once.
//!
//! Files under `--outdir`: `report.json`, `report.md`, and for each setting and case
//! `<setting>/<case>/raw_model_output.json` and `ai_message.json` (in `run_K/` below the
//! case with `--repeat` above 1).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use super::decide::{load_tools_schema, raw_record, write_json};
use super::interrupt::{self, Interrupt};
use crate::bench::report::{render_markdown, render_table, Outcome, ReportMeta};
use crate::bench::runner::safe_name;
use crate::bench::case::FunctionOrder;
use crate::bench::{bfcl, build_report, case, compare, BenchMode, BenchPlan, CaseRecord, Job, Observer, Setting};
use crate::brain::{make_brain, Backend, Brain, Decision, Decoding, Profile, Strategy};
use crate::protocol::ToolCalling;

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Model profiles file.
    #[arg(long = "model_config", alias = "model-config", value_name = "FILE")]
    pub model_config: Option<PathBuf>,
    /// Profiles to compare side by side (several values or the flag repeated; default: the config's `model:`).
    #[arg(long = "model_name", alias = "model-name", value_name = "NAME", num_args = 1.., value_delimiter = ',')]
    pub model_name: Vec<String>,
    /// Directory of case files (`*.json`: a messages array, or {id, messages, tools?, expected}).
    #[arg(long = "cases_dir", alias = "cases-dir", value_name = "DIR")]
    pub cases_dir: Option<PathBuf>,
    /// Tools schema for cases that bring no tools of their own.
    #[arg(long = "tools_schema", alias = "tools-schema", value_name = "FILE")]
    pub tools_schema: Option<PathBuf>,
    /// What each decision is asked for.
    #[arg(long, value_enum, default_value = "prompt_json")]
    pub mode: BenchMode,
    /// How tools reach the model; `both` runs each way (default: the config's).
    #[arg(long = "tool_calling", alias = "tool-calling", value_enum)]
    pub tool_calling: Option<ToolCallingChoice>,
    /// Free or schema-constrained decoding; `both` runs each (default: the profile's).
    #[arg(long, value_enum)]
    pub decoding: Option<DecodingChoice>,
    /// Decision strategies to compare side by side (several values or comma-separated;
    /// default: the profile's).
    #[arg(long, value_enum, num_args = 1.., value_delimiter = ',')]
    pub strategy: Vec<Strategy>,
    /// Runs of every case per setting; the report gives the per-case agreement.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Only the first N cases (after --ids).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Only these case ids (several values, or comma-separated).
    #[arg(long, value_name = "ID", num_args = 1.., value_delimiter = ',')]
    pub ids: Vec<String>,
    /// A Berkeley Function Calling Leaderboard questions file (JSON lines, as published).
    #[arg(long, value_name = "QUESTIONS.json")]
    pub bfcl: Option<PathBuf>,
    /// Its possible-answers file (JSON lines: id, ground_truth).
    #[arg(long = "bfcl-answers", alias = "bfcl_answers", value_name = "ANSWERS.json", requires = "bfcl")]
    pub bfcl_answers: Option<PathBuf>,
    /// A conversation set (`questions.json` naming its workspace folder): each question is
    /// asked through the whole agent loop on a copy of the workspace and its final answer
    /// scored (see docs/bench/README.md).
    #[arg(long, value_name = "QUESTIONS.json", conflicts_with_all = ["cases_dir", "bfcl", "tools_schema"])]
    pub conversations: Option<PathBuf>,
    /// The order each case's functions are offered in: as given, reversed, or rotated (the
    /// first moved to the end); a small model favours the first plausible one.
    #[arg(long = "function_order", alias = "function-order", value_enum, default_value = "given", conflicts_with = "conversations")]
    pub function_order: FunctionOrder,
    /// Compare two finished runs (their folders or report.json files) case by case: what
    /// each got right, gained and lost, whether that is more than chance, the same raw text
    /// or not. Runs nothing.
    #[arg(long, num_args = 2, value_names = ["BEFORE", "AFTER"], conflicts_with_all = ["cases_dir", "bfcl", "conversations", "tools_schema", "outdir"])]
    pub compare: Vec<PathBuf>,
    /// Where the report and the per-case files go.
    #[arg(long, value_name = "DIR", required_unless_present = "compare")]
    pub outdir: Option<PathBuf>,
}

/// `--tool_calling`: one way, or both side by side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum ToolCallingChoice {
    PromptJson,
    Builtin,
    Both,
}

impl ToolCallingChoice {
    fn expand(self) -> Vec<ToolCalling> {
        match self {
            ToolCallingChoice::PromptJson => vec![ToolCalling::PromptJson],
            ToolCallingChoice::Builtin => vec![ToolCalling::Builtin],
            ToolCallingChoice::Both => vec![ToolCalling::PromptJson, ToolCalling::Builtin],
        }
    }
}

/// `--decoding`: one, or both side by side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum DecodingChoice {
    Free,
    Constrained,
    Both,
}

impl DecodingChoice {
    fn expand(self) -> Vec<Decoding> {
        match self {
            DecodingChoice::Free => vec![Decoding::Free],
            DecodingChoice::Constrained => vec![Decoding::Constrained],
            DecodingChoice::Both => vec![Decoding::Free, Decoding::Constrained],
        }
    }
}

pub fn run(args: BenchArgs) -> Result<ExitCode> {
    if let [before, after] = &args.compare[..] {
        let comparison = compare::compare(&compare::load(before)?, &compare::load(after)?)?;
        print!("{}", compare::render(&comparison));
        return Ok(ExitCode::SUCCESS);
    }
    let outdir = args.outdir.clone().context("give --outdir DIR")?;
    if let Some(questions) = &args.conversations {
        return super::bench_conversations::run(&args, questions, &outdir);
    }
    let config = super::load_config(args.model_config.as_deref())?;
    let cases = load_cases(&args)?;
    let tools = args.tools_schema.as_deref().map(load_tools_schema).transpose()?;
    let (profiles, settings) = grid(&args, &config)?;
    let plan = BenchPlan {
        mode: args.mode,
        settings,
        cases,
        repeat: args.repeat as usize,
        tools,
        exclusivity: config.runtime.exclusivity,
        function_order: args.function_order,
    };
    plan.check()?;
    let mut brains: BTreeMap<String, Box<dyn Brain>> = BTreeMap::new();
    for profile in &profiles {
        eprintln!("model: {}", profile.label());
        let brain = make_brain(profile).with_context(|| format!("cannot start profile {}", profile.name))?;
        brains.insert(profile.name.clone(), brain);
    }
    std::fs::create_dir_all(&outdir).with_context(|| format!("{}: cannot create", outdir.display()))?;
    // From here a signal stops the run and the report of what is done is still written.
    let signals = interrupt::signal_runtime()?;
    let interrupt = Interrupt::watch(&signals, || {})?;
    eprintln!(
        "bench: {} cases x {} settings x {} runs = {} decisions",
        plan.cases.len(),
        plan.settings.len(),
        plan.repeat,
        plan.decisions()
    );

    let started_at = now();
    let progress = progress_bar(plan.decisions() as u64);
    let mut observer = FileObserver { outdir: outdir.clone(), mode: args.mode, progress: progress.clone(), pieces: 0 };
    // One flag for both: stop before the next decision, and end the current one now.
    let outcome = crate::bench::run(&plan, &mut brains, &mut observer, &interrupt.cancel, &interrupt.cancel);
    progress.finish_and_clear();
    let bench_run = outcome?;

    let meta = ReportMeta { command: command_line(), started_at, finished_at: now() };
    let report = build_report(&plan, &bench_run, meta);
    write_json(&outdir.join("report.json"), &serde_json::to_value(&report)?)?;
    write_text(&outdir.join("report.md"), &render_markdown(&report))?;
    print!("{}", render_table(&report));
    eprintln!("report: {}", outdir.join("report.md").display());
    if interrupt.received() {
        let done = bench_run.records.len();
        let what = format!("stopped after {done} of {} decisions; the report covers those {done}; nothing half-written", plan.decisions());
        return Ok(interrupt.exit(&what));
    }
    Ok(ExitCode::SUCCESS)
}

/// The cases of `--cases_dir` then `--bfcl`, filtered by `--ids` and `--limit`.
fn load_cases(args: &BenchArgs) -> Result<Vec<case::BenchCase>> {
    if args.cases_dir.is_none() && args.bfcl.is_none() {
        anyhow::bail!("give --cases_dir DIR, --bfcl QUESTIONS.json, or both");
    }
    let mut cases = Vec::new();
    if let Some(dir) = &args.cases_dir {
        cases.extend(case::load_dir(dir)?);
    }
    if let Some(questions) = &args.bfcl {
        cases.extend(bfcl::load(questions, args.bfcl_answers.as_deref())?);
    }
    case::check_unique(&cases)?;
    Ok(case::select(cases, &args.ids, args.limit)?)
}

/// The profiles to compare and the settings grid: each profile x way of passing tools x
/// decoding (`--tool_calling` and `--decoding`, else the config's and the profile's).
pub(super) fn grid(args: &BenchArgs, config: &crate::brain::ModelConfig) -> Result<(Vec<Profile>, Vec<Setting>)> {
    let profiles = profiles(args, config)?;
    let tool_callings = match args.tool_calling {
        Some(choice) => choice.expand(),
        None => vec![config.tool_calling.mode],
    };
    let mut settings = Vec::new();
    for profile in &profiles {
        let decodings = match args.decoding {
            Some(choice) => choice.expand(),
            None => vec![profile.decoding],
        };
        let strategies = if args.strategy.is_empty() { vec![profile.strategy] } else { args.strategy.clone() };
        for tool_calling in &tool_callings {
            // The strategy shapes prompt_json decisions only: builtin runs once, with the first.
            let strategies = if *tool_calling == ToolCalling::PromptJson { &strategies[..] } else { &strategies[..1] };
            for strategy in strategies {
                let profile = Profile { strategy: *strategy, ..profile.clone() };
                for decoding in &decodings {
                    settings.push(Setting::new(profile.clone(), *tool_calling, *decoding));
                }
            }
        }
    }
    Ok((profiles, settings))
}

/// The profiles to compare: the mock for `--mode mock`, else each `--model_name` (or the default).
fn profiles(args: &BenchArgs, config: &crate::brain::ModelConfig) -> Result<Vec<Profile>> {
    if args.mode == BenchMode::Mock {
        if !args.model_name.is_empty() {
            eprintln!("note: --mode mock runs the mock profile; --model_name is ignored");
        }
        let mock = config
            .profile(Some("mock"))
            .unwrap_or_else(|_| Profile { name: "mock".into(), backend: Backend::Mock, ..Profile::default() });
        return Ok(vec![mock]);
    }
    if args.model_name.is_empty() {
        return Ok(vec![config.profile(None)?]);
    }
    let mut profiles: Vec<Profile> = Vec::new();
    for name in &args.model_name {
        if !profiles.iter().any(|p| &p.name == name) {
            profiles.push(config.profile(Some(name))?);
        }
    }
    Ok(profiles)
}

fn progress_bar(total: u64) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
    let bar = ProgressBar::with_draw_target(Some(total), target);
    let style = ProgressStyle::with_template("{spinner} [{elapsed_precise}] [{bar:30}] {pos}/{len} ETA {eta} {wide_msg}")
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// Writes each decision's files and moves the progress bar.
struct FileObserver {
    outdir: PathBuf,
    mode: BenchMode,
    progress: ProgressBar,
    /// Pieces of text streamed in the current decision.
    pieces: usize,
}

impl FileObserver {
    fn case_dir(&self, job: &Job<'_>) -> PathBuf {
        let dir = self.outdir.join(safe_name(&job.setting.name)).join(safe_name(&job.case.id));
        if job.repeat > 1 {
            dir.join(format!("run_{}", job.run))
        } else {
            dir
        }
    }
}

impl Observer for FileObserver {
    fn started(&mut self, job: &Job<'_>) {
        self.pieces = 0;
        self.progress.set_message(format!("{} · {}", job.setting.name, job.case.id));
    }

    fn token(&mut self, _text: &str) {
        self.pieces += 1;
        if self.pieces.is_multiple_of(8) {
            self.progress.set_message(format!("generating: {} tokens", self.pieces));
        }
    }

    fn finished(&mut self, job: &Job<'_>, record: &CaseRecord, decision: Option<&Decision>) -> Result<()> {
        let dir = self.case_dir(job);
        std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
        let profile = &job.setting.profile.name;
        match decision {
            Some(decision) => {
                write_json(&dir.join("raw_model_output.json"), &raw_record(decision, self.mode.as_str()))?;
                write_json(&dir.join("ai_message.json"), &decision.ai.to_json())?;
            }
            None => {
                let record = json!({"status": record.status, "error": record.error, "mode": self.mode.as_str(), "profile": profile});
                write_json(&dir.join("raw_model_output.json"), &record)?;
            }
        }
        self.progress.inc(1);
        if self.progress.is_hidden() {
            eprintln!("[{}/{}] {} {}: {}", job.index + 1, job.total, job.setting.name, job.case.id, describe(record));
        }
        Ok(())
    }
}

/// `ok · 1 call · 12.3 ms` and, when it failed, why.
fn describe(record: &CaseRecord) -> String {
    let calls = if record.tool_calls == 1 { "1 call".to_string() } else { format!("{} calls", record.tool_calls) };
    let mut text = format!("{} · {calls} · {:.1} ms", Outcome::of(record).word(), record.latency_ms);
    if let Some(reason) = record.reason.as_deref().or(record.error.as_deref()) {
        text.push_str(" · ");
        text.push_str(reason);
    }
    text
}

pub(super) fn now() -> String {
    chrono::Local::now().format("%Y-%m-%d %H:%M:%S %:z").to_string()
}

/// The command as typed, with `b4` for the program and quotes where needed.
pub(super) fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quoted = args.iter().map(|a| {
        if !a.is_empty() && a.chars().all(|c| c.is_alphanumeric() || "-_./=:,+@".contains(c)) {
            a.clone()
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    });
    std::iter::once("b4".to_string()).chain(quoted).collect::<Vec<_>>().join(" ")
}

/// Writes text atomically (temp file + rename).
pub(super) fn write_text(path: &Path, text: &str) -> Result<()> {
    interrupt::write_atomic(path, text.as_bytes())
}
