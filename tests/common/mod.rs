//! Helpers shared by the integration tests.

use std::path::Path;

/// Copies a folder tree (the repo's docs, data, memory into a temp workspace).
#[allow(dead_code)]
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The fetch asset of the default model (the 0.5B), which scripts/test.sh fetches first.
#[allow(dead_code)] // not every test crate that includes this module needs the model
pub const DEFAULT_ASSET: &str = "qwen2.5-coder-0.5b";

/// The default model's GGUF file, or a failure that says how to get it.
#[allow(dead_code)]
pub fn default_model_path() -> std::path::PathBuf {
    use b4_agent::brain::fetch::{find_asset, models_dir};
    let asset = find_asset(DEFAULT_ASSET).unwrap();
    let path = models_dir().join(asset.file);
    assert!(
        path.is_file(),
        "the default model is missing at {}: run `b4 models fetch {DEFAULT_ASSET}` first (CI does), or set B4_MODELS_DIR",
        path.display()
    );
    path
}

/// Runs `tmux ARGS` (the TUI tests drive the real binary in it); its stdout.
#[allow(dead_code)]
pub fn tmux(args: &[&str]) -> String {
    let out = std::process::Command::new("tmux").args(args).output().expect("tmux is needed for this test (scripts/test.sh installs it)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The tmux session's screen.
#[allow(dead_code)]
pub fn capture(session: &str) -> String {
    tmux(&["capture-pane", "-t", session, "-p"])
}

/// Waits for `what` on the tmux session's screen; the screen.
#[allow(dead_code)]
pub fn wait_for(session: &str, what: &str, timeout: std::time::Duration) -> String {
    let start = std::time::Instant::now();
    loop {
        let screen = capture(session);
        if screen.contains(what) {
            return screen;
        }
        assert!(start.elapsed() < timeout, "waited {timeout:?} for {what:?}; screen:\n{screen}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Waits until `what` is gone from the tmux session's screen; the screen.
#[allow(dead_code)]
pub fn wait_gone(session: &str, what: &str, timeout: std::time::Duration) -> String {
    let start = std::time::Instant::now();
    loop {
        let screen = capture(session);
        if !screen.contains(what) {
            return screen;
        }
        assert!(start.elapsed() < timeout, "waited {timeout:?} for {what:?} to go; screen:\n{screen}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A tmux session, killed when dropped.
#[allow(dead_code)]
pub struct TmuxSession(pub String);

impl Drop for TmuxSession {
    fn drop(&mut self) {
        tmux(&["kill-session", "-t", &self.0]);
    }
}
