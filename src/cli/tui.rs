//! `b4` / `b4 tui`: the engine on the chosen profile, shown live.

use std::process::ExitCode;

use anyhow::Result;

use super::{ModelOpts, WorkspaceOpt};
use crate::protocol::AgentMode;
use crate::runtime::engine::{self, EngineConfig, EngineHandle};

/// How long quitting waits for the engine to cancel what it runs.
const QUIT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

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
        let commands = handle.commands.clone();
        let shown = crate::tui::run(handle.commands, handle.events, settings, profiles).await;
        // Ctrl+C during a decision: the engine cancels it before the process ends (the
        // runtime would otherwise wait for the whole decision, tens of seconds).
        if !EngineHandle::shut_down(&commands, handle.finished, QUIT_WAIT).await {
            eprintln!("warning: the engine did not stop within {} s; quitting anyway", QUIT_WAIT.as_secs());
        }
        shown
    })?;
    // A decision that ignored the cancel is not waited for.
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    Ok(ExitCode::SUCCESS)
}
