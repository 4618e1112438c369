//! The palette. Only the terminal's own foreground/background plus the basic ANSI hues
//! (which every theme remaps to be readable on itself), bold, dim and reversed: no fixed
//! white or black, so nothing turns white-on-white on a light terminal.

use ratatui::style::{Color, Modifier, Style};

pub fn plain() -> Style {
    Style::default()
}

pub fn bold() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}

pub fn dim() -> Style {
    Style::default().add_modifier(Modifier::DIM)
}

/// Highlight of the selected / current row.
pub fn selected() -> Style {
    Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD)
}

pub fn user() -> Style {
    Style::default().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

pub fn assistant() -> Style {
    Style::default().fg(Color::Magenta).add_modifier(Modifier::BOLD)
}

pub fn answer() -> Style {
    Style::default().fg(Color::Green).add_modifier(Modifier::BOLD)
}

pub fn tool_name() -> Style {
    Style::default().fg(Color::Blue).add_modifier(Modifier::BOLD)
}

pub fn ok() -> Style {
    Style::default().fg(Color::Green)
}

pub fn failed() -> Style {
    Style::default().fg(Color::Red).add_modifier(Modifier::BOLD)
}

pub fn running() -> Style {
    Style::default().fg(Color::Yellow).add_modifier(Modifier::BOLD)
}

pub fn warn() -> Style {
    Style::default().fg(Color::Yellow)
}

pub fn memory() -> Style {
    Style::default().fg(Color::Blue)
}

pub fn border(focused: bool) -> Style {
    if focused {
        Style::default().fg(Color::Cyan).add_modifier(Modifier::BOLD)
    } else {
        dim()
    }
}

pub fn title(focused: bool) -> Style {
    if focused {
        Style::default().fg(Color::Cyan).add_modifier(Modifier::BOLD)
    } else {
        bold()
    }
}

/// The status bar: reversed, so it is a solid bar on any background.
pub fn status_bar() -> Style {
    Style::default().add_modifier(Modifier::REVERSED)
}

pub fn key() -> Style {
    Style::default().add_modifier(Modifier::BOLD)
}
