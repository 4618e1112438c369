//! SIGINT and SIGTERM for the commands that make decisions (`decide`, `chat`, `bench`).
//!
//! The first signal asks the run to stop at its next safe point: [`Interrupt::cancel`] is
//! the brain's cancel flag (the generation ends within a token) and the caller's "stop
//! before the next decision"; a file being written is finished, since every output goes
//! through [`write_atomic`]; the command then says what it stopped after and exits with
//! 128 + the signal's number (130 for SIGINT, 143 for SIGTERM). A second signal exits at
//! once, but not in the middle of a write.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};

/// Held while an output file is written and renamed into place; the second signal waits
/// for it before exiting, so no temp file or half-written file is left behind.
static WRITING: Mutex<()> = Mutex::new(());

const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

pub struct Interrupt {
    /// The first signal's number, 0 before any.
    received: AtomicI32,
    /// Set by the first signal: the running generation ends and no new decision starts.
    pub cancel: Arc<AtomicBool>,
}

impl Interrupt {
    /// Starts watching for the signals on `runtime`; they are caught from the moment this
    /// returns. `on_first` runs once, on the first signal (chat tells its engine to cancel).
    pub fn watch(runtime: &tokio::runtime::Runtime, on_first: impl FnOnce() + Send + 'static) -> Result<Arc<Self>> {
        let mut signals = {
            // The handlers are registered with the runtime's driver, here and now.
            let _entered = runtime.enter();
            Signals::new()?
        };
        let interrupt = Arc::new(Self { received: AtomicI32::new(0), cancel: Arc::new(AtomicBool::new(false)) });
        let watcher = interrupt.clone();
        runtime.spawn(async move {
            let mut on_first = Some(on_first);
            while let Some(number) = signals.recv().await {
                if watcher.received.compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                    watcher.cancel.store(true, Ordering::SeqCst);
                    if let Some(on_first) = on_first.take() {
                        on_first();
                    }
                } else {
                    let _writing = WRITING.lock().unwrap_or_else(PoisonError::into_inner);
                    std::process::exit(128 + number);
                }
            }
        });
        Ok(interrupt)
    }

    /// Whether a signal came.
    pub fn received(&self) -> bool {
        self.received.load(Ordering::SeqCst) != 0
    }

    /// Prints `interrupted: {what}` and gives the exit code of the first signal.
    pub fn exit(&self, what: &str) -> ExitCode {
        eprintln!("interrupted: {what}");
        let code = 128 + self.received.load(Ordering::SeqCst);
        ExitCode::from(u8::try_from(code).unwrap_or(130))
    }
}

/// A runtime with one worker thread, for the commands that have no async work of their own
/// and need one only to catch signals while they decide on the main thread.
pub fn signal_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// Writes `bytes` to `path` through a temp file next to it and a rename: a reader, and an
/// interrupted run, sees the old file or the new one, never part of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let _writing = WRITING.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let fail = || format!("{}: cannot write", path.display());
    let mut tmp = tempfile::NamedTempFile::new_in(dir).with_context(fail)?;
    tmp.write_all(bytes).with_context(fail)?;
    tmp.persist(path).with_context(fail)?;
    Ok(())
}

/// SIGINT and SIGTERM as one stream of signal numbers.
#[cfg(unix)]
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn new() -> Result<Self> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Self {
            interrupt: signal(SignalKind::interrupt()).context("cannot catch SIGINT")?,
            terminate: signal(SignalKind::terminate()).context("cannot catch SIGTERM")?,
        })
    }

    async fn recv(&mut self) -> Option<i32> {
        tokio::select! {
            Some(()) = self.interrupt.recv() => Some(SIGINT),
            Some(()) = self.terminate.recv() => Some(SIGTERM),
            else => None,
        }
    }
}

/// Elsewhere only Ctrl+C, reported as SIGINT.
#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn new() -> Result<Self> {
        Ok(Self)
    }

    async fn recv(&mut self) -> Option<i32> {
        let _ = SIGTERM;
        tokio::signal::ctrl_c().await.ok().map(|()| SIGINT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_atomic_write_replaces_the_file_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        std::fs::write(&path, "old").unwrap();
        write_atomic(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("report.json")]);
    }
}
