//! `b4 models list` and `b4 models fetch [NAME]`, and the fetch-on-first-use of the app.

use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::brain::fetch::{self, FetchOptions, FileCheck};
use crate::brain::{Backend, Profile};

#[derive(clap::Args, Debug)]
pub struct ModelsArgs {
    #[command(subcommand)]
    pub action: ModelsAction,
    #[arg(long = "model_config", alias = "model-config", value_name = "FILE", global = true)]
    pub model_config: Option<std::path::PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
pub enum ModelsAction {
    /// Each profile, its model file (present, missing, or corrupt: a pinned file is checked
    /// against its sha256 when it changed since its last check) and its size.
    List,
    /// Download a pinned model (a download name such as qwen2.5-coder-0.5b, or a profile
    /// name); default: the default profile's.
    Fetch { name: Option<String> },
}

pub fn run(args: ModelsArgs) -> Result<ExitCode> {
    let config = super::load_config(args.model_config.as_deref())?;
    match args.action {
        ModelsAction::List => {
            println!("models folder: {}", fetch::models_dir().display());
            println!("{:<12} {}", "default", describe(&config.model));
            for p in config.models.values() {
                println!("{:<12} {}", p.name, describe(p));
            }
        }
        ModelsAction::Fetch { name } => {
            let asset_name = match name {
                Some(n) if fetch::find_asset(&n).is_ok() => n,
                Some(n) => config.profile(Some(&n))?.fetch.with_context(|| format!("profile {n} has no pinned download"))?,
                None => config.model.fetch.clone().context("the default profile has no pinned download")?,
            };
            let asset = fetch::find_asset(&asset_name)?;
            let done = fetch::fetch(asset, &fetch::models_dir(), &FetchOptions::default())?;
            if done.already_present {
                println!("{} already present: {}", asset.name, done.path.display());
            } else {
                println!("{} fetched and verified: {}", asset.name, done.path.display());
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `present`, `missing` or `corrupt`, the size and the path. A pinned file is checked
/// against its sha256, which hashes it again when it changed since its last check.
fn describe(p: &Profile) -> String {
    if p.backend == Backend::Mock {
        return "mock brain (no model file)".into();
    }
    if p.backend == Backend::OpenAi {
        let at = p.base_url.as_deref().unwrap_or("(no base_url)");
        return format!("served    {} at {at}", p.model.as_deref().unwrap_or("(no model)"));
    }
    let path = fetch::resolve_model_path(p);
    let fix = |name: &str| format!("b4 models fetch {name}");
    let Ok(meta) = std::fs::metadata(&path) else {
        let hint = match p.fetch.as_deref() {
            Some(f) => format!("  ({})", fix(f)),
            None => "  (no download: put your GGUF file or Hugging Face folder there)".into(),
        };
        return format!("missing  {}{hint}", path.display());
    };
    let there = format!("{:>7.1} MB  {}", meta.len() as f64 / 1e6, path.display());
    let Some(asset) = fetch::pinned_asset(p) else { return format!("present  {there}") };
    match fetch::check_file(asset, &path, true) {
        Ok(FileCheck::Verified) => format!("present  {there}"),
        Ok(FileCheck::Missing) => format!("missing  {}  ({})", path.display(), fix(asset.name)),
        Ok(bad) => format!("corrupt  {there}  ({}; {})", bad.describe(asset), fix(asset.name)),
        Err(e) => format!("unreadable  {there}  ({e})"),
    }
}

/// Fetches a profile's pinned model when its file is missing, so the app's first start
/// needs no separate step; checks a present one, with a progress bar while the terminal is
/// still ours, so that a corrupt file stops here with the fix.
pub fn ensure_model(profile: &Profile) -> Result<()> {
    if matches!(profile.backend, Backend::Mock | Backend::OpenAi) {
        return Ok(());
    }
    if fetch::resolve_model_path(profile).exists() {
        fetch::checked_model_path(profile, true)?;
        return Ok(());
    }
    let Some(asset_name) = &profile.fetch else {
        return Ok(()); // Not ours to fetch: loading will say the file is missing.
    };
    let asset = fetch::find_asset(asset_name)?;
    eprintln!("first start: fetching {} (pinned, verified) ...", asset.name);
    fetch::fetch(asset, &fetch::models_dir(), &FetchOptions::default())?;
    Ok(())
}
