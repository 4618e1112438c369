//! `b4 perf`: load, prefill, decode and memory figures for model profiles, side by side
//! with llama.cpp on the same token ids when the `llama_cpp` Python package is installed.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::brain::Backend;
use crate::perf::{self, PerfOptions, PerfReport, ProfilePerf};
use crate::skills;
use crate::tools::ToolLayer;

#[derive(clap::Args, Debug)]
pub struct PerfArgs {
    /// Model profiles file.
    #[arg(long = "model_config", alias = "model-config", value_name = "FILE")]
    pub model_config: Option<PathBuf>,
    /// Profiles to measure (several values or the flag repeated; default: the config's `model:`).
    #[arg(long = "model_name", alias = "model-name", value_name = "NAME", num_args = 1.., value_delimiter = ',')]
    pub model_name: Vec<String>,
    /// Length of the long prompt in tokens (the short prompt is cut to it too).
    #[arg(long = "prompt-tokens", alias = "prompt_tokens", value_name = "N", default_value_t = 1000)]
    pub prompt_tokens: usize,
    /// Tokens generated per run (the first from the prefill, the rest decoded).
    #[arg(long = "gen-tokens", alias = "gen_tokens", value_name = "N", default_value_t = 32)]
    pub gen_tokens: usize,
    /// Runs per prompt; the figures are medians.
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub repeat: usize,
    /// Also write the report as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Skip measuring the machine's read bandwidth (a 1 GiB read loop, about a second).
    #[arg(long = "no-read-loop", alias = "no_read_loop")]
    pub no_read_loop: bool,
    /// Measure ours only, even when llama_cpp is installed.
    #[arg(long = "no-llama-cpp", alias = "no_llama_cpp")]
    pub no_llama_cpp: bool,
}

pub fn run(args: PerfArgs) -> Result<ExitCode> {
    let options = PerfOptions { prompt_tokens: args.prompt_tokens, gen_tokens: args.gen_tokens, repeat: args.repeat };
    options.check()?;
    let config = super::load_config(args.model_config.as_deref())?;
    let names: Vec<Option<String>> =
        if args.model_name.is_empty() { vec![None] } else { args.model_name.iter().cloned().map(Some).collect() };
    let mut profiles = Vec::new();
    for name in &names {
        let profile = config.profile(name.as_deref())?;
        if profile.backend == Backend::Mock {
            return Err(perf::PerfError::Mock(profile.name.clone()).into());
        }
        if profile.backend == Backend::OpenAi {
            return Err(perf::PerfError::Served(profile.name.clone()).into());
        }
        profiles.push(profile);
    }
    let dir = tempfile::tempdir().context("cannot create a temp dir")?;
    let tools = ToolLayer::new(skills::all(), skills::Workspace::new(dir.path())?, Duration::from_secs(1)).schema();

    let llama_cpp_missing = if args.no_llama_cpp { Some("llama.cpp skipped (--no-llama-cpp)".to_string()) } else { perf::llama_cpp_missing() };
    let threads = perf::physical_cores();
    let read_gb_s = if args.no_read_loop {
        None
    } else {
        eprintln!("b4 perf: read bandwidth ({threads} threads) ...");
        Some(perf::read_bandwidth_gb_s(threads))
    };
    let mut report = PerfReport {
        date: chrono::Local::now().format("%Y-%m-%d %H:%M:%S %Z").to_string(),
        machine: perf::Machine { cpu: perf::cpu_description(), threads, read_gb_s },
        load_before: perf::load_average(),
        load_after: String::new(),
        options: options.clone(),
        llama_cpp_missing: llama_cpp_missing.clone(),
        profiles: Vec::new(),
    };
    for profile in &profiles {
        super::ensure_model(profile)?;
        eprintln!("b4 perf: {} ...", profile.name);
        let (ours, reuse, prompts, path) = perf::measure_ours(profile, &tools, &options)?;
        let llama_cpp = match llama_cpp_missing {
            None => {
                eprintln!("b4 perf: {} through llama.cpp ...", profile.name);
                Some(perf::measure_llama(&path, &prompts, &options, Duration::from_secs(1800))?)
            }
            Some(_) => None,
        };
        let ratios = llama_cpp.as_ref().map(|l| perf::ratios(&ours, l)).unwrap_or_default();
        let peak_rss_ratio = llama_cpp.as_ref().filter(|l| l.peak_rss_mib > 0.0).map(|l| ours.peak_rss_mib / l.peak_rss_mib);
        report.profiles.push(ProfilePerf {
            profile: profile.name.clone(),
            model: path.display().to_string(),
            ours,
            reuse,
            llama_cpp,
            decode_bytes: perf::decode_bytes_per_token(&path),
            ratios,
            peak_rss_ratio,
        });
    }
    report.load_after = perf::load_average();
    println!("{}", perf::render_table(&report));
    println!("load average before / after: {} / {}", report.load_before, report.load_after);
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
