//! The plan pane's state: the plan of the current question and each step's state.

use crate::protocol::{Plan, StepState};

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
