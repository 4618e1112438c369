//! The real brain: a Qwen model decoding in-process on candle.
//!
//! One decision is: build the prompt messages for the tool-calling way ([`prompt`]),
//! render the model's chat template and generate on the model's own thread
//! ([`generate`]), then [`decision`] parses the raw text and applies the exclusivity
//! policy when the model sent content and tool calls together.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use super::constrain;
use super::context;
use super::decision;
use super::format::{ends_with_results, Ask};
use super::generate::{GenParams, ModelHandle, StopKind, TokenConstraint};
use super::progress::ProgressSink;
use super::prompt::{self, Reminder};
use super::name_prior;
use super::next_step;
use super::synthesis;
use super::{Brain, BrainError, Decision, DecisionRequest, Decoding, Profile, TokenSink};
use crate::protocol::{DecisionStats, Message};

pub struct CandleBrain {
    profile: Profile,
    model: ModelHandle,
    /// Content-free priors over tool names, by the prompt they were read after: a
    /// conversation offers the same tools turn after turn.
    priors: HashMap<String, Arc<constrain::NamePrior>>,
}

/// Most content-free priors kept.
const MAX_PRIORS: usize = 32;

impl CandleBrain {
    /// Loads the profile's model (instantly when the same file is already loaded).
    pub fn load(profile: &Profile) -> Result<Self, BrainError> {
        Self::load_reporting(profile, &super::progress::ignore)
    }

    /// [`CandleBrain::load`], telling `progress` how far loading has come.
    pub fn load_reporting(profile: &Profile, progress: ProgressSink<'_>) -> Result<Self, BrainError> {
        Ok(Self { profile: profile.clone(), model: ModelHandle::load_reporting(profile, progress)?, priors: HashMap::new() })
    }

    fn params(&self) -> GenParams {
        GenParams::from_profile(&self.profile)
    }

    /// The content-free prior over the names of `request`'s tools ([`name_prior`]) for a
    /// constrained decision asked as `ask` on `messages`, with the request's or else the
    /// profile's `name_calibration`; `None` where it does not apply (off, free decoding, fewer
    /// than two tools, a form whose calls are not named after `"name":`, calls made since the
    /// question: the prior is read for a fresh question). `prompt` renders a conversation as
    /// the decision would; what reading the prior cost is added to `stats`.
    fn name_prior(
        &mut self,
        request: &DecisionRequest,
        ask: Ask,
        messages: &[Message],
        prompt: impl FnOnce(&Self, &[Message]) -> Result<String, BrainError>,
        stats: &mut DecisionStats,
        warnings: &mut Vec<String>,
        cancel: &AtomicBool,
    ) -> Result<Option<(Arc<constrain::NamePrior>, f32)>, BrainError> {
        let strength = request.name_calibration.unwrap_or(self.profile.name_calibration);
        let constrained = request.decoding.unwrap_or(self.profile.decoding) == Decoding::Constrained;
        let after_results = ends_with_results(messages);
        let target = ask.target(after_results);
        // After results the model's next call or answer rests on them, which the content-free
        // prompt has none of: calibrated there, the 0.5B called again for what the results
        // answered (dev multi_turn, 8 decisions each way).
        let fresh = name_prior::fresh_question(messages);
        let (true, true, true, Some(opener)) = (strength != 0.0, constrained, fresh, name_prior::opener(target)) else { return Ok(None) };
        let Ok(tools) = crate::tools::spec::ToolSpec::parse_all(&request.tools) else { return Ok(None) };
        let Ok(tools) = constrain::grounding::grounded(&tools, messages) else { return Ok(None) };
        let strategy = request.strategy.unwrap_or(self.profile.strategy);
        if tools.len() < 2 || constrain::uses_tasks(target, strategy, &tools) {
            return Ok(None);
        }
        let text = format!("{}{opener}", prompt(self, &name_prior::content_free(messages))?);
        if let Some(prior) = self.priors.get(&text) {
            return Ok(Some((prior.clone(), strength)));
        }
        let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        let params = || self.params();
        let (prior, cost, notes) = name_prior::measure(&self.model, &params, &text, &names, cancel)?;
        decision::add_generation(stats, &cost);
        warnings.extend(notes);
        let prior = Arc::new(prior);
        if self.priors.len() >= MAX_PRIORS {
            self.priors.clear();
        }
        self.priors.insert(text, prior.clone());
        Ok(Some((prior, strength)))
    }

    /// The prompt's budget: `max_input_tokens` and room in the context window for the
    /// answer, less room for the exclusivity retry's reminder.
    fn prompt_budget(&self) -> usize {
        let window = self.model.info().context_length.saturating_sub(self.profile.max_new_tokens);
        self.profile.max_input_tokens.min(window).saturating_sub(RETRY_ROOM)
    }
}

impl CandleBrain {
    /// Writes `decided`'s answer again from a prompt of the question and its tool results
    /// alone ([`synthesis::write`]); the decision's own answer stays when this one comes out
    /// empty.
    fn answer_from_results(
        &self,
        decided: &mut Decision,
        question: &str,
        results: &[synthesis::Called<'_>],
        on_token: TokenSink<'_>,
        cancel: &AtomicBool,
    ) -> Result<(), BrainError> {
        synthesis::write(decided, question, results, on_token, |messages, on_token| {
            let prompt_text = self.model.render(&messages, None)?;
            let params = GenParams { max_new_tokens: self.profile.max_new_tokens.min(decision::ANSWER_TOKENS), ..self.params() };
            let generation = self.model.generate(&prompt_text, params, on_token, cancel)?;
            if generation.stop == StopKind::Cancelled {
                return Err(BrainError::Cancelled);
            }
            Ok(synthesis::Written { text: generation.text, stats: generation.stats, warnings: generation.warnings })
        })
    }
}


/// Tokens kept free for the reminder a retry adds.
const RETRY_ROOM: usize = 64;

impl Brain for CandleBrain {
    fn profile(&self) -> &Profile {
        &self.profile
    }

    fn decide(&mut self, request: &DecisionRequest, on_token: TokenSink<'_>, cancel: &AtomicBool) -> Result<Decision, BrainError> {
        if self.profile.courtesy_replies {
            if let Some(decided) = super::courtesy::reply(self, request, on_token, cancel)? {
                return Ok(decided);
            }
        }
        if self.profile.fresh_follow_up {
            if let Some(decided) = super::follow_up::ask(self, request, on_token, cancel)? {
                return Ok(decided);
            }
        }
        let strategy = request.strategy.unwrap_or(self.profile.strategy);
        let margin = constrain::Margin::default();
        let template = self.model.chat_template();
        let ask = Ask { next_call: self.profile.next_call_after_results, ..Ask::new(request.phase, request.tool_calling, template) };
        let prefix = template.and_then(|t| prompt::system_prefix(t, &request.messages, &request.tools));
        // Takes the brain: the next-step check below borrows it mutably in between.
        let render = |this: &Self, messages: &[Message], reminder| {
            let input = prompt::build(messages, &request.tools, ask, strategy, reminder, prefix.as_ref());
            this.model.render_thinking(&input.messages, input.tools.as_deref(), this.profile.thinking)
        };
        let (messages, trimmed) =
            context::fit(&request.messages, self.prompt_budget(), |m| self.model.token_count(&render(self, m, Reminder::None)?))?;
        let mut warnings: Vec<String> = trimmed.map(|t| t.note()).into_iter().collect();
        let asked_first = next_step::asked_first(&self.profile, request, &messages);
        if asked_first {
            if let Some(mut decided) = next_step::first(self, request, &messages, on_token, cancel, Self::answer_from_results)? {
                decided.report.warnings.splice(0..0, warnings);
                return Ok(decided);
            }
            warnings.push(decision::NO_ANSWER_NOTE.into());
        }
        let mut prior_stats = DecisionStats::default();
        let names = self.name_prior(request, ask, &messages, |this, m| render(this, m, Reminder::None), &mut prior_stats, &mut warnings, cancel)?;
        let mut decided = decision::decide(&self.profile, request, &margin, warnings, |reminder| {
            let prompt_text = render(self, &messages, reminder)?;
            let params = self.params();
            let mut decoding = request.decoding.unwrap_or(self.profile.decoding);
            let constrained = decoding == Decoding::Constrained;
            let mut warnings = Vec::new();
            let mut grammar_ms = 0.0;
            // The grammar is made while the decoder reads the prompt (in a new process its
            // first use waits for the vocabulary's token space, built while the model loads);
            // the decoder takes it before the first token.
            let make = || {
                let compiling = Instant::now();
                let choice = constrain::Choices {
                    bias: request.answer_bias.unwrap_or(self.profile.no_call_bias),
                    native_bias: request.answer_bias.unwrap_or(self.profile.builtin_no_call_bias),
                    more_calls: request.more_calls_bias.unwrap_or(self.profile.more_calls_bias),
                    margin: margin.clone(),
                    omit_optional: self.profile.omit_optional_bias,
                    true_bias: self.profile.true_bias,
                    input_given: if request.answer_bias.is_some() { None } else { self.profile.input_given_bias },
                    names: names.clone(),
                };
                let made: Option<Box<dyn TokenConstraint + Send>> = match constrain::for_request(&self.model, request, ask, strategy, &choice) {
                    Ok(constraint) if self.profile.thinking => match self.model.tokenizer().token_id("</think>") {
                        // The thought first, free; then the answer, held to the grammar.
                        Some(close) => Some(Box::new(constrain::ThoughtFirst::new(constraint, close, self.model.stop_tokens().to_vec()))),
                        None => {
                            warnings.push("thinking: the model has no </think> token; decoded constrained without a thought".into());
                            Some(constraint)
                        }
                    },
                    Ok(constraint) => Some(constraint),
                    Err(e) => {
                        warnings.push(format!("decoded without constraint: {e}"));
                        decoding = Decoding::Free;
                        None
                    }
                };
                grammar_ms = compiling.elapsed().as_secs_f64() * 1000.0;
                made
            };
            let generation = self.model.generate_making(&prompt_text, params, constrained.then_some(make), &mut *on_token, cancel)?;
            if generation.stop == StopKind::Cancelled {
                return Err(BrainError::Cancelled);
            }
            warnings.extend(generation.warnings.iter().cloned());
            let stats = DecisionStats { grammar_ms, ..generation.stats };
            Ok(decision::Attempt { raw: generation.text, prompt: prompt_text, decoding, stats, warnings })
        })?;
        decision::add_generation(&mut decided.report.stats, &prior_stats);
        if self.profile.redo_list_echo && super::list_echo::redo(self, &mut decided, request, on_token, cancel)? {
            return Ok(decided);
        }
        if decided.valid() && (self.profile.drop_made_up_calls || self.profile.drop_unfit_actions) && request.phase != crate::protocol::Phase::Plan {
            super::made_up::drop(self, &mut decided, request, &messages, on_token, cancel)?;
        }
        if decided.valid() && self.profile.add_stated_optional && request.phase == crate::protocol::Phase::React && !decided.ai.tool_calls.is_empty() {
            let tools = crate::tools::spec::ToolSpec::parse_all(&request.tools).unwrap_or_default();
            let conversation = super::faithful::stated_text(&messages);
            super::stated_optional::add(&self.model, || self.params(), &mut decided, &tools, &conversation, cancel)?;
        }
        if decided.valid() {
            if self.profile.next_step_check && !asked_first && request.phase == crate::protocol::Phase::React && decided.ai.tool_calls.is_empty() {
                next_step::check(self, &mut decided, request, &messages, on_token, cancel)?;
            }
            if self.profile.reanswer_echoes && request.phase == crate::protocol::Phase::React && decided.ai.tool_calls.is_empty() {
                super::echo::reanswer(self, &mut decided, request, &messages, on_token, cancel)?;
            }
            if self.profile.answer_from_results && !asked_first && request.phase != crate::protocol::Phase::Plan && decided.ai.tool_calls.is_empty() {
                if let Some((question, results)) = synthesis::results_for_question(&messages) {
                    self.answer_from_results(&mut decided, question, &results, on_token, cancel)?;
                }
            }
            decided.ai.number_calls();
        }
        Ok(decided)
    }
}
