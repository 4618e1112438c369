//! Entering and leaving the full-screen terminal. Leaving happens on every way out: the
//! guard's drop (normal exit and `?` errors) and a panic hook (a panic would otherwise
//! leave the user's shell in raw mode on the alternate screen).

use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    KeyboardEnhancementFlags, PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

/// Whether the terminal is in our mode; restoring twice must be harmless.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether keyboard enhancement was pushed (so it is popped only then).
static ENHANCED: AtomicBool = AtomicBool::new(false);

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Holds the terminal in full-screen mode until dropped.
pub struct TerminalGuard {
    pub terminal: Term,
}

impl TerminalGuard {
    pub fn enter() -> io::Result<Self> {
        install_panic_hook();
        ACTIVE.store(true, Ordering::SeqCst);
        if let Err(e) = setup() {
            restore();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(io::stdout())) {
            Ok(terminal) => Ok(Self { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

fn setup() -> io::Result<()> {
    terminal::enable_raw_mode()?;
    execute!(io::stdout(), EnterAlternateScreen, EnableMouseCapture, EnableBracketedPaste)?;
    // Lets terminals that support it (kitty, foot, WezTerm, recent iTerm2...) report
    // Shift+Enter apart from Enter; others keep working with Alt+Enter / Ctrl+J.
    if matches!(terminal::supports_keyboard_enhancement(), Ok(true)) {
        execute!(
            io::stdout(),
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )?;
        ENHANCED.store(true, Ordering::SeqCst);
    }
    Ok(())
}

/// Puts the terminal back as the shell had it. Best effort: each step runs even when an
/// earlier one failed.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(out, DisableBracketedPaste, DisableMouseCapture, LeaveAlternateScreen, cursor::Show);
    let _ = terminal::disable_raw_mode();
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}
