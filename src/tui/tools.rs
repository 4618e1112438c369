//! The tool calls pane's state: the current batch of calls as they run in parallel.

use std::time::Instant;

use crate::protocol::{ToolCall, ToolMessage, ToolStatus};

#[derive(Clone, Debug, PartialEq)]
pub enum CallState {
    Running,
    Done,
    Failed,
    /// Still running when the run ended (cancelled).
    Stopped,
}

#[derive(Clone, Debug)]
pub struct ToolRow {
    pub call: ToolCall,
    pub state: CallState,
    pub started: Instant,
    pub duration_ms: Option<f64>,
    pub result: Option<ToolMessage>,
}

#[derive(Debug, Default)]
pub struct ToolsPane {
    pub rows: Vec<ToolRow>,
    /// The decision whose calls these are.
    pub turn: Option<usize>,
    /// Set when a new decision starts: the last batch stays on screen while the model
    /// thinks and is replaced by the first call of the next batch.
    replace_on_next: bool,
    pending_turn: Option<usize>,
}

impl ToolsPane {
    pub fn clear(&mut self) {
        self.rows.clear();
        self.turn = None;
        self.replace_on_next = false;
        self.pending_turn = None;
    }

    pub fn new_turn(&mut self, turn: usize) {
        self.replace_on_next = true;
        self.pending_turn = Some(turn);
    }

    pub fn started(&mut self, call: ToolCall, now: Instant) {
        if self.replace_on_next {
            self.rows.clear();
            self.turn = self.pending_turn;
            self.replace_on_next = false;
        }
        let row = ToolRow { call, state: CallState::Running, started: now, duration_ms: None, result: None };
        match self.rows.iter_mut().find(|r| r.call.id == row.call.id && !row.call.id.is_empty()) {
            Some(existing) => *existing = row,
            None => self.rows.push(row),
        }
    }

    pub fn finished(&mut self, call: ToolCall, result: ToolMessage, duration_ms: f64, now: Instant) {
        let state = match result.status {
            ToolStatus::Success => CallState::Done,
            ToolStatus::Error => CallState::Failed,
        };
        let found = self.rows.iter().position(|r| {
            if call.id.is_empty() {
                r.call.name == call.name && r.call.args == call.args && r.state == CallState::Running
            } else {
                r.call.id == call.id
            }
        });
        let index = match found {
            Some(i) => i,
            None => {
                // A finish without a start (an engine that reports only results).
                self.started(call.clone(), now);
                self.rows.len() - 1
            }
        };
        if let Some(row) = self.rows.get_mut(index) {
            row.state = state;
            row.duration_ms = Some(duration_ms);
            row.result = Some(result);
        }
    }

    pub fn count(&self, state: CallState) -> usize {
        self.rows.iter().filter(|r| r.state == state).count()
    }

    pub fn any_running(&self) -> bool {
        self.rows.iter().any(|r| r.state == CallState::Running)
    }
}
