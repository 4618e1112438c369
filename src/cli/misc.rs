//! Small commands: `b4 schema`, `b4 tool`, `b4 memory`.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value;

use super::WorkspaceOpt;
use crate::memory::Memory;
use crate::protocol::{ToolCall, ToolStatus};
use crate::skills;
use crate::tools::ToolLayer;

pub fn schema() -> Result<ExitCode> {
    let dir = std::env::temp_dir();
    let layer = ToolLayer::new(skills::all(), skills::Workspace::new(&dir)?, Duration::from_secs(1));
    println!("{}", serde_json::to_string_pretty(&layer.schema())?);
    Ok(ExitCode::SUCCESS)
}

#[derive(clap::Args, Debug)]
pub struct ToolArgs {
    /// The tool's name, e.g. calculator.
    pub name: String,
    /// Its arguments as a JSON object, e.g. '{"expression":"2+2"}'.
    #[arg(default_value = "{}")]
    pub args: String,
    #[command(flatten)]
    pub workspace: WorkspaceOpt,
    /// Seconds before the call is abandoned.
    #[arg(long, default_value_t = 20)]
    pub timeout: u64,
}

pub fn tool(args: ToolArgs) -> Result<ExitCode> {
    let parsed: Value = serde_json::from_str(&args.args).context("arguments: not valid JSON")?;
    let Value::Object(map) = parsed else {
        anyhow::bail!("arguments: expected a JSON object, e.g. '{{\"path\":\"docs/agent_intro.txt\"}}'");
    };
    let layer = ToolLayer::new(skills::all(), args.workspace.open()?, Duration::from_secs(args.timeout.max(1)));
    let call = ToolCall { id: "call_001".into(), name: args.name, args: map };
    let outcome = super::tokio_runtime()?.block_on(layer.run(&call));
    println!("{}", serde_json::to_string_pretty(&outcome.result)?);
    Ok(match outcome.result.status {
        ToolStatus::Success => ExitCode::SUCCESS,
        ToolStatus::Error => ExitCode::from(1),
    })
}

#[derive(clap::Args, Debug)]
pub struct MemoryArgs {
    #[command(subcommand)]
    pub action: MemoryAction,
    #[command(flatten)]
    pub workspace: WorkspaceOpt,
}

#[derive(clap::Subcommand, Debug)]
pub enum MemoryAction {
    /// List the memory files.
    List,
    /// Print one memory file.
    Show { name: String },
}

pub fn memory(args: MemoryArgs) -> Result<ExitCode> {
    let ws = args.workspace.open()?;
    let memory = Memory::open(ws.root.join("memory"));
    match args.action {
        MemoryAction::List => {
            for note in memory.list()? {
                println!("{:<28} {:>8} B  {}", note.name, note.bytes, note.modified.map(|m| m.format("%Y-%m-%d %H:%M").to_string()).unwrap_or_default());
            }
        }
        MemoryAction::Show { name } => print!("{}", memory.show(&name)?),
    }
    Ok(ExitCode::SUCCESS)
}
