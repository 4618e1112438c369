//! The real binary in a real terminal (tmux): type a question, wait for the final answer,
//! check what the panes show, toggle settings, quit and find the terminal restored; step
//! through a plan, fail a profile switch and go on.
//! scripts/test.sh installs tmux when it is missing.

mod common;
use common::{capture, copy_dir, tmux, wait_for, wait_gone, TmuxSession as Session};

use std::path::PathBuf;
use std::time::{Duration, Instant};

#[test]
fn tui_answers_a_question_in_a_real_terminal() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let ws = tempfile::tempdir().unwrap();
    for sub in ["docs", "data", "memory"] {
        copy_dir(&repo.join(sub), &ws.path().join(sub));
    }
    let session = Session(format!("b4smoke{}", std::process::id()));
    let command = format!(
        "cd {} && {} tui --model_name mock --workspace {}; echo EXITED-$?; sleep 30",
        repo.display(),
        env!("CARGO_BIN_EXE_b4"),
        ws.path().display()
    );
    tmux(&["new-session", "-d", "-s", &session.0, "-x", "120", "-y", "40", &command]);
    wait_for(&session.0, "F1 help", Duration::from_secs(20));

    tmux(&["send-keys", "-t", &session.0, "-l", "帮我做三件事：1) 阅读 docs/agent_intro.txt；2) 计算 3.14 * 5；3) 搜索包含'Agent'的文件。"]);
    tmux(&["send-keys", "-t", &session.0, "Enter"]);
    wait_for(&session.0, "三条中文要点如下", Duration::from_secs(30));
    let screen = wait_for(&session.0, "ready", Duration::from_secs(30));
    for expected in ["Messages", "Tool calls", "Raw output", "file_reader", "calculator", "local_file_search", "3.14 * 5 = 15.7", "三条中文要点如下", "mock", "react", "prompt_json"] {
        assert!(screen.contains(expected), "{expected:?} missing from:\n{screen}");
    }

    // F2 switches the tool passing, F3 the mode, F6 the decoding; the status bar shows them.
    tmux(&["send-keys", "-t", &session.0, "F2"]);
    tmux(&["send-keys", "-t", &session.0, "F3"]);
    tmux(&["send-keys", "-t", &session.0, "F6"]);
    wait_for(&session.0, "builtin", Duration::from_secs(10));
    wait_for(&session.0, "plan_execute", Duration::from_secs(10));
    wait_for(&session.0, "│ constrained │", Duration::from_secs(10));
    // Ctrl+G is the other key for it, and reaches the app as well.
    tmux(&["send-keys", "-t", &session.0, "C-g"]);
    wait_for(&session.0, "│ free │", Duration::from_secs(10));
    tmux(&["send-keys", "-t", &session.0, "C-g"]);
    wait_for(&session.0, "│ constrained │", Duration::from_secs(10));

    // A plan_execute run shows its plan.
    tmux(&["send-keys", "-t", &session.0, "-l", "读取 docs/agent_intro.txt 并计算 2 + 2"]);
    tmux(&["send-keys", "-t", &session.0, "Enter"]);
    let screen = wait_for(&session.0, "计算表达式: 2 + 2", Duration::from_secs(30));
    assert!(screen.contains("Plan"), "{screen}");

    tmux(&["send-keys", "-t", &session.0, "C-c"]);
    let screen = wait_for(&session.0, "EXITED-0", Duration::from_secs(10));
    assert!(!screen.contains("panicked"), "{screen}");
}

/// Starts `b4 tui ARGS --workspace WS` in the workspace, in a new tmux session of
/// `width` x `height`; `EXITED-<code>` shows when it ends.
fn start_tui(name: &str, ws: &std::path::Path, args: &str, width: u16, height: u16) -> Session {
    let session = Session(format!("{name}{}", std::process::id()));
    let command = format!(
        "cd {ws} && {bin} tui {args} --workspace {ws}; echo EXITED-$?; sleep 30",
        ws = ws.display(),
        bin = env!("CARGO_BIN_EXE_b4"),
    );
    tmux(&["new-session", "-d", "-s", &session.0, "-x", &width.to_string(), "-y", &height.to_string(), &command]);
    session
}

fn keys(session: &str, keys: &[&str]) {
    for k in keys {
        tmux(&["send-keys", "-t", session, k]);
    }
}

/// The acceptance walkthrough on the mock brain: a plan stepped through with each pause
/// naming what runs next, then F4 to a profile whose model file is missing: the error
/// shows, the switch is undone, and the next question is answered.
#[test]
fn tui_steps_through_a_plan_and_survives_a_failed_profile_switch() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let ws = tempfile::tempdir().unwrap();
    for sub in ["docs", "data", "memory"] {
        copy_dir(&repo.join(sub), &ws.path().join(sub));
    }
    let config = ws.path().join("model.yaml");
    std::fs::write(
        &config,
        "model:\n  name: mock\n  backend: mock\nmodels:\n  mock:\n    backend: mock\n  broken:\n    backend: candle\n    model_name_or_path: /nonexistent/b4/missing.gguf\n",
    )
    .unwrap();
    let session = start_tui("b4walk", ws.path(), &format!("--model_name mock --model_config {} --mode plan_execute --step", config.display()), 120, 40);
    let s = &session.0;
    wait_for(s, "F1 help", Duration::from_secs(20));

    tmux(&["send-keys", "-t", s, "-l", "读取 docs/agent_intro.txt 并计算 2 + 2"]);
    keys(s, &["Enter"]);
    wait_for(s, "PAUSED before decision 1", Duration::from_secs(20));
    keys(s, &["Space"]);
    // Each step's pause names the tool and its arguments, and the Tool calls pane shows it next.
    let screen = wait_for(s, "PAUSED before 1 tool call: file_reader(", Duration::from_secs(20));
    assert!(screen.contains("path=\"docs/agent_intro.txt\""), "{screen}");
    assert!(screen.contains("⏸ next") && screen.contains("one per step"), "{screen}");
    keys(s, &["Space"]);
    let screen = wait_for(s, "PAUSED before 1 tool call: calculator(expression=\"2 + 2\")", Duration::from_secs(20));
    assert!(screen.contains("✓ done"), "{screen}");
    keys(s, &["Space"]);
    wait_for(s, "PAUSED before decision 2", Duration::from_secs(20));
    keys(s, &["Space"]);
    wait_for(s, "Answer", Duration::from_secs(20));
    wait_for(s, "│ ready", Duration::from_secs(20));

    // Step mode off, then F4 to the profile whose file is missing.
    keys(s, &["F5", "F4"]);
    let picker = wait_for(s, "✗ file missing", Duration::from_secs(10));
    assert!(picker.contains("Esc close"), "the picker's footer is whole:\n{picker}");
    keys(s, &["Up"]);
    wait_for(s, "put the model at /nonexistent/b4/missing.gguf", Duration::from_secs(10));
    keys(s, &["Enter"]);
    let screen = wait_for(s, "could not load broken: still on mock", Duration::from_secs(20));
    let status = screen.lines().rfind(|l| !l.trim().is_empty()).unwrap_or_default().to_string();
    assert!(status.starts_with(" mock │") && status.contains("│ ready"), "{status}");
    assert!(screen.contains("profile broken:"), "the error shows:\n{screen}");
    std::thread::sleep(Duration::from_millis(500));
    assert!(!capture(s).contains("loading broken"), "the load is over:\n{}", capture(s));

    // The next question runs on the profile that works.
    tmux(&["send-keys", "-t", s, "-l", "计算 6 * 7"]);
    keys(s, &["Enter"]);
    let screen = wait_for(s, "42", Duration::from_secs(30));
    assert!(!screen.contains("the brain failed"), "{screen}");

    keys(s, &["C-c"]);
    let screen = wait_for(s, "EXITED-0", Duration::from_secs(10));
    assert!(!screen.contains("panicked"), "{screen}");
}

/// `prompt N · reused M` of the raw pane's turn `turn`, read off the screen.
fn turn_stats(screen: &str, turn: usize) -> Option<(usize, usize)> {
    let header = format!("turn {turn} ·");
    let after = &screen[screen.find(&header)?..];
    let at = after.find("prompt ")? + "prompt ".len();
    let rest = &after[at..];
    let number = |s: &str| s.chars().take_while(char::is_ascii_digit).collect::<String>().parse::<usize>().ok();
    let prompt = number(rest)?;
    let reused = number(&rest[rest.find("reused ")? + "reused ".len()..])?;
    Some((prompt, reused))
}

/// The acceptance walkthrough on the real default model: the plan decision's prefill is
/// shown as it reads the prompt, each step's pause names its tool, F2 between the steps
/// switches the next decision to builtin and that decision still reuses most of its prompt
/// (every way and phase shares the system prefix), a failed profile switch leaves the
/// model in place and the next question is answered.
#[test]
fn tui_walkthrough_on_the_real_model() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let ws = tempfile::tempdir().unwrap();
    for sub in ["docs", "data", "memory"] {
        copy_dir(&repo.join(sub), &ws.path().join(sub));
    }
    let _model = common::default_model_path();
    let config = ws.path().join("model.yaml");
    let profile = "backend: candle\n    model_name_or_path: qwen2.5-coder-0.5b-instruct-q4_k_m.gguf\n    fetch: qwen2.5-coder-0.5b\n    max_new_tokens: 512\n    decoding: constrained\n    no_call_bias: 1.5\n";
    std::fs::write(
        &config,
        format!(
            "model:\n  name: qwen-0.5b\n  {}models:\n  qwen-0.5b:\n    {profile}  broken:\n    backend: candle\n    model_name_or_path: /nonexistent/b4/missing.gguf\n",
            profile.replace("\n    ", "\n  ")
        ),
    )
    .unwrap();
    // A fresh prefill of the whole prompt, so that its progress shows (not the system
    // prompt read from disk by an earlier test's process).
    let session = start_tui(
        "b4real",
        ws.path(),
        &format!("--no-prompt-cache --model_name qwen-0.5b --model_config {} --mode plan_execute --step", config.display()),
        160,
        50,
    );
    let s = &session.0;
    let slow = Duration::from_secs(600);
    wait_for(s, "F1 help", Duration::from_secs(60));

    tmux(&["send-keys", "-t", s, "-l", "读取 docs/agent_intro.txt 并计算 2 + 2"]);
    keys(s, &["Enter"]);
    wait_for(s, "PAUSED before decision 1", slow);
    keys(s, &["Space"]);
    // The plan's prompt is read with its progress shown, then the first step pauses on its tool.
    let start = Instant::now();
    let mut saw_prefill = None;
    let screen = loop {
        let screen = capture(s);
        if saw_prefill.is_none() && screen.contains("reading prompt") {
            saw_prefill = Some(screen.clone());
        }
        if screen.contains("PAUSED before 1 tool call: ") {
            break screen;
        }
        assert!(start.elapsed() < slow, "no step pause; screen:\n{screen}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let progress = saw_prefill.expect("the prefill's progress never showed");
    assert!(progress.contains(" tok ("), "{progress}");
    assert!(screen.contains("⏸ next"), "{screen}");

    // Step through the plan; between two steps, F2 switches the next decision to builtin.
    keys(s, &["Space"]);
    let screen = wait_for(s, "PAUSED before", slow);
    assert!(screen.contains("PAUSED before 1 tool call: ") || screen.contains("PAUSED before decision 2"), "{screen}");
    keys(s, &["F2"]);
    wait_for(s, "builtin", Duration::from_secs(10));
    let mut screen = screen;
    while !screen.contains("PAUSED before decision 2") {
        keys(s, &["Space"]);
        std::thread::sleep(Duration::from_millis(300));
        screen = wait_for(s, "PAUSED before", slow);
    }
    keys(s, &["Space"]);
    let screen = wait_for(s, "│ ready", slow);
    assert!(screen.contains("turn 2 · step · builtin"), "{screen}");
    let (prompt, reused) = turn_stats(&screen, 2).unwrap_or_else(|| panic!("no stats for turn 2:\n{screen}"));
    eprintln!("builtin step decision after F2: reused {reused} of {prompt} prompt tokens");
    assert!(reused * 2 > prompt, "the builtin step decision reused {reused} of {prompt} prompt tokens:\n{screen}");

    // Step mode off, F4 to the profile whose file is missing: the model stays.
    keys(s, &["F5", "F4"]);
    wait_for(s, "✗ file missing", Duration::from_secs(10));
    keys(s, &["Up"]);
    wait_for(s, "put the model at /nonexistent/b4/missing.gguf", Duration::from_secs(10));
    keys(s, &["Enter"]);
    let screen = wait_for(s, "could not load broken: still on qwen-0.5b", Duration::from_secs(60));
    assert!(screen.contains("profile broken:"), "the error shows:\n{screen}");

    // The next question runs on the model that works.
    tmux(&["send-keys", "-t", s, "-l", "计算 6 * 7"]);
    keys(s, &["Enter"]);
    // The run starts (the status leaves "ready"), then ends: only then is its answer on
    // the screen (a "42" before could be any figure).
    wait_gone(s, "│ ready", Duration::from_secs(30));
    let screen = wait_for(s, "│ ready", slow);
    assert!(screen.contains("42"), "{screen}");
    assert!(!screen.contains("the brain failed"), "{screen}");

    keys(s, &["C-c"]);
    let screen = wait_for(s, "EXITED-0", Duration::from_secs(20));
    assert!(!screen.contains("panicked"), "{screen}");
}

/// Ctrl+C while a decision runs quits at once: the engine cancels the decision instead of
/// the process waiting for it to end (here a mock decision that would take ten minutes).
#[test]
fn ctrl_c_during_a_decision_quits_at_once() {
    let ws = tempfile::tempdir().unwrap();
    let config = ws.path().join("model.yaml");
    std::fs::write(&config, "model:\n  name: slow\n  backend: mock\nmodels:\n  slow:\n    backend: mock\n    mock_delay_ms: 600000\n").unwrap();
    let session = start_tui("b4quit", ws.path(), &format!("--model_name slow --model_config {}", config.display()), 120, 40);
    let s = &session.0;
    wait_for(s, "F1 help", Duration::from_secs(20));
    tmux(&["send-keys", "-t", s, "-l", "计算 6 * 7"]);
    keys(s, &["Enter"]);
    wait_for(s, "thinking", Duration::from_secs(20));
    keys(s, &["C-c"]);
    let screen = wait_for(s, "EXITED-0", Duration::from_secs(20));
    assert!(!screen.contains("panicked"), "{screen}");
}
