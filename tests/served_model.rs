//! The served-model backend (`backend: openai`) against a real OpenAI-compatible server:
//! llama.cpp's, through llama-cpp-python[server] (pinned; `scripts/llama_server_env.sh`
//! installs it into a cached environment and `scripts/test.sh` passes its python in
//! `$B4_LLAMA_SERVER_PYTHON`), on the default 0.5B GGUF. Each test starts its own server on
//! a free port of 127.0.0.1 and stops it at the end; they run one at a time (two cores).
//!
//! Run alone, without the environment, these tests say so and pass only when
//! `$B4_LLAMA_SERVER_PYTHON` is unset; `scripts/test.sh` always sets it, so in CI they run.
//! A few error cases need a server that misbehaves on purpose (503s, an HTML page): those
//! are plain sockets written here, answering over real TCP.

mod common;

use common::{tmux, wait_for, TmuxSession};

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use b4_agent::brain::{make_brain, BrainError, DecisionRequest, Decoding, Exclusivity, Profile, ServerKind, Stream};
use b4_agent::brain::config::Backend;
use b4_agent::protocol::{Message, Phase, ToolCalling};
use serde_json::Value;

/// The model name the test servers serve.
const ALIAS: &str = "qwen-0.5b";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The python of the llama.cpp server environment, or `None` (with a line saying why)
/// when this run has none.
fn server_python() -> Option<PathBuf> {
    if let Some(python) = std::env::var_os("B4_LLAMA_SERVER_PYTHON").filter(|p| !p.is_empty()) {
        let python = PathBuf::from(python);
        assert!(python.exists(), "$B4_LLAMA_SERVER_PYTHON is {}, which does not exist", python.display());
        return Some(python);
    }
    eprintln!("skipped: no llama.cpp server environment ($B4_LLAMA_SERVER_PYTHON unset; scripts/test.sh sets it)");
    None
}

/// One served test at a time: each server takes both cores.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A llama.cpp server on the default model, stopped when dropped.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start(python: &Path, api_key: Option<&str>) -> Server {
        let model = common::default_model_path();
        let port = free_port();
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let mut command = Command::new(python);
        command.args(["-m", "llama_cpp.server", "--host", "127.0.0.1", "--port", &port.to_string()]);
        command.args(["--model", model.to_str().unwrap(), "--model_alias", ALIAS, "--n_ctx", "4096", "--n_threads", "2"]);
        command.args(["--verbose", "false"]);
        if let Some(key) = api_key {
            command.args(["--api_key", key]);
        }
        let file = std::fs::File::create(&log).unwrap();
        let child = command.stdout(file.try_clone().unwrap()).stderr(file).stdin(Stdio::null()).spawn().unwrap();
        let mut server = Server { child, port, log, _dir: dir };
        server.wait_ready();
        server
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(180);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("the llama.cpp server exited ({status}):\n{}", std::fs::read_to_string(&self.log).unwrap_or_default());
            }
            if let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = write!(stream, "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
                let mut answer = String::new();
                let _ = stream.read_to_string(&mut answer);
                if answer.starts_with("HTTP/1.1 200") || answer.starts_with("HTTP/1.1 401") {
                    return;
                }
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("the llama.cpp server did not start within 180 s:\n{}", std::fs::read_to_string(&self.log).unwrap_or_default());
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A `backend: openai` profile for a server at `base_url`.
fn profile(base_url: &str, decoding: Decoding) -> Profile {
    Profile {
        name: "served".into(),
        backend: Backend::OpenAi,
        base_url: Some(base_url.into()),
        model: Some(ALIAS.into()),
        server: ServerKind::LlamaCppPython,
        decoding,
        request_timeout_s: 120,
        ..Profile::default()
    }
}

/// A model config file holding `profile` as its default and named `served`.
fn config_file(dir: &Path, yaml_profile: &str) -> PathBuf {
    let path = dir.join("model.yaml");
    let indented: String = yaml_profile.lines().map(|l| format!("    {l}\n")).collect();
    let top: String = yaml_profile.lines().map(|l| format!("  {l}\n")).collect();
    std::fs::write(&path, format!("model:\n{top}models:\n  served:\n{indented}")).unwrap();
    path
}

fn served_yaml(base_url: &str, extra: &str) -> String {
    format!("backend: openai\nbase_url: {base_url}\nmodel: {ALIAS}\nserver: llama_cpp_python\nrequest_timeout_s: 120\n{extra}")
}

fn b4(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_b4"));
    command.args(args).current_dir(repo());
    for (k, v) in envs {
        command.env(k, v);
    }
    command.output().unwrap()
}

/// `b4 decide` on the seeds' three-task request; the output folder's two files.
fn decide(config: &Path, way: &str, decoding: &str, out: &Path, envs: &[(&str, &str)]) -> (Output, Option<Value>, Option<Value>) {
    let output = b4(
        &[
            "decide", "--model_config", config.to_str().unwrap(), "--mode", "prompt_json", "--tool_calling", way, "--decoding", decoding,
            "--messages", "data/messages/messages_with_tool.json", "--tools_schema", "data/messages/tools_schema_basic.json",
            "--outdir", out.to_str().unwrap(),
        ],
        envs,
    );
    let read = |name: &str| std::fs::read_to_string(out.join(name)).ok().and_then(|t| serde_json::from_str(&t).ok());
    (output, read("ai_message.json"), read("raw_model_output.json"))
}

fn text(output: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// The one line `b4` printed on failure.
fn error_line(output: &Output) -> String {
    assert!(!output.status.success(), "expected a failure:\n{}", text(output));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    // `b4 decide` names the profile it loads first.
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("model: ")).collect();
    assert_eq!(lines.len(), 1, "one line, not a trace:\n{stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    lines[0].to_string()
}

#[test]
fn a_decision_both_ways_on_a_real_server() {
    let Some(python) = server_python() else { return };
    let _one = one_at_a_time();
    let server = Server::start(&python, None);
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(dir.path(), &served_yaml(&server.base_url(), ""));

    // builtin: the tools go in the request's `tools`; the server's template renders them and
    // the model answers in its native <tool_call> format, read by our parser chain.
    let (out, ai, raw) = decide(&config, "builtin", "free", &dir.path().join("builtin"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let (ai, raw) = (ai.unwrap(), raw.unwrap());
    assert_eq!(ai["tool_calls"][0]["name"], "file_reader", "{ai}");
    assert_eq!(ai["tool_calls"][0]["args"]["path"], "docs/agent_intro.txt", "{ai}");
    assert_eq!(raw["tool_calling"], "builtin", "{raw}");
    let request: Value = serde_json::from_str(raw["prompt"].as_str().unwrap()).unwrap();
    assert_eq!(request["tools"].as_array().map(Vec::len), Some(5), "builtin sends the tools schema: {request}");
    let stats = &raw["stats"];
    assert!(stats["generated_tokens"].as_u64().unwrap() > 5, "{stats}");
    assert!(stats["ttft_ms"].as_f64().unwrap() > 0.0 && stats["latency_ms"].as_f64().unwrap() >= stats["ttft_ms"].as_f64().unwrap(), "{stats}");

    // prompt_json: our envelope rules as plain chat messages, no `tools`; the answer is the envelope.
    let (out, ai, raw) = decide(&config, "prompt_json", "constrained", &dir.path().join("prompt_json"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let (ai, raw) = (ai.unwrap(), raw.unwrap());
    assert_eq!(raw["status"], "success", "{raw}");
    assert_eq!(raw["decoding"], "constrained", "{raw}");
    let request: Value = serde_json::from_str(raw["prompt"].as_str().unwrap()).unwrap();
    assert!(request.get("tools").is_none(), "{request}");
    assert!(request["messages"][0]["content"].as_str().unwrap().contains("Valid schema A"), "{request}");
    assert!(ai["content"].as_str().is_some(), "{ai}");
}

#[test]
fn constrained_decoding_is_done_by_the_server() {
    let Some(python) = server_python() else { return };
    let _one = one_at_a_time();
    let server = Server::start(&python, None);
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(dir.path(), &served_yaml(&server.base_url(), ""));
    // Free, the 0.5B wraps its envelope in a ```json fence (the parser chain copes);
    // constrained by the schema the server compiles, the raw text is the bare object.
    let (out, _, free) = decide(&config, "prompt_json", "free", &dir.path().join("free"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let free = free.unwrap();
    assert!(free["raw_text"].as_str().unwrap().trim_start().starts_with("```"), "{free}");
    let (out, _, constrained) = decide(&config, "prompt_json", "constrained", &dir.path().join("constrained"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let constrained = constrained.unwrap();
    let request: Value = serde_json::from_str(constrained["prompt"].as_str().unwrap()).unwrap();
    assert_eq!(request["response_format"]["type"], "json_object", "{request}");
    // The envelope's two forms: calls (content empty) or an answer (no calls).
    assert_eq!(request["response_format"]["schema"]["anyOf"].as_array().map(Vec::len), Some(2), "{request}");
    let envelope: Value = serde_json::from_str(constrained["raw_text"].as_str().unwrap().trim())
        .unwrap_or_else(|e| panic!("not bare JSON ({e}): {constrained}"));
    assert!(envelope["tool_calls"].is_array() && envelope["content"].is_string(), "{envelope}");
    assert_eq!(constrained["format"], "strict_json", "{constrained}");
    // builtin's native calls have no schema a llama.cpp server takes: free, and it says so.
    let (out, _, builtin) = decide(&config, "builtin", "constrained", &dir.path().join("builtin"), &[]);
    assert!(out.status.success(), "{}", text(&out));
    let builtin = builtin.unwrap();
    assert_eq!(builtin["decoding"], "free", "{builtin}");
    assert!(builtin["warnings"].to_string().contains("takes no grammar for builtin"), "{builtin}");
}

#[test]
fn chat_runs_the_tool_loop_on_a_served_model() {
    let Some(python) = server_python() else { return };
    let _one = one_at_a_time();
    let server = Server::start(&python, None);
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(dir.path(), &served_yaml(&server.base_url(), ""));
    let ws = tempfile::tempdir().unwrap();
    for sub in ["docs", "data"] {
        common::copy_dir(&repo().join(sub), &ws.path().join(sub));
    }
    let out = b4(
        &[
            "chat", "--json", "--no_memory", "--model_config", config.to_str().unwrap(), "--tool_calling", "builtin",
            "--workspace", ws.path().to_str().unwrap(), "计算 3.14 * 5 - 2.5",
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", text(&out));
    let events: Vec<Value> = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let tools: Vec<&Value> = events.iter().filter(|e| e["event"] == "tool_finished").collect();
    assert!(!tools.is_empty(), "no tool ran:\n{stdout}");
    assert_eq!(tools[0]["call"]["name"], "calculator", "{stdout}");
    assert_eq!(tools[0]["result"]["status"], "success", "{stdout}");
    let decided: Vec<&Value> = events.iter().filter(|e| e["event"] == "decided").collect();
    assert!(decided.len() >= 2, "a decision after the tool result:\n{stdout}");
    let last = decided.last().unwrap();
    assert!(last["ai"]["tool_calls"].as_array().is_none_or(|c| c.is_empty()), "{stdout}");
    assert!(last["ai"]["content"].as_str().unwrap().contains("13.2"), "the answer uses the result 13.2:\n{stdout}");
    assert!(last["report"]["stats"]["generated_tokens"].as_u64().unwrap() > 0, "{stdout}");
}

/// A long free answer, for streaming and cancelling.
fn story_request() -> DecisionRequest {
    DecisionRequest {
        messages: vec![Message::user("Write a long story, at least 400 words, about a lighthouse keeper.")],
        tools: Vec::new(),
        phase: Phase::React,
        tool_calling: ToolCalling::Builtin,
        exclusivity: Exclusivity::RetryThenContent,
        decoding: Some(Decoding::Free),
        strategy: None,
        more_calls_bias: None,
        answer_bias: None,
        name_calibration: None,
    }
}

#[test]
fn the_answer_streams_and_esc_closes_the_request() {
    let Some(python) = server_python() else { return };
    let _one = one_at_a_time();
    let mut server = Server::start(&python, None);
    let mut brain = make_brain(&profile(&server.base_url(), Decoding::Free)).unwrap();

    // Streaming: pieces arrive while the answer is still being written.
    let started = Instant::now();
    let mut arrivals = Vec::new();
    let decided = brain
        .decide(&story_request(), &mut |s| if let Stream::Text(t) = s { arrivals.push((started.elapsed(), t.to_string())) }, &AtomicBool::new(false))
        .unwrap();
    let total = started.elapsed();
    assert!(arrivals.len() > 50, "{} pieces", arrivals.len());
    assert!(arrivals[0].0 < total / 2, "the first piece came at {:?} of {:?}", arrivals[0].0, total);
    let streamed: String = arrivals.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(streamed, decided.raw_output, "the raw pane shows what the decision parsed");
    let full_tokens = decided.report.stats.generated_tokens;

    // Cancel after the first pieces: the call returns at once and the request is closed
    // (the server goes on to the next request instead of finishing this story).
    let cancel = Arc::new(AtomicBool::new(false));
    let mut pieces = 0;
    let started = Instant::now();
    let flag = cancel.clone();
    let result = brain.decide(
        &story_request(),
        &mut |s| {
            if let Stream::Text(_) = s {
                pieces += 1;
                if pieces == 5 {
                    flag.store(true, Ordering::Relaxed);
                }
            }
        },
        &cancel,
    );
    assert!(matches!(result, Err(BrainError::Cancelled)), "{result:?}");
    assert!(pieces < full_tokens / 2, "{pieces} pieces of {full_tokens}");
    assert!(started.elapsed() < total, "cancelling took {:?}, the whole answer {:?}", started.elapsed(), total);
    let short = DecisionRequest { messages: vec![Message::user("Say OK.")], ..story_request() };
    let after = Instant::now();
    let next = brain.decide(&short, &mut |_| {}, &AtomicBool::new(false)).unwrap();
    assert!(!next.ai.content.is_empty());
    assert!(after.elapsed() < total / 2, "the next request waited {:?}: the cancelled one went on", after.elapsed());

    // The server stopped in the middle of an answer: one error, no panic, no hang.
    let mut pieces = 0;
    let mut stopped = false;
    let result = brain.decide(
        &story_request(),
        &mut |s| {
            if let Stream::Text(_) = s {
                pieces += 1;
                if pieces == 5 && !stopped {
                    stopped = true;
                    server.stop();
                }
            }
        },
        &AtomicBool::new(false),
    );
    let Err(BrainError::Server { problem, .. }) = &result else { panic!("{result:?}") };
    assert!(problem.contains("stream") && problem.contains("pieces"), "{problem}");
}

#[test]
fn server_errors_are_one_clear_line() {
    let Some(python) = server_python() else { return };
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let run = |yaml: String, envs: &[(&str, &str)]| {
        let config = config_file(dir.path(), &yaml);
        decide(&config, "prompt_json", "free", &dir.path().join("out"), envs).0
    };

    // Nothing listening.
    let closed = format!("http://127.0.0.1:{}/v1", free_port());
    let line = error_line(&run(served_yaml(&closed, ""), &[]));
    assert!(line.contains("cannot connect") && line.to_lowercase().contains("connection refused"), "{line}");

    // A server that wants a key: none, a wrong one, the right one.
    let server = Server::start(&python, Some("sesame"));
    let line = error_line(&run(served_yaml(&server.base_url(), ""), &[]));
    assert!(line.contains("wants an API key (401"), "{line}");
    let keyed = served_yaml(&server.base_url(), "api_key_env: B4_TEST_KEY\n");
    let line = error_line(&run(keyed.clone(), &[("B4_TEST_KEY", "wrong")]));
    assert!(line.contains("refused the API key from $B4_TEST_KEY (401"), "{line}");
    assert!(!line.contains("wrong"), "the key never shows: {line}");
    let out = run(keyed.clone(), &[("B4_TEST_KEY", "sesame")]);
    assert!(out.status.success(), "{}", text(&out));
    let line = error_line(&run(keyed, &[]));
    assert!(line.contains("api_key_env names $B4_TEST_KEY, which is not set"), "{line}");

    // A wrong path: 404 with the fix.
    let wrong = served_yaml(&server.base_url().replace("/v1", "/v2"), "api_key_env: B4_TEST_KEY\n");
    let line = error_line(&run(wrong, &[("B4_TEST_KEY", "sesame")]));
    assert!(line.contains("404") && line.contains("check base_url"), "{line}");

    // A prompt over the server's 4096-token context.
    let long = dir.path().join("long.json");
    let words = "lighthouse ".repeat(6000);
    std::fs::write(&long, serde_json::to_string(&serde_json::json!([{"role": "user", "content": words}])).unwrap()).unwrap();
    let config = config_file(dir.path(), &served_yaml(&server.base_url(), "api_key_env: B4_TEST_KEY\n"));
    let out = b4(
        &[
            "decide", "--model_config", config.to_str().unwrap(), "--mode", "prompt_json", "--messages", long.to_str().unwrap(),
            "--tools_schema", "data/messages/tools_schema_basic.json", "--outdir", dir.path().join("long").to_str().unwrap(),
        ],
        &[("B4_TEST_KEY", "sesame")],
    );
    let line = error_line(&out);
    assert!(line.contains("over the server's context length"), "{line}");
}

/// A socket that answers every request with `head` (status line and headers; a
/// Content-Length for `body` is added unless the head streams) and `body`, then closes;
/// it counts the requests.
fn canned_server(head: &'static str, body: &'static str) -> (String, Arc<Mutex<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(Mutex::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut request = vec![0; length];
            let _ = reader.read_exact(&mut request);
            *seen.lock().unwrap() += 1;
            let length = if head.contains("event-stream") { String::new() } else { format!("Content-Length: {}\r\n", body.len()) };
            let mut stream = stream;
            let _ = write!(stream, "{head}\r\n{length}Connection: close\r\n\r\n{body}");
        }
    });
    (url, count)
}

#[test]
fn overload_is_retried_a_bounded_number_of_times_and_junk_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let run = |url: &str, extra: &str| {
        let config = config_file(dir.path(), &served_yaml(url, extra));
        decide(&config, "prompt_json", "free", &dir.path().join("out"), &[]).0
    };
    let (url, count) = canned_server(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 0",
        r#"{"error":{"message":"model loading"}}"#,
    );
    let line = error_line(&run(&url, "retries: 2\n"));
    assert!(line.contains("server error (503 Service Unavailable, 3 tries): model loading"), "{line}");
    assert_eq!(*count.lock().unwrap(), 3, "one request and two retries");

    let (url, _) = canned_server("HTTP/1.1 200 OK\r\nContent-Type: text/html", "<html>hello</html>");
    let line = error_line(&run(&url, ""));
    assert!(line.contains("the answer is not JSON: <html>hello</html>"), "{line}");

    let (url, _) = canned_server(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
    );
    let line = error_line(&run(&url, ""));
    assert!(line.contains("the stream ended before the answer did (1 pieces"), "{line}");
}

#[test]
fn the_tui_shows_a_served_models_decisions_plans_and_errors() {
    let Some(python) = server_python() else { return };
    let _one = one_at_a_time();
    let mut server = Server::start(&python, None);
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(dir.path(), &served_yaml(&server.base_url(), "decoding: constrained\nanswer_from_results: true\n"));
    let ws = tempfile::tempdir().unwrap();
    for sub in ["docs", "data"] {
        common::copy_dir(&repo().join(sub), &ws.path().join(sub));
    }
    let session = TmuxSession(format!("b4served{}", std::process::id()));
    let command = format!(
        "cd {} && {} tui --model_config {} --workspace {}; echo EXITED-$?; sleep 30",
        repo().display(),
        env!("CARGO_BIN_EXE_b4"),
        config.display(),
        ws.path().display()
    );
    tmux(&["new-session", "-d", "-s", &session.0, "-x", "140", "-y", "42", &command]);
    wait_for(&session.0, "F1 help", Duration::from_secs(20));
    let ask = |question: &str| {
        tmux(&["send-keys", "-t", &session.0, "-l", question]);
        tmux(&["send-keys", "-t", &session.0, "Enter"]);
    };

    // ReAct, prompt_json, constrained on the server: the call, its result, the answer and
    // the server's figures in the raw pane.
    ask("计算 (17 + 25) * 3 - 4");
    wait_for(&session.0, "Answer", Duration::from_secs(120));
    let screen = wait_for(&session.0, "│ ready", Duration::from_secs(120));
    for expected in ["Tool calls", "Raw output", "calculator", "= 122", "tok/s · first", "prompt ?", "prompt_json", "constrained"] {
        assert!(screen.contains(expected), "{expected:?} missing from:\n{screen}");
    }

    // plan-and-execute (F3), in a new conversation (Ctrl+N): a plan, its steps run.
    tmux(&["send-keys", "-t", &session.0, "C-n"]);
    tmux(&["send-keys", "-t", &session.0, "F3"]);
    wait_for(&session.0, "plan_execute", Duration::from_secs(10));
    ask("读取 docs/agent_intro.txt 并计算 12*12");
    wait_for(&session.0, "╭ Plan", Duration::from_secs(180));
    wait_for(&session.0, "12*12 = 144", Duration::from_secs(180));
    wait_for(&session.0, "│ ready", Duration::from_secs(180));

    // builtin (F2), back to ReAct: the server's template gets the tools, the model's own
    // call format comes back and is parsed.
    tmux(&["send-keys", "-t", &session.0, "C-n"]);
    tmux(&["send-keys", "-t", &session.0, "F2"]);
    tmux(&["send-keys", "-t", &session.0, "F3"]);
    wait_for(&session.0, "│ react │ builtin │", Duration::from_secs(10));
    ask("计算 3.14 * 5 - 2.5");
    wait_for(&session.0, "= 13.2", Duration::from_secs(180));
    let screen = wait_for(&session.0, "│ ready", Duration::from_secs(180));
    assert!(screen.contains("react · builtin"), "{screen}");

    // The server goes away: one error line, and the app is still there to ask again.
    server.stop();
    ask("计算 1 + 1");
    let screen = wait_for(&session.0, "cannot connect", Duration::from_secs(60));
    assert!(!screen.contains("EXITED"), "{screen}");
    wait_for(&session.0, "│ ready", Duration::from_secs(30));
}
