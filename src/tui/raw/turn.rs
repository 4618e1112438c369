//! One decision's raw output as it streams, and the words for its token counts and speed.
//!
//! Streamed text is kept as committed lines plus the partial line still being decoded (the
//! idea of codex's streaming controller): committed lines are wrapped once and cached,
//! only the partial line is laid out again on each frame.

use std::cell::RefCell;

use ratatui::text::{Line, Span};

use crate::tui::text::{sanitize, wrap_text};
use crate::tui::theme;
use crate::brain::Decoding;
use crate::protocol::{DecisionStats, Phase, ToolCalling};

#[derive(Debug)]
pub struct RawTurn {
    pub turn: usize,
    pub phase: Phase,
    pub tool_calling: ToolCalling,
    /// The decoding the engine had confirmed when this decision started.
    pub decoding: Decoding,
    committed: Vec<String>,
    partial: String,
    /// Token events received for this decision.
    pub streamed_tokens: usize,
    pub stats: Option<DecisionStats>,
    pub warnings: Vec<String>,
    /// Reading the prompt: the latest progress and the first one seen (for the rate).
    pub prefill: Option<PrefillProgress>,
    /// Wrapped committed lines for one width: (width, lines covered, rendered lines).
    cache: RefCell<Option<(usize, usize, Vec<Line<'static>>)>>,
}

/// How far a decision's prompt has been read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrefillProgress {
    pub done: usize,
    pub total: usize,
    pub reused: usize,
    /// The first progress of this prefill: where the rate is measured from.
    pub first: (usize, std::time::Instant),
    pub at: std::time::Instant,
}

impl PrefillProgress {
    /// `reading prompt 512/951 tok (53%) · reused 3 · ~4 s left`; the estimate appears once
    /// a chunk has been read.
    pub fn describe(&self) -> String {
        let fresh = self.total.saturating_sub(self.reused).max(1);
        let percent = (self.done.saturating_sub(self.reused) * 100) / fresh;
        let mut text = format!("reading prompt {}/{} tok ({percent}%)", self.done, self.total);
        if self.reused > 0 {
            text.push_str(&format!(" · reused {}", self.reused));
        }
        let (first_done, first_at) = self.first;
        let seconds = self.at.duration_since(first_at).as_secs_f64();
        let read = self.done.saturating_sub(first_done);
        if read > 0 && seconds > 0.0 && self.done < self.total {
            let left = (self.total - self.done) as f64 / (read as f64 / seconds);
            text.push_str(&format!(" · ~{left:.0} s left"));
        }
        text
    }
}

impl RawTurn {
    pub fn new(turn: usize, phase: Phase, tool_calling: ToolCalling) -> Self {
        Self {
            turn,
            phase,
            tool_calling,
            decoding: Decoding::Free,
            committed: Vec::new(),
            partial: String::new(),
            streamed_tokens: 0,
            prefill: None,
            stats: None,
            warnings: Vec::new(),
            cache: RefCell::new(None),
        }
    }

    pub fn push(&mut self, text: &str) {
        self.streamed_tokens += 1;
        let mut parts = text.split('\n');
        if let Some(first) = parts.next() {
            self.partial.push_str(first);
        }
        for part in parts {
            self.committed.push(std::mem::take(&mut self.partial));
            self.partial.push_str(part);
        }
    }

    /// The whole text so far.
    pub fn text(&self) -> String {
        let mut all = self.committed.join("\n");
        if !self.committed.is_empty() {
            all.push('\n');
        }
        all.push_str(&self.partial);
        all
    }

    pub fn is_empty(&self) -> bool {
        self.committed.is_empty() && self.partial.is_empty()
    }

    /// Replaces the text (when the decision's raw text arrives without streaming).
    pub fn set_text(&mut self, raw: &str) {
        self.committed.clear();
        self.partial.clear();
        let mut parts: Vec<&str> = raw.split('\n').collect();
        if let Some(last) = parts.pop() {
            self.partial = last.to_string();
        }
        self.committed = parts.into_iter().map(str::to_string).collect();
        self.cache.replace(None);
    }

    fn header(&self) -> Line<'static> {
        Line::from(vec![
            Span::styled(format!("turn {}", self.turn), theme::bold()),
            Span::styled(
                format!(" · {} · {} · {}", phase_name(self.phase), self.tool_calling.as_str(), self.decoding.as_str()),
                theme::dim(),
            ),
        ])
    }

    pub fn lines(&self, width: usize, streaming: bool) -> Vec<Line<'static>> {
        let mut out = vec![self.header()];
        {
            let mut cache = self.cache.borrow_mut();
            let stale = !matches!(&*cache, Some((w, n, _)) if *w == width && *n <= self.committed.len());
            if stale {
                *cache = Some((width, 0, Vec::new()));
            }
            if let Some((_, covered, lines)) = cache.as_mut() {
                for line in self.committed.iter().skip(*covered) {
                    lines.extend(wrap_text(line, theme::plain(), width, 0));
                }
                *covered = self.committed.len();
                out.extend(lines.iter().cloned());
            }
        }
        if !self.partial.is_empty() || streaming {
            let mut partial = wrap_text(&sanitize(&self.partial), theme::plain(), width, 0);
            if streaming {
                let cursor = Span::styled("▌", theme::running());
                match partial.last_mut() {
                    Some(last) if last.width() < width => last.spans.push(cursor),
                    _ => partial.push(Line::from(cursor)),
                }
            }
            out.extend(partial);
        }
        for warning in &self.warnings {
            out.extend(wrap_text(&format!("⚠ {warning}"), theme::warn(), width, 0));
        }
        if let Some(stats) = &self.stats {
            out.extend(wrap_text(&stats_line(stats), theme::dim(), width, 0));
            // A server masks its tokens out of our sight: no mask figures to show.
            if (self.decoding == Decoding::Constrained && !stats.served()) || grammar_applied(stats) {
                out.extend(wrap_text(&mask_line(stats), theme::dim(), width, 0));
            }
        }
        out
    }
}

pub fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::React => "react",
        Phase::Plan => "plan",
        Phase::Step => "step",
    }
}

/// `prompt 812 · reused 640 (600 from disk) · generated 57 (31 fast-forwarded) · 23.4 tok/s
/// · 2.41 s`; no speed for a brain that reports none (the mock), rather than `0.0 tok/s`; a
/// served model's time to first token, and `prompt ?` where its server gave no count.
pub fn stats_line(stats: &DecisionStats) -> String {
    let speed = tok_s(stats).map(|t| format!(" · {t} tok/s")).unwrap_or_default();
    let drafted = match stats.fast_forwarded {
        0 => String::new(),
        n => format!(" ({n} fast-forwarded)"),
    };
    let from_disk = match stats.prompt_cache_tokens {
        0 => String::new(),
        n => format!(" ({n} from disk)"),
    };
    let first = if stats.served() { format!(" · first token {:.2} s", stats.ttft_ms / 1000.0) } else { String::new() };
    format!(
        "prompt {} · reused {}{from_disk} · generated {}{drafted}{speed}{first} · {:.2} s",
        stats.prompt_shown(),
        stats.reused_tokens,
        stats.generated_tokens,
        stats.latency_ms / 1000.0
    )
}

/// The decode speed, when the brain measured one.
pub fn tok_s(stats: &DecisionStats) -> Option<String> {
    (stats.generated_tokens > 0 && stats.decode_tok_s > 0.0).then(|| format!("{:.1}", stats.decode_tok_s))
}

/// Whether a grammar masked this decision's tokens: a brain without one (the mock)
/// decodes freely whatever the setting asked.
// TODO(issue 15): read this from the decision report once Event::Decided carries it.
pub fn grammar_applied(stats: &DecisionStats) -> bool {
    stats.mask_ms > 0.0 || stats.grammar_ms > 0.0
}

/// The constrained decoding's cost: `mask 0.90 ms/token · 3.0% of decode · grammar 42 ms`,
/// with `(12 ms waited)` after it when the decoder waited for a grammar made beside the
/// prefill. The mask time is part of the decode time, so the share is of the whole decode step.
pub fn mask_line(stats: &DecisionStats) -> String {
    let per_token = if stats.generated_tokens > 0 {
        format!("{:.2} ms/token", stats.mask_ms / stats.generated_tokens as f64)
    } else {
        "– ms/token".to_string()
    };
    let share = if stats.decode_ms > 0.0 {
        format!("{:.1}%", stats.mask_ms / stats.decode_ms * 100.0)
    } else {
        "–".to_string()
    };
    let waited = if stats.grammar_wait_ms >= 0.5 { format!(" ({:.0} ms waited)", stats.grammar_wait_ms) } else { String::new() };
    format!("mask {per_token} · {share} of decode · grammar {:.0} ms{waited}", stats.grammar_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stats_line_counts_fast_forwarded_tokens_when_there_are_any() {
        let stats = DecisionStats { prompt_tokens: 812, reused_tokens: 640, generated_tokens: 57, decode_tok_s: 23.44, latency_ms: 2410.0, ..DecisionStats::default() };
        assert_eq!(stats_line(&stats), "prompt 812 · reused 640 · generated 57 · 23.4 tok/s · 2.41 s");
        let stats = DecisionStats { fast_forwarded: 31, ..stats };
        assert_eq!(stats_line(&stats), "prompt 812 · reused 640 · generated 57 (31 fast-forwarded) · 23.4 tok/s · 2.41 s");
        let stats = DecisionStats { prompt_cache_tokens: 600, ..stats };
        assert_eq!(stats_line(&stats), "prompt 812 · reused 640 (600 from disk) · generated 57 (31 fast-forwarded) · 23.4 tok/s · 2.41 s");
    }

    #[test]
    fn a_served_decision_shows_its_first_token_and_no_mask_line() {
        let stats = DecisionStats { generated_tokens: 37, decode_tok_s: 25.1, latency_ms: 8100.0, ttft_ms: 374.0, ..DecisionStats::default() };
        assert_eq!(stats_line(&stats), "prompt ? · reused 0 · generated 37 · 25.1 tok/s · first token 0.37 s · 8.10 s");
        let counted = DecisionStats { prompt_tokens: 951, reused_tokens: 900, ..stats.clone() };
        assert!(stats_line(&counted).starts_with("prompt 951 · reused 900 · "), "{}", stats_line(&counted));
        let mut turn = RawTurn::new(1, Phase::React, ToolCalling::PromptJson);
        turn.decoding = Decoding::Constrained;
        turn.push("{}");
        turn.stats = Some(stats);
        let lines: Vec<String> = turn.lines(200, false).iter().map(|l| l.to_string()).collect();
        assert!(!lines.iter().any(|l| l.starts_with("mask ")), "{lines:?}");
    }

    #[test]
    fn streamed_pieces_split_into_committed_lines_and_a_partial() {
        let mut turn = RawTurn::new(1, Phase::React, ToolCalling::PromptJson);
        for piece in ["{\"con", "tent\":", "\"\"\n  ,\"tool", "_calls\"\n", "]"] {
            turn.push(piece);
        }
        assert_eq!(turn.committed, vec!["{\"content\":\"\"", "  ,\"tool_calls\""]);
        assert_eq!(turn.partial, "]");
        assert_eq!(turn.text(), "{\"content\":\"\"\n  ,\"tool_calls\"\n]");
        assert_eq!(turn.streamed_tokens, 5);
    }

    #[test]
    fn the_mask_line_gives_time_per_token_and_share_of_decode() {
        let stats = DecisionStats { generated_tokens: 61, decode_ms: 1800.0, mask_ms: 54.9, grammar_ms: 42.0, ..DecisionStats::default() };
        assert_eq!(mask_line(&stats), "mask 0.90 ms/token · 3.0% of decode · grammar 42 ms");
        assert_eq!(mask_line(&DecisionStats::default()), "mask – ms/token · – of decode · grammar 0 ms");
        let waited = DecisionStats { grammar_ms: 300.0, grammar_wait_ms: 120.4, ..stats };
        assert_eq!(mask_line(&waited), "mask 0.90 ms/token · 3.0% of decode · grammar 300 ms (120 ms waited)");
    }

    #[test]
    fn only_constrained_decisions_show_the_mask_line() {
        let stats = DecisionStats { generated_tokens: 10, decode_ms: 100.0, latency_ms: 150.0, ..DecisionStats::default() };
        let mut turn = RawTurn::new(1, Phase::React, ToolCalling::Builtin);
        turn.push("hi");
        turn.stats = Some(stats.clone());
        let text = |turn: &RawTurn| turn.lines(200, false).iter().map(|l| l.to_string()).collect::<Vec<_>>();
        assert_eq!(
            text(&turn),
            ["turn 1 · react · builtin · free", "hi", "prompt 0 · reused 0 · generated 10 · 0.15 s"]
        );
        turn.decoding = Decoding::Constrained;
        turn.stats = Some(DecisionStats { mask_ms: 2.0, grammar_ms: 7.0, ..stats });
        assert_eq!(
            text(&turn),
            [
                "turn 1 · react · builtin · constrained",
                "hi",
                "prompt 0 · reused 0 · generated 10 · 0.15 s",
                "mask 0.20 ms/token · 2.0% of decode · grammar 7 ms",
            ]
        );
    }

    #[test]
    fn cached_lines_follow_new_commits_and_width_changes() {
        let mut turn = RawTurn::new(1, Phase::React, ToolCalling::PromptJson);
        turn.push("abcdef\n");
        assert_eq!(turn.lines(3, false).len(), 1 + 2);
        turn.push("gh\n");
        assert_eq!(turn.lines(3, false).len(), 1 + 3);
        assert_eq!(turn.lines(10, false).len(), 1 + 2);
    }
}
