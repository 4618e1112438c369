//! The `b4` command line. Flags keep the seeds' snake_case spellings (`--model_config`,
//! `--tools_schema`, ...); kebab-case works too. Errors reach one place, `main`, as one
//! line with their context.

mod bench;
mod bench_conversations;
mod chat;
mod decide;
mod interrupt;
mod misc;
mod models;
mod perf;
mod tui;

use crate::text::elide_middle;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use crate::brain::generate::prompt_store;
use crate::brain::{Decoding, ModelConfig, Strategy};
use crate::protocol::{AgentMode, ToolCalling};

/// The shipped configuration, used when `configs/model.yaml` is not in the current dir.
const DEFAULT_CONFIG: &str = include_str!("../../configs/model.yaml");

#[derive(Parser, Debug)]
#[command(name = "b4", version, about = "A whole LLM agent in one terminal process", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Cmd>,
    /// Neither read nor write prompt prefixes kept on disk ($B4_PROMPT_CACHE_DIR, else the
    /// per-user cache folder b4-agent/prompts); also $B4_NO_PROMPT_CACHE=1.
    #[arg(long = "no-prompt-cache", alias = "no_prompt_cache", global = true)]
    pub no_prompt_cache: bool,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// One decision: messages + tools schema -> AIMessage (writes raw_model_output.json, ai_message.json).
    Decide(decide::DecideArgs),
    /// Ask a question and run the whole agent loop headless.
    Chat(chat::ChatArgs),
    /// Print the tools schema built from the skills.
    Schema,
    /// Run one tool call through the tool layer and print its ToolMessage.
    Tool(misc::ToolArgs),
    /// Read the agent's memory files.
    Memory(misc::MemoryArgs),
    /// List model profiles and fetch their pinned model files.
    Models(models::ModelsArgs),
    /// The live terminal UI (also what `b4` with no command opens).
    Tui(tui::TuiArgs),
    /// Run bench cases (or BFCL question files) and score validity, correctness and speed; or whole conversations (--conversations).
    Bench(bench::BenchArgs),
    /// Load, prefill, decode and memory figures of model profiles (and llama.cpp's, when installed).
    Perf(perf::PerfArgs),
}

/// The decision mode of `b4 decide`, as in the seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum DecideMode {
    Mock,
    PromptJson,
    PlanExecute,
}

/// Options every model-using command shares.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ModelOpts {
    /// Model profiles file.
    #[arg(long = "model_config", alias = "model-config", value_name = "FILE")]
    pub model_config: Option<PathBuf>,
    /// A named profile from the config's `models:` (default: its `model:` section).
    #[arg(long = "model_name", alias = "model-name", value_name = "NAME")]
    pub model_name: Option<String>,
    /// How tools reach the model (default: the config's tool_calling.mode).
    #[arg(long = "tool_calling", alias = "tool-calling", value_enum)]
    pub tool_calling: Option<ToolCalling>,
    /// Free or schema-constrained decoding (default: the profile's).
    #[arg(long, value_enum)]
    pub decoding: Option<Decoding>,
    /// How a fresh request's decision is asked under prompt_json (default: the profile's).
    #[arg(long, value_enum)]
    pub strategy: Option<Strategy>,
}

impl ModelOpts {
    pub fn load_config(&self) -> Result<ModelConfig> {
        load_config(self.model_config.as_deref())
    }
}

/// The given config, else `configs/model.yaml` here, else the shipped one.
pub fn load_config(path: Option<&Path>) -> Result<ModelConfig> {
    if let Some(path) = path {
        return Ok(ModelConfig::load(path)?);
    }
    let here = Path::new("configs/model.yaml");
    if here.exists() {
        return Ok(ModelConfig::load(here)?);
    }
    let dir = tempfile::tempdir().context("cannot create a temp dir")?;
    let path = dir.path().join("model.yaml");
    std::fs::write(&path, DEFAULT_CONFIG).context("cannot write the default config")?;
    let mut config = ModelConfig::load(&path)?;
    config.source = None;
    Ok(config)
}

/// The settings a session starts with and the config its engine runs on, built once for
/// `b4 chat` and `b4 tui` from the chosen profile and the command line: the way of passing
/// tools and the decoding given there win over the config's; the engine finds profiles by
/// name, so the default `model:` section becomes one too.
pub fn session(
    mut config: ModelConfig,
    profile: &crate::brain::Profile,
    model: &ModelOpts,
    mode: crate::protocol::AgentMode,
    step_mode: bool,
) -> (ModelConfig, crate::protocol::Settings) {
    let settings = crate::protocol::Settings {
        profile: profile.name.clone(),
        mode,
        tool_calling: model.tool_calling.unwrap_or(config.tool_calling.mode),
        decoding: model.decoding.unwrap_or(profile.decoding),
        strategy: model.strategy.unwrap_or(profile.strategy),
        step_mode,
        prompt_cache: crate::brain::generate::prompt_store::current().is_some(),
    };
    config.models.entry(profile.name.clone()).or_insert_with(|| profile.clone());
    for p in config.models.values_mut() {
        if let Some(decoding) = model.decoding {
            p.decoding = decoding;
        }
        if let Some(strategy) = model.strategy {
            p.strategy = strategy;
        }
    }
    (config, settings)
}

/// The workspace root: `--workspace DIR` or the current directory.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct WorkspaceOpt {
    /// Directory all file access is confined to (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
}

impl WorkspaceOpt {
    pub fn open(&self) -> Result<crate::skills::Workspace> {
        let root = match &self.workspace {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().context("cannot read the current directory")?,
        };
        crate::skills::Workspace::new(&root).with_context(|| format!("workspace {}", root.display()))
    }
}

pub fn agent_mode_default() -> AgentMode {
    AgentMode::React
}

/// Runs the command line; the exit code says how it went.
pub fn main() -> Result<ExitCode> {
    let cli = Cli::parse();
    // `b4 perf` measures the prefill itself: never from disk.
    let off_by_env = std::env::var_os("B4_NO_PROMPT_CACHE").is_some_and(|v| !v.is_empty() && v != "0");
    if !cli.no_prompt_cache && !off_by_env && !matches!(cli.command, Some(Cmd::Perf(_))) {
        prompt_store::enable(Some(prompt_store::PromptStore::new(prompt_store::default_dir())));
    }
    match cli.command {
        Some(Cmd::Decide(args)) => decide::run(args),
        Some(Cmd::Chat(args)) => chat::run(args),
        Some(Cmd::Schema) => misc::schema(),
        Some(Cmd::Tool(args)) => misc::tool(args),
        Some(Cmd::Memory(args)) => misc::memory(args),
        Some(Cmd::Bench(args)) => bench::run(args),
        Some(Cmd::Tui(args)) => tui::run(args),
        Some(Cmd::Models(args)) => models::run(args),
        Some(Cmd::Perf(args)) => perf::run(args),
        None => tui::run(tui::TuiArgs::default()),
    }
}

pub use models::ensure_model;

/// A multi-threaded tokio runtime for commands that run the engine.
pub fn tokio_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("cannot start the async runtime")
}

/// The one line `main` prints for an error: the context chain with each cause once (an
/// error whose message already quotes its source, like "x: cannot read: No such file", is
/// not followed by that source again), on one line, with over-long words shortened.
pub fn error_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    shorten(&line)
}

/// Longest word (a path, a value) shown whole in an error line.
const MAX_WORD: usize = 200;
/// Longest error line.
const MAX_LINE: usize = 2000;

/// `text` on one line, each word over 200 characters (a 100k-character path given by the
/// user) cut to its start and end around a `…`, and the whole to at most 2000 characters.
pub fn shorten(text: &str) -> String {
    let one_line = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
    let words = one_line.split(' ').map(|w| elide_middle(w, MAX_WORD)).collect::<Vec<_>>().join(" ");
    elide_middle(&words, MAX_LINE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{file}: cannot read: {source}")]
    struct Quoting {
        file: String,
        source: std::io::Error,
    }

    #[test]
    fn a_cause_already_quoted_by_its_error_is_not_repeated() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let err = anyhow::Error::new(Quoting { file: "m.json".into(), source: io }).context("workspace w");
        assert_eq!(error_line(&err), "workspace w: m.json: cannot read: entity not found");
        let plain = anyhow::Error::new(std::io::Error::from(std::io::ErrorKind::NotFound)).context("m.json: cannot read");
        assert_eq!(error_line(&plain), "m.json: cannot read: entity not found");
    }

    #[test]
    fn long_words_keep_their_ends_and_lines_stay_one() {
        let path = format!("/tmp/{}/m.json", "d".repeat(100_000));
        let err = anyhow::anyhow!("{path}: cannot read:\n  File name too long (os error 36)");
        let line = error_line(&err);
        let word = line.split(' ').next().unwrap();
        assert_eq!(word.chars().count(), MAX_WORD);
        assert!(word.starts_with("/tmp/ddd") && word.ends_with("ddd/m.json:") && word.contains('…'), "{word}");
        assert!(line.ends_with(" cannot read: File name too long (os error 36)"), "{line}");
        assert_eq!(shorten(&"word ".repeat(1000)).chars().count(), MAX_LINE);
        assert_eq!(shorten("short and sweet"), "short and sweet");
    }
}
