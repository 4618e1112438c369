//! The real binary in a real terminal (tmux): type a question, wait for the final answer,
//! check what the panes show, toggle settings, quit and find the terminal restored.
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
