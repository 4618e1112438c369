//! The key map as data: the help overlay and the status bar read it from here, so what
//! is shown is what is bound. Every key is one terminals really deliver in raw mode
//! (F-keys and Ctrl+letters that are not Enter/Tab/Backspace in disguise).

/// (keys, what they do), in the order the help overlay lists them.
pub const HELP: &[(&str, &str)] = &[
    ("Enter", "send the question (continue when paused)"),
    ("Alt+Enter  Shift+Enter  Ctrl+J", "new line in the input"),
    ("← → Home End  Ctrl+← →", "move in the input"),
    ("↑ ↓", "input: history / lines · panes: scroll"),
    ("PgUp PgDn  mouse wheel", "scroll (the messages from the input)"),
    ("Tab  Shift+Tab  click", "move focus between panes"),
    ("Esc", "cancel the generation · back to the input"),
    ("F2  Ctrl+T", "tool passing prompt_json ↔ builtin"),
    ("F3  Ctrl+P", "mode react ↔ plan_execute"),
    ("F4  Ctrl+O", "model profile picker"),
    ("F5  Ctrl+S", "step mode on / off"),
    ("Space  n  Enter", "paused: continue (with an empty input)"),
    ("e", "Messages pane: expand / fold tool results"),
    ("Ctrl+E", "export the session to outputs/"),
    ("Ctrl+N", "new conversation (forget the transcript)"),
    ("Ctrl+U  Ctrl+W", "clear the input · delete a word"),
    ("F1  ?", "this help (? with an empty input)"),
    ("Ctrl+C", "quit"),
];

/// Short hints for the status bar, most important first; as many as fit are shown.
pub const HINTS: &[(&str, &str)] = &[
    ("F1", "help"),
    ("^C", "quit"),
    ("F2", "tools"),
    ("F3", "mode"),
    ("F5", "step"),
    ("F4", "model"),
    ("Tab", "focus"),
    ("^E", "export"),
];
