//! The time the screen is drawn at: events are applied at the time they came, and a frame
//! counter turns the spinners only on ticks, so a redraw never moves one by itself.

use std::time::Instant;

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub now: Instant,
    ticks: u64,
}

impl Clock {
    pub fn new(now: Instant) -> Self {
        Self { now, ticks: 0 }
    }

    /// Sets the time without moving spinners.
    pub fn set(&mut self, now: Instant) {
        self.now = now;
    }

    /// Sets the time and moves the spinners one step.
    pub fn tick(&mut self, now: Instant) {
        self.now = now;
        self.ticks = self.ticks.wrapping_add(1);
    }

    pub fn spinner(&self) -> &'static str {
        SPINNER.get((self.ticks % SPINNER.len() as u64) as usize).copied().unwrap_or("·")
    }
}
