//! `b4 decide`: one decision, as the seeds' `b4_local_agent_llm.py` made it.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::interrupt::{self, Interrupt};
use super::{DecideMode, ModelOpts};
use crate::brain::{make_brain, Backend, Decision, DecisionRequest};
use crate::protocol::{load_messages, Message, Phase};
use crate::tools::spec::ToolSpec;

#[derive(clap::Args, Debug)]
pub struct DecideArgs {
    #[command(flatten)]
    pub model: ModelOpts,
    /// JSON array of messages.
    #[arg(long, value_name = "FILE")]
    pub messages: PathBuf,
    /// Tools schema (OpenAI function format), e.g. data/messages/tools_schema_basic.json.
    #[arg(long = "tools_schema", alias = "tools-schema", value_name = "FILE")]
    pub tools_schema: PathBuf,
    /// mock: the deterministic mock brain; prompt_json: one ReAct decision;
    /// plan_execute: a plan (no tool results yet) or the next step (after results).
    #[arg(long, value_enum, default_value = "prompt_json")]
    pub mode: DecideMode,
    /// Where raw_model_output.json and ai_message.json go.
    #[arg(long, value_name = "DIR")]
    pub outdir: PathBuf,
}

/// Reads a tools schema file: a JSON array of `{"type":"function","function":{...}}` (or
/// bare `{name, description, parameters}`), each of which must read as a tool spec.
pub fn load_tools_schema(path: &Path) -> Result<Vec<Value>> {
    let text = crate::input::read_text(path, crate::input::TOOLS_SCHEMA)?;
    let value: Value = serde_json::from_str(&text).with_context(|| format!("{}: not valid JSON", path.display()))?;
    let Value::Array(tools) = value else {
        anyhow::bail!("{}: expected a JSON array of tools", path.display());
    };
    if let Err(e) = ToolSpec::parse_all(&tools) {
        anyhow::bail!("{}: {e}", path.display());
    }
    Ok(tools)
}

pub fn run(args: DecideArgs) -> Result<ExitCode> {
    let config = args.model.load_config()?;
    let messages = load_messages(&args.messages)?;
    let tools = load_tools_schema(&args.tools_schema)?;
    let mut profile = match args.mode {
        DecideMode::Mock => config.profile(Some("mock")).or_else(|_| -> Result<_> {
            Ok(crate::brain::Profile { name: "mock".into(), backend: Backend::Mock, ..Default::default() })
        })?,
        _ => config.profile(args.model.model_name.as_deref())?,
    };
    if let Some(decoding) = args.model.decoding {
        profile.decoding = decoding;
    }
    if let Some(strategy) = args.model.strategy {
        profile.strategy = strategy;
    }
    eprintln!("model: {}", profile.label());
    let has_results = messages.iter().any(|m| matches!(m, Message::Tool(_)));
    let phase = match args.mode {
        DecideMode::PlanExecute if has_results => Phase::Step,
        DecideMode::PlanExecute => Phase::Plan,
        _ => Phase::React,
    };
    let tool_calling = args.model.tool_calling.unwrap_or(config.tool_calling.mode);
    let request = DecisionRequest {
        messages,
        tools,
        phase,
        tool_calling,
        exclusivity: config.runtime.exclusivity,
        decoding: args.model.decoding,
        strategy: args.model.strategy,
        more_calls_bias: None,
        answer_bias: None,
        name_calibration: None,
    };
    let mut brain = make_brain(&profile)?;
    let signals = interrupt::signal_runtime()?;
    let interrupt = Interrupt::watch(&signals, || {})?;
    let decided = brain.decide(&request, &mut |_| {}, &interrupt.cancel);
    if interrupt.received() {
        return Ok(interrupt.exit("the decision was stopped; no output was written"));
    }
    let decision = decided?;
    write_outputs(&args.outdir, &decision, args.mode)?;
    println!("{}", serde_json::to_string_pretty(&decision.ai.to_json())?);
    if interrupt.received() {
        return Ok(interrupt.exit("after writing both output files; nothing half-written"));
    }
    if !decision.valid() {
        eprintln!("error: the decision is invalid: {}", decision.report.error.as_deref().unwrap_or("unknown reason"));
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// The `raw_model_output.json` record of one decision: the raw text, the prompt and the
/// plan, with every field of the brain's report (phase, way, decoding, format, status...).
pub fn raw_record(decision: &Decision, mode: &str) -> Value {
    let mut record = json!({
        "raw_text": decision.raw_output,
        "mode": mode,
        "plan": decision.plan,
        "prompt": decision.prompt,
    });
    if let (Some(record), Ok(Value::Object(report))) = (record.as_object_mut(), serde_json::to_value(&decision.report)) {
        record.extend(report);
    }
    record
}

fn write_outputs(outdir: &Path, decision: &Decision, mode: DecideMode) -> Result<()> {
    std::fs::create_dir_all(outdir).with_context(|| format!("{}: cannot create", outdir.display()))?;
    let mode = match mode {
        DecideMode::Mock => "mock",
        DecideMode::PromptJson => "prompt_json",
        DecideMode::PlanExecute => "plan_execute",
    };
    write_json(&outdir.join("raw_model_output.json"), &raw_record(decision, mode))?;
    write_json(&outdir.join("ai_message.json"), &decision.ai.to_json())
}

/// Writes pretty JSON atomically (temp file + rename).
pub fn write_json(path: &Path, value: &Value) -> Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    interrupt::write_atomic(path, text.as_bytes())
}
