//! The Plan pane: the plan of the current question, each step's state, the current step
//! kept in view, and its own scroll.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::Frame;

use super::pane::{PaneText, Scrollable, Viewport};
use super::text::{one_line, str_width, wrap_line, wrap_text};
use super::theme;
use crate::protocol::{Plan, StepState};

const EMPTY: &str = "plan_execute: the plan appears here, then each step's state.";

#[derive(Clone, Debug, PartialEq)]
pub struct PlanView {
    pub plan: Plan,
    pub states: Vec<StepState>,
}

impl PlanView {
    pub fn new(plan: Plan) -> Self {
        let states = vec![StepState::Pending; plan.plan.len()];
        Self { plan, states }
    }

    /// `index` is the step's position in the plan (0-based). A state for a step beyond
    /// the plan is ignored rather than trusted.
    pub fn set(&mut self, index: usize, state: StepState) {
        if let Some(slot) = self.states.get_mut(index) {
            *slot = state;
        }
    }

    /// The step to highlight: the running one, else (while a run goes on) the next
    /// pending one.
    pub fn current(&self, run_active: bool) -> Option<usize> {
        self.states
            .iter()
            .position(|s| *s == StepState::Running)
            .or_else(|| if run_active { self.states.iter().position(|s| *s == StepState::Pending) } else { None })
    }

    pub fn count(&self, state: StepState) -> usize {
        self.states.iter().filter(|s| **s == state).count()
    }
}

#[derive(Debug, Default)]
pub struct PlanPane {
    plan: Option<PlanView>,
    view: Viewport,
}

impl Scrollable for PlanPane {
    fn viewport(&self) -> &Viewport {
        &self.view
    }

    fn viewport_mut(&mut self) -> &mut Viewport {
        &mut self.view
    }
}

impl PlanPane {
    pub fn plan(&self) -> Option<&PlanView> {
        self.plan.as_ref()
    }

    /// A new plan, all steps pending; the view follows its current step.
    pub fn show(&mut self, plan: Plan) {
        self.plan = Some(PlanView::new(plan));
        self.view.follow();
    }

    pub fn set_step(&mut self, index: usize, state: StepState) {
        if let Some(plan) = self.plan.as_mut() {
            plan.set(index, state);
        }
    }

    pub fn clear(&mut self) {
        self.plan = None;
    }

    /// Lines the whole plan takes at `width`: the wide layout sizes the pane by it.
    pub fn wanted_lines(&self, width: usize, run_active: bool, spinner: &str) -> usize {
        self.lines(width, usize::MAX, run_active, spinner).0.len()
    }

    pub fn render(&self, frame: &mut Frame, area: Rect, focused: bool, run_active: bool, spinner: &str) {
        let width = area.width.saturating_sub(2) as usize;
        let height = area.height.saturating_sub(2) as usize;
        let mut title = vec![Span::styled(" Plan ", theme::title(focused))];
        if let Some(plan) = &self.plan {
            let n = plan.states.len();
            title.push(Span::styled(format!("{}/{n} done ", plan.count(StepState::Done)), theme::dim()));
            let failed = plan.count(StepState::Failed);
            if failed > 0 {
                title.push(Span::styled(format!("{failed} failed "), theme::failed()));
            }
        }
        let (lines, follow_to) = self.lines(width, height, run_active, spinner);
        let text = PaneText { follow_to, note_more_below: false, ..PaneText::new(title, &lines, EMPTY) };
        self.view.draw(frame, area, focused, text);
    }

    /// The plan's lines and the line where the current step starts. The reasoning comes
    /// first only when it fits in `height` rows with all steps: steps matter more.
    fn lines(&self, width: usize, height: usize, run_active: bool, spinner: &str) -> (Vec<Line<'static>>, Option<usize>) {
        let Some(plan) = &self.plan else {
            return (Vec::new(), None);
        };
        let current = plan.current(run_active);
        let mut steps = Vec::new();
        for (i, step) in plan.plan.plan.iter().enumerate() {
            let state = plan.states.get(i).copied().unwrap_or(StepState::Pending);
            let (mark, style) = match state {
                StepState::Pending => ("○".to_string(), theme::dim()),
                StepState::Running => (spinner.to_string(), theme::running()),
                StepState::Done => ("✓".to_string(), theme::ok()),
                StepState::Failed => ("✗".to_string(), theme::failed()),
            };
            let mut pieces = vec![
                (format!("{mark} "), style),
                (format!("{}. ", i + 1), theme::bold()),
                (one_line(&step.description), theme::plain()),
            ];
            if let Some(call) = &step.tool_call {
                // The tool name only when it fits on the step's line: the steps matter more.
                let used: usize = pieces.iter().map(|(t, _)| str_width(t)).sum();
                if used + 3 + str_width(&call.name) <= width {
                    pieces.push((" · ".to_string(), theme::dim()));
                    pieces.push((call.name.clone(), theme::tool_name()));
                }
            }
            let mut rows = wrap_line(&pieces, width, 5);
            if current == Some(i) {
                for row in rows.iter_mut() {
                    let pad = width.saturating_sub(row.width());
                    row.spans.push(Span::raw(" ".repeat(pad)));
                    *row = std::mem::take(row).patch_style(theme::selected());
                }
            }
            steps.push(rows);
        }
        let step_count: usize = steps.iter().map(Vec::len).sum();
        let mut out = Vec::new();
        if !plan.plan.reasoning.trim().is_empty() {
            let reasoning = wrap_text(&plan.plan.reasoning, theme::dim(), width, 0);
            if reasoning.len() + 1 + step_count <= height {
                out.extend(reasoning);
                out.push(Line::default());
            }
        }
        let current_line = current.map(|c| out.len() + steps.iter().take(c).map(Vec::len).sum::<usize>());
        out.extend(steps.into_iter().flatten());
        (out, current_line)
    }
}
