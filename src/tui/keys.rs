//! The key map as data: the help overlay and the status bar read it from here, so what
//! is shown is what is bound. Every key is one terminals really deliver in raw mode
//! (F-keys and Ctrl+letters that are not Enter/Tab/Backspace in disguise).

/// (keys, what they do), in the order the help overlay lists them.
pub const HELP: &[(&str, &str)] = &[
    ("Enter", "send · continue when paused"),
    ("Alt/Shift+Enter, Ctrl+J", "new line in the input"),
    ("← → Home End, Ctrl+← →", "move in the input"),
    ("↑ ↓", "history (input) · scroll (panes)"),
    ("PgUp PgDn, wheel", "scroll (messages, from the input)"),
    ("Tab, Shift+Tab, click", "move focus between panes"),
    ("Esc", "cancel the generation · back to input"),
    ("F2 / Ctrl+T", "tool passing prompt_json ↔ builtin"),
    ("F3 / Ctrl+P", "mode react ↔ plan_execute"),
    ("F6 / Ctrl+G", "decoding free ↔ constrained (grammar)"),
    ("F4 / Ctrl+O", "model profile picker"),
    ("F5 / Ctrl+S", "step mode on / off"),
    ("Space / n / Enter", "continue when paused (empty input)"),
    ("e", "expand / fold tool results (Messages)"),
    ("Enter (while busy)", "queue the input: sent when the run ends"),
    ("Ctrl+E", "export the session to outputs/"),
    ("Ctrl+N", "new conversation (forget the transcript)"),
    ("Ctrl+U / Ctrl+W", "clear the input / delete a word"),
    ("F1 / ?", "this help (? with an empty input)"),
    ("Shift+drag", "select text (the mouse is captured)"),
    ("Ctrl+C", "quit"),
    ("F7", "prompt cache on disk on / off"),
];

/// Status bar hints in display order, each with its priority (0 first): as many as fit
/// are shown, the most important kept when the bar is narrow. These are the input's,
/// idle; [`hints`] gives the set for where the focus is and what the run does.
pub const HINTS: &[(&str, &str, u8)] = &[
    ("F1", "help", 0),
    ("F2", "tools", 2),
    ("F3", "mode", 3),
    ("F4", "model", 5),
    ("F5", "step", 4),
    ("F6", "decoding", 8),
    ("^E", "export", 6),
    ("^N", "new", 9),
    ("Tab", "focus", 7),
    ("^C", "quit", 1),
];

const BUSY: &[(&str, &str, u8)] = &[
    ("F1", "help", 0),
    ("Esc", "cancel", 2),
    ("Enter", "queue", 3),
    ("F2", "tools", 5),
    ("F5", "step", 4),
    ("F6", "decoding", 7),
    ("Tab", "focus", 6),
    ("^C", "quit", 1),
];

const PAUSED: &[(&str, &str, u8)] = &[
    ("F1", "help", 0),
    ("Space", "continue", 2),
    ("Esc", "cancel", 3),
    ("F5", "step off", 4),
    ("F2", "tools", 5),
    ("F6", "decoding", 6),
    ("^C", "quit", 1),
];

const MESSAGES: &[(&str, &str, u8)] = &[
    ("F1", "help", 0),
    ("↑↓", "scroll", 2),
    ("e", "fold results", 3),
    ("End", "follow", 5),
    ("Tab", "focus", 4),
    ("Esc", "input", 6),
    ("^C", "quit", 1),
];

const PANE: &[(&str, &str, u8)] = &[
    ("F1", "help", 0),
    ("↑↓", "scroll", 2),
    ("g/G", "top/end", 4),
    ("Tab", "focus", 3),
    ("Esc", "input", 5),
    ("^C", "quit", 1),
];

/// Where the keys go decides the hints: a paused run first, then a pane with the focus,
/// then a busy run, else the input's.
pub fn hints(focus: super::Focus, paused: bool, busy: bool) -> &'static [(&'static str, &'static str, u8)] {
    use super::Focus;
    match focus {
        _ if paused => PAUSED,
        Focus::Messages => MESSAGES,
        Focus::Raw | Focus::Tools | Focus::Plan => PANE,
        Focus::Input if busy => BUSY,
        Focus::Input => HINTS,
    }
}
