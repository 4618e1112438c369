//! `b4 chat`: the whole loop headless. Prints a transcript, or with `--json` the engine's
//! events one per line.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use serde_json::Value;

use super::interrupt::Interrupt;
use super::{ModelOpts, WorkspaceOpt};
use crate::protocol::{AgentMode, Command, Event, StopReason, ToolStatus};
use crate::runtime::engine::{self, EngineConfig};

#[derive(clap::Args, Debug)]
pub struct ChatArgs {
    #[command(flatten)]
    pub model: ModelOpts,
    #[command(flatten)]
    pub workspace: WorkspaceOpt,
    /// react: decide, act, decide again; plan_execute: plan first, then run the steps.
    #[arg(long, value_enum, default_value = "react")]
    pub mode: AgentMode,
    /// Print the events as JSON lines.
    #[arg(long)]
    pub json: bool,
    /// Print the model's text as it streams.
    #[arg(long)]
    pub stream: bool,
    /// Run without reading or writing memory/.
    #[arg(long = "no_memory", alias = "no-memory")]
    pub no_memory: bool,
    /// The question; more than one are turns of one conversation, each asked when the one
    /// before has finished.
    #[arg(required = true, num_args = 1..)]
    pub questions: Vec<String>,
}

pub fn run(args: ChatArgs) -> Result<ExitCode> {
    let config = args.model.load_config()?;
    let profile = config.profile(args.model.model_name.as_deref())?;
    super::ensure_model(&profile)?;
    let workspace = args.workspace.open()?;
    let memory_dir = (!args.no_memory).then(|| workspace.root.join("memory"));
    let (config, settings) = super::session(config, &profile, &args.model, args.mode, false);
    let rt = super::tokio_runtime()?;
    let mut handle = {
        let _entered = rt.enter();
        engine::spawn(EngineConfig { model_config: config, workspace, memory_dir, settings })
    };
    let mut questions = args.questions.clone().into_iter();
    if let Some(question) = questions.next() {
        let _ = handle.commands.send(Command::Ask { question });
    }
    // After the question, so the engine sees the cancel after it (a new question resets it).
    let commands = handle.commands.clone();
    let interrupt = Interrupt::watch(&rt, move || {
        let _ = commands.send(Command::Cancel);
    })?;
    let cancelled = interrupt.cancel.clone();
    let (reason, decisions) = rt.block_on(async {
        let mut printer = Printer { json: args.json, stream: args.stream, streaming: false };
        let (mut reason, mut decisions) = (None, 0);
        while let Some(event) = handle.events.recv().await {
            printer.print(&event);
            match event {
                Event::Decided { .. } => decisions += 1,
                Event::Finished { reason: r } => {
                    // Every turn must end in an answer for the chat to succeed.
                    if reason.is_none() || r != StopReason::FinalAnswer {
                        reason = Some(r);
                    }
                    match questions.next().filter(|_| !cancelled.load(std::sync::atomic::Ordering::SeqCst)) {
                        Some(question) => {
                            let _ = handle.commands.send(Command::Ask { question });
                        }
                        None => {
                            let _ = handle.commands.send(Command::Quit);
                        }
                    }
                }
                _ => {}
            }
        }
        (reason, decisions)
    });
    if interrupt.received() {
        let plural = if decisions == 1 { "" } else { "s" };
        return Ok(interrupt.exit(&format!("the question stopped after {decisions} decision{plural}; nothing half-written")));
    }
    Ok(match reason {
        Some(StopReason::FinalAnswer) => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

struct Printer {
    json: bool,
    stream: bool,
    streaming: bool,
}

impl Printer {
    fn print(&mut self, event: &Event) {
        if self.json {
            if let Ok(line) = serde_json::to_string(event) {
                println!("{line}");
            }
            return;
        }
        if self.streaming && !matches!(event, Event::Token { .. }) {
            println!();
            self.streaming = false;
        }
        match event {
            Event::Started { question, mode, profile } => {
                println!("question ({}, {profile}): {question}", mode.as_str())
            }
            Event::MemoryLoaded { notes } => println!("memory: {}", notes.join(", ")),
            Event::ProfileLoading { name } => eprintln!("loading {name} ..."),
            Event::ProfileReady { name, load_ms } => eprintln!("loaded {name} in {:.1} s", load_ms / 1e3),
            Event::TurnStarted { turn, phase, tool_calling } => {
                eprintln!("decision {turn} ({phase:?}, {})", tool_calling.as_str())
            }
            Event::Token { text } => {
                if self.stream {
                    print!("{text}");
                    let _ = std::io::stdout().flush();
                    self.streaming = true;
                }
            }
            Event::Decided { ai, report, .. } => {
                let stats = &report.stats;
                for w in &report.warnings {
                    eprintln!("warning: {w}");
                }
                if ai.tool_calls.is_empty() {
                    println!("assistant: {}", ai.content);
                } else {
                    for call in &ai.tool_calls {
                        println!("assistant -> {}({})", call.name, Value::Object(call.args.clone()));
                    }
                }
                if stats.served() {
                    eprintln!(
                        "  [prompt {} tok, reused {} (server cache), generated {}; first token {:.0} ms, decode {:.1} tok/s; {:.0} ms]",
                        stats.prompt_shown(),
                        stats.reused_tokens,
                        stats.generated_tokens,
                        stats.ttft_ms,
                        stats.decode_tok_s,
                        stats.latency_ms
                    );
                } else if stats.prompt_tokens > 0 {
                    eprintln!(
                        "  [prompt {} tok, reused {} ({} from disk), generated {} ({} fast-forwarded); prefill {:.1} tok/s, decode {:.1} tok/s; {:.0} ms]",
                        stats.prompt_tokens,
                        stats.reused_tokens,
                        stats.prompt_cache_tokens,
                        stats.generated_tokens,
                        stats.fast_forwarded,
                        stats.prefill_tok_s,
                        stats.decode_tok_s,
                        stats.latency_ms
                    );
                }
            }
            Event::PlanCreated { plan } => {
                println!("plan: {}", plan.reasoning);
                for step in &plan.plan {
                    let call = step.tool_call.as_ref().map(|c| format!(" -> {}", c.name)).unwrap_or_default();
                    println!("  {}. {}{call}", step.step, step.description);
                }
            }
            Event::ToolFinished { call, result, duration_ms } => {
                let (mark, text) = match result.status {
                    ToolStatus::Success => ("ok", result.output_text().unwrap_or_default()),
                    ToolStatus::Error => ("failed", result.error_text().unwrap_or_default()),
                };
                println!("tool {} [{}] {mark} in {duration_ms:.0} ms: {}", call.name, call.id, preview(&text, 160));
            }
            Event::FinalAnswer { content } => println!("\nfinal answer:\n{content}"),
            Event::Finished { reason } => println!("\n{}", reason.describe()),
            Event::Error { message } => eprintln!("error: {}", super::shorten(message)),
            Event::Paused { what, .. } => eprintln!("paused before {what}"),
            // Progress is for screens; the transcript says when loading starts and ends.
            Event::MessageAppended { .. }
            | Event::ProfileProgress { .. }
            | Event::Prefill { .. }
            | Event::StepState { .. }
            | Event::ToolStarted { .. }
            | Event::Settings(_) => {}
        }
    }
}

/// The first `max` characters on one line.
pub fn preview(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}
