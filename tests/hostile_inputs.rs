//! The `b4` binary given files and signals that could turn it against its user: endless
//! or huge input files and FIFOs are refused at once with one line, an error states each
//! cause once and does not echo a huge path back, and SIGINT / SIGTERM stop `chat` and
//! `bench` cleanly (exit 130 / 143, one line saying so, no temp files left). All on the
//! mock brain; a mock profile with `mock_delay_ms` keeps a run going until it is signalled.
#![cfg(target_os = "linux")]

mod common;
use common::copy_dir;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Generous: the machine running the tests may be busy with other builds.
const TIMEOUT: Duration = Duration::from_secs(300);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A finished run: exit code (None when killed by a signal) and its output.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// A running `b4` whose stderr lines arrive on a channel as they are printed.
struct Running {
    child: Child,
    lines: Receiver<String>,
    stderr: Vec<String>,
    stdout: std::thread::JoinHandle<String>,
}

fn start(args: &[&str]) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_b4"))
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let err = child.stderr.take().unwrap();
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Running { child, lines, stderr: Vec::new(), stdout }
}

impl Running {
    /// Waits for a stderr line that starts with `prefix` (the run has reached that point).
    fn wait_for_line(&mut self, prefix: &str) {
        let deadline = Instant::now() + TIMEOUT;
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let found = line.starts_with(prefix);
                    self.stderr.push(line);
                    if found {
                        return;
                    }
                }
                Err(_) => break,
            }
        }
        let _ = self.child.kill();
        panic!("no stderr line starting with {prefix:?}; stderr so far:\n{}", self.stderr.join("\n"));
    }

    fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, signal) }, 0);
    }

    /// Waits for the exit, killing the child (and failing) after the timeout.
    fn finish(mut self) -> Run {
        let deadline = Instant::now() + TIMEOUT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("b4 did not exit in time; stderr so far:\n{}", self.stderr.join("\n"));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        self.stderr.extend(self.lines.iter());
        Run { code: status.code(), stdout: self.stdout.join().unwrap(), stderr: self.stderr.join("\n") }
    }
}

fn run(args: &[&str]) -> Run {
    start(args).finish()
}

/// The one `error:` line of a run that failed with exit code 2.
fn error_line(args: &[&str]) -> String {
    let out = run(args);
    assert_eq!(out.code, Some(2), "{args:?}: {}{}", out.stdout, out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let lines: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(lines.len(), 1, "{args:?}: {}", out.stderr);
    lines[0].to_string()
}

/// A file of `len` zero bytes that takes no disk space.
fn sparse_file(path: &Path, len: u64) -> String {
    std::fs::File::create(path).unwrap().set_len(len).unwrap();
    path.to_str().unwrap().to_string()
}

fn fifo(path: &Path) -> String {
    let name = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
    path.to_str().unwrap().to_string()
}

const MESSAGES: &str = "data/messages/messages_with_tool.json";
const TOOLS: &str = "data/messages/tools_schema_basic.json";

/// `b4 decide --mode mock` with one of its three input files replaced.
fn decide(messages: &str, tools: &str, config: &str, outdir: &Path) -> Vec<String> {
    let outdir = outdir.to_str().unwrap();
    ["decide", "--messages", messages, "--tools_schema", tools, "--model_config", config, "--mode", "mock", "--outdir", outdir]
        .map(str::to_string)
        .to_vec()
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Peak resident memory of any child this test process has waited for, in bytes.
fn children_peak_rss() -> u64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) }, 0);
    usage.ru_maxrss as u64 * 1024
}

#[test]
fn endless_and_huge_input_files_are_refused_at_once_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let big = sparse_file(&dir.path().join("big.json"), 25 << 20);
    let big_yaml = sparse_file(&dir.path().join("big.yaml"), 9 << 20);
    let config = "configs/model.yaml";
    let zero = "/dev/zero";
    let cases = [
        (decide(zero, TOOLS, config, &out), "error: /dev/zero: a character device cannot be a messages file (only regular files are read)".to_string()),
        (decide(MESSAGES, zero, config, &out), "error: /dev/zero: a character device cannot be a tools schema (only regular files are read)".into()),
        (decide(MESSAGES, TOOLS, zero, &out), "error: /dev/zero: a character device cannot be a model config (only regular files are read)".into()),
        (decide(&big, TOOLS, config, &out), format!("error: {big}: 25 MiB is over the 8 MiB limit for a messages file")),
        (decide(MESSAGES, &big, config, &out), format!("error: {big}: 25 MiB is over the 8 MiB limit for a tools schema")),
        (decide(MESSAGES, TOOLS, &big_yaml, &out), format!("error: {big_yaml}: 9 MiB is over the 4 MiB limit for a model config")),
        (
            ["bench", "--mode", "mock", "--bfcl", zero, "--outdir", out.to_str().unwrap()].map(str::to_string).to_vec(),
            "error: /dev/zero: a character device cannot be a BFCL file (only regular files are read)".into(),
        ),
    ];
    for (command, expected) in &cases {
        let started = Instant::now();
        assert_eq!(&error_line(&args(command)), expected);
        assert!(started.elapsed() < Duration::from_secs(120), "{command:?} took {:?}", started.elapsed());
    }
    assert!(!out.exists(), "nothing is written for a refused input");
    // Nothing read them: the largest of these runs stayed far below the 25 MiB file.
    assert!(children_peak_rss() < 200 << 20, "peak {} bytes", children_peak_rss());
}

#[test]
fn fifos_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let pipe = fifo(&dir.path().join("pipe.json"));
    let config = "configs/model.yaml";
    let cases = [
        (decide(&pipe, TOOLS, config, &out), "messages file"),
        (decide(MESSAGES, &pipe, config, &out), "tools schema"),
        (decide(MESSAGES, TOOLS, &pipe, &out), "model config"),
    ];
    for (command, what) in &cases {
        let expected = format!("error: {pipe}: a FIFO (named pipe) cannot be a {what} (only regular files are read)");
        assert_eq!(error_line(&args(command)), expected);
    }
}

#[test]
fn an_error_states_its_cause_once() {
    let missing = error_line(&["bench", "--mode", "mock", "--cases_dir", "/definitely/missing", "--outdir", "/tmp/unused"]);
    assert_eq!(missing, "error: /definitely/missing: cannot read: No such file or directory (os error 2)");
    let messages = error_line(&["decide", "--messages", "nope.json", "--tools_schema", TOOLS, "--mode", "mock", "--outdir", "/tmp/unused"]);
    assert_eq!(messages, "error: nope.json: cannot read: No such file or directory (os error 2)");
}

#[test]
fn a_huge_path_is_shortened_in_the_error_line() {
    let path = format!("/tmp/{}.json", "p".repeat(100_000));
    let line = error_line(&["decide", "--messages", &path, "--tools_schema", TOOLS, "--mode", "mock", "--outdir", "/tmp/unused"]);
    assert!(line.chars().count() < 300, "{} characters", line.chars().count());
    assert!(line.starts_with("error: /tmp/pppp") && line.contains("pppp…pppp"), "{line}");
    assert!(line.ends_with("pppp.json: cannot read: File name too long (os error 36)"), "{line}");
}

/// A model config whose mock takes ten minutes a decision unless cancelled.
fn slow_mock_config(dir: &Path) -> String {
    let path = dir.join("slow.yaml");
    std::fs::write(&path, "model:\n  name: mock\n  backend: mock\nmodels:\n  mock:\n    backend: mock\n    mock_delay_ms: 600000\n").unwrap();
    path.to_str().unwrap().to_string()
}

/// Names of all files under `dir`, relative, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = walk(dir).iter().map(|p| p.strip_prefix(dir).unwrap().display().to_string()).collect();
    names.sort();
    names
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

fn chat_is_stopped_by(signal: i32, code: i32) {
    let dir = tempfile::tempdir().unwrap();
    let config = slow_mock_config(dir.path());
    let ws = dir.path().join("ws");
    for sub in ["docs", "memory"] {
        copy_dir(&repo().join(sub), &ws.join(sub));
    }
    let memory_before = files_under(&ws.join("memory"));
    let ws = ws.to_str().unwrap();
    let mut chat = start(&["chat", "--model_config", &config, "--model_name", "mock", "--workspace", ws, "计算 3.14 * 5"]);
    chat.wait_for_line("decision 1");
    chat.signal(signal);
    let out = chat.finish();
    assert_eq!(out.code, Some(code), "{}", out.stderr);
    let last = out.stderr.lines().last().unwrap_or_default();
    assert_eq!(last, "interrupted: the question stopped after 0 decisions; nothing half-written", "{}", out.stderr);
    assert!(out.stdout.contains("stopped: cancelled"), "{}", out.stdout);
    assert_eq!(files_under(&Path::new(ws).join("memory")), memory_before);
}

#[test]
fn sigint_stops_a_chat_run_cleanly() {
    chat_is_stopped_by(libc::SIGINT, 130);
}

#[test]
fn sigterm_stops_a_chat_run_cleanly() {
    chat_is_stopped_by(libc::SIGTERM, 143);
}

fn bench_is_stopped_by(signal: i32, code: i32) {
    let dir = tempfile::tempdir().unwrap();
    let config = slow_mock_config(dir.path());
    let outdir = dir.path().join("out");
    let out = outdir.to_str().unwrap();
    let args = ["bench", "--model_config", &config, "--mode", "mock", "--cases_dir", "data/bench_cases", "--tools_schema", TOOLS];
    let mut bench = start(&[&args[..], &["--repeat", "50", "--outdir", out]].concat());
    bench.wait_for_line("bench: ");
    bench.signal(signal);
    let run = bench.finish();
    assert_eq!(run.code, Some(code), "{}", run.stderr);
    let planned = std::fs::read_dir(repo().join("data/bench_cases")).unwrap().count() * 50;
    let last = run.stderr.lines().last().unwrap_or_default();
    let expected = format!("interrupted: stopped after 0 of {planned} decisions; the report covers those 0; nothing half-written");
    assert_eq!(last, expected, "{}", run.stderr);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(outdir.join("report.json")).unwrap()).unwrap();
    assert_eq!((report["interrupted"].as_bool(), report["completed"].as_u64()), (Some(true), Some(0)));
    assert_eq!(files_under(&outdir), vec!["report.json", "report.md"]);
}

#[test]
fn sigint_stops_a_bench_run_and_still_writes_its_report() {
    bench_is_stopped_by(libc::SIGINT, 130);
}

#[test]
fn sigterm_stops_a_bench_run_and_still_writes_its_report() {
    bench_is_stopped_by(libc::SIGTERM, 143);
}
