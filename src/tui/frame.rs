//! Redraw requests are merged (the idea of codex's frame requester): anything that changes
//! the screen asks for a frame, and at most one frame is drawn per interval however many
//! tokens arrived in between.

use std::time::{Duration, Instant};

/// About 30 frames a second: smooth for streaming, cheap on two shared cores.
pub const MIN_FRAME_INTERVAL: Duration = Duration::from_millis(33);

#[derive(Debug)]
pub struct FrameScheduler {
    wanted: bool,
    last_drawn: Option<Instant>,
    interval: Duration,
}

impl FrameScheduler {
    pub fn new(interval: Duration) -> Self {
        Self { wanted: true, last_drawn: None, interval }
    }

    pub fn request(&mut self) {
        self.wanted = true;
    }

    /// When the next frame should be drawn; `None` while nothing asked for one.
    pub fn deadline(&self) -> Option<Instant> {
        if !self.wanted {
            return None;
        }
        Some(match self.last_drawn {
            Some(at) => at + self.interval,
            None => Instant::now(),
        })
    }

    pub fn drawn(&mut self, at: Instant) {
        self.wanted = false;
        self.last_drawn = Some(at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_requests_make_one_frame_after_the_interval() {
        let mut frames = FrameScheduler::new(Duration::from_millis(33));
        let t0 = Instant::now();
        frames.drawn(t0);
        assert_eq!(frames.deadline(), None);
        for _ in 0..100 {
            frames.request();
        }
        assert_eq!(frames.deadline(), Some(t0 + Duration::from_millis(33)));
        frames.drawn(t0 + Duration::from_millis(40));
        assert_eq!(frames.deadline(), None);
    }

    #[test]
    fn the_first_frame_is_due_at_once() {
        let frames = FrameScheduler::new(Duration::from_millis(33));
        let due = frames.deadline();
        assert!(due.is_some_and(|d| d <= Instant::now()));
    }
}
