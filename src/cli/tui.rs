//! `b4` / `b4 tui`: the engine on the chosen profile, shown live.

use std::process::ExitCode;

use anyhow::Result;

use super::{ModelOpts, WorkspaceOpt};
use crate::protocol::AgentMode;
use crate::runtime::engine::{self, EngineConfig};

#[derive(clap::Args, Debug, Default)]
pub struct TuiArgs {
    #[command(flatten)]
    pub model: ModelOpts,
    #[command(flatten)]
    pub workspace: WorkspaceOpt,
    /// Start in react or plan_execute mode.
    #[arg(long, value_enum, default_value = "react")]
    pub mode: AgentMode,
    /// Start with step mode on (pause before each decision and tool batch).
    #[arg(long)]
    pub step: bool,
}

pub fn run(args: TuiArgs) -> Result<ExitCode> {
    let config = args.model.load_config()?;
    let profile = config.profile(args.model.model_name.as_deref())?;
    super::ensure_model(&profile)?;
    let workspace = args.workspace.open()?;
    let memory_dir = Some(workspace.root.join("memory"));
    let (config, settings) = super::session(config, &profile, &args.model, args.mode, args.step);
    let profiles = crate::tui::profiles::entries(&config);
    let rt = super::tokio_runtime()?;
    rt.block_on(async {
        let handle = engine::spawn(EngineConfig { model_config: config, workspace, memory_dir, settings: settings.clone() });
        crate::tui::run(handle.commands, handle.events, settings, profiles).await
    })?;
    Ok(ExitCode::SUCCESS)
}
