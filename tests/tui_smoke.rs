//! The real binary in a real terminal (tmux): type a question, wait for the final answer,
//! check what the panes show, toggle settings, quit and find the terminal restored; step
//! through a plan, fail a profile switch and go on.
//! scripts/test.sh installs tmux when it is missing.

mod common;
use common::copy_dir;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn tmux(args: &[&str]) -> String {
    let out = Command::new("tmux").args(args).output().expect("tmux is needed for this test (scripts/test.sh installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn capture(session: &str) -> String {
    tmux(&["capture-pane", "-t", session, "-p"])
}

fn wait_for(session: &str, what: &str, timeout: Duration) -> String {
    let start = Instant::now();
    loop {
        let screen = capture(session);
        if screen.contains(what) {
            return screen;
        }
        assert!(start.elapsed() < timeout, "waited {timeout:?} for {what:?}; screen:\n{screen}");
        std::thread::sleep(Duration::from_millis(200));
    }
}


struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        tmux(&["kill-session", "-t", &self.0]);
    }
}

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
    let session = Session(format!("b4walk{}", std::process::id()));
    let command = format!(
        "cd {} && {} tui --model_name mock --model_config {} --mode plan_execute --step --workspace {}; echo EXITED-$?; sleep 30",
        ws.path().display(),
        env!("CARGO_BIN_EXE_b4"),
        config.display(),
        ws.path().display()
    );
    tmux(&["new-session", "-d", "-s", &session.0, "-x", "120", "-y", "40", &command]);
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
