//! The terminal UI: watch the agent think, step through plans, switch tool passing, mode
//! and model live.
//!
//! The screen never holds the engine: it renders [`App`] state built from the engine's
//! [`Event`]s and sends [`Command`]s back (codex's op/event split). [`run`] owns the
//! terminal and merges three sources with `tokio::select!`: terminal input, engine
//! events, and a tick for spinners (only while one turns: an idle app sleeps); redraws are requested and merged into at most one
//! frame per [`frame::MIN_FRAME_INTERVAL`], never one per token.
//!
//! Keys are listed in [`keys::HELP`] (the `?` overlay shows the same table).

pub mod app;
pub mod cells;
pub mod clock;
pub mod export;
pub mod frame;
mod help;
pub mod input;
pub mod keys;
pub mod loading;
pub mod markdown;
pub mod messages;
pub mod pane;
pub mod picker;
pub mod plan;
pub mod profiles;
pub mod raw;
pub mod status;
pub mod terminal;
pub mod text;
pub mod theme;
pub mod tools;
mod view;

use std::future::poll_fn;
use std::pin::Pin;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use crossterm::event::EventStream;
use futures_core::Stream;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

pub use app::{App, Focus, Overlay, Pane};
pub use pane::Scroll;

use crate::protocol::{Command, Event, Settings};
use frame::{FrameScheduler, MIN_FRAME_INTERVAL};
use terminal::{Term, TerminalGuard};

/// How often spinners and elapsed times move.
const TICK: Duration = Duration::from_millis(100);
/// Engine events applied before the loop looks at the keyboard again.
const EVENT_BATCH: usize = 512;

/// Runs the TUI until the user quits, on the two ends of an engine (for the runtime's
/// `EngineHandle`: `tui::run(handle.commands, handle.events, settings, profiles::entries(&config))`). Sets up
/// the terminal (alternate screen, raw mode, mouse, bracketed paste) and restores it on
/// exit, on error and on panic.
pub async fn run(
    commands: UnboundedSender<Command>,
    mut events: UnboundedReceiver<Event>,
    initial: Settings,
    profiles: Vec<profiles::ProfileEntry>,
) -> anyhow::Result<()> {
    let mut app = App::new(initial, profiles.iter().map(|p| p.name.clone()).collect());
    app.set_model_files(profiles);
    let mut guard = TerminalGuard::enter().context("cannot set up the terminal")?;
    let result = event_loop(&mut guard.terminal, &mut app, &commands, &mut events).await;
    drop(guard);
    result
}

async fn event_loop(
    term: &mut Term,
    app: &mut App,
    commands: &UnboundedSender<Command>,
    events: &mut UnboundedReceiver<Event>,
) -> anyhow::Result<()> {
    let mut input = EventStream::new();
    let mut frames = FrameScheduler::new(MIN_FRAME_INTERVAL);
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut engine_open = true;
    // Reported once, not on every key after the engine went away.
    let mut send_failed = false;
    loop {
        let deadline = frames.deadline();
        let wake = tokio::time::Instant::from_std(deadline.unwrap_or_else(|| Instant::now() + Duration::from_secs(3600)));
        tokio::select! {
            terminal_event = next_terminal_event(&mut input) => match terminal_event {
                Some(Ok(event)) => {
                    for command in app.on_event(event) {
                        if commands.send(command).is_err() && !send_failed {
                            send_failed = true;
                            app.apply(Event::Error { message: "the engine is not running; Ctrl+C quits".into() });
                        }
                    }
                    frames.request();
                }
                Some(Err(e)) => return Err(e).context("cannot read terminal input"),
                None => break,
            },
            engine_event = events.recv(), if engine_open => match engine_event {
                Some(event) => {
                    app.set_now(Instant::now());
                    app.apply(event);
                    // Drain what already waits: a burst of tokens becomes one frame.
                    for _ in 0..EVENT_BATCH {
                        match events.try_recv() {
                            Ok(event) => app.apply(event),
                            Err(_) => break,
                        }
                    }
                    for command in app.take_commands() {
                        if commands.send(command).is_err() && !send_failed {
                            send_failed = true;
                        }
                    }
                    frames.request();
                }
                None => {
                    engine_open = false;
                    app.apply(Event::Error { message: "the engine stopped; Ctrl+C quits".into() });
                    frames.request();
                }
            },
            // Only while something moves: an idle screen wakes for nothing.
            _ = ticker.tick(), if app.animating() => {
                app.tick(Instant::now());
                frames.request();
            },
            _ = tokio::time::sleep_until(wake), if deadline.is_some() => {
                term.draw(|frame| app.render(frame)).context("cannot draw the screen")?;
                frames.drawn(Instant::now());
            },
        }
        if app.should_quit() {
            break;
        }
    }
    Ok(())
}

async fn next_terminal_event(stream: &mut EventStream) -> Option<std::io::Result<crossterm::event::Event>> {
    poll_fn(|cx| Pin::new(&mut *stream).poll_next(cx)).await
}
