//! A brain on a served model: the same decision made through an OpenAI-compatible chat API
//! (vLLM, SGLang, llama.cpp's server, llama-cpp-python, Ollama) instead of in process.
//!
//! The prompt is what the in-process brain builds ([`prompt::build`]): prompt_json's
//! envelope rules as plain chat messages, builtin's conversation with the tools in the
//! request's `tools` for the server's template. The answer streams back into the raw pane
//! piece by piece and goes through the same [`decision`] step (parser chain, exclusivity
//! policy). Calls the server parsed itself are written as native `<tool_call>` blocks after
//! its text, so the parser checks their names and arguments against the tools as it does
//! for a local model's; a server without a tool parser answers with that text anyway.
//!
//! Constrained decoding goes to the server in the form it takes ([`wire::constraint_fields`]):
//! the answer's JSON schema (envelope or plan) to llama.cpp, llama-cpp-python, SGLang,
//! Ollama and plain OpenAI; our own Lark grammar, native forms included, to vLLM. Where a
//! server takes none for the form asked (builtin's native calls, except on vLLM), the
//! decision is decoded free and says so. Prefix reuse is the server's; the figures are the
//! ones it reports (`usage`, `cached_tokens`) and the times we measure.
//!
//! The request runs on the brain's own small tokio runtime; the deciding thread waits on
//! it, passing text on as it comes, and aborts it (closing the connection) on cancel.

mod client;
pub mod wire;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use super::constrain::{self, grounding, Target};
use super::decision::{self, Attempt};
use super::format::{ends_with_results, Ask};
use super::prompt;
use super::next_step;
use super::synthesis;
use super::{Brain, BrainError, Decision, DecisionRequest, Decoding, Profile, ServerKind, TokenSink};
use crate::protocol::{DecisionStats, Phase, Stream};
use crate::tools::spec::ToolSpec;
use client::{Endpoint, Event, Outcome};
use wire::Constraint;

pub struct ServedBrain {
    profile: Profile,
    model: String,
    endpoint: Arc<Endpoint>,
    client: reqwest::Client,
    /// `Some` until dropped (shut down without waiting, wherever the drop happens).
    runtime: Option<tokio::runtime::Runtime>,
}

impl ServedBrain {
    /// Checks the profile (`base_url`, `model`, the API key's variable) and prepares the
    /// client; nothing is sent until the first decision.
    pub fn new(profile: &Profile) -> Result<Self, BrainError> {
        let bad = |what: String| BrainError::Other(format!("profile '{}' (backend openai): {what}", profile.name));
        let base_url = profile.base_url.as_deref().map(str::trim).filter(|u| !u.is_empty()).ok_or_else(|| {
            bad("no base_url: set it to the server's API root, e.g. http://127.0.0.1:8080/v1".into())
        })?;
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(bad(format!("base_url '{base_url}' is not an http:// or https:// address")));
        }
        let model = profile.model.as_deref().map(str::trim).filter(|m| !m.is_empty()).ok_or_else(|| {
            bad("no model: set it to the name the server serves (an id from its /v1/models)".into())
        })?;
        let api_key = match &profile.api_key_env {
            None => None,
            Some(var) => Some(std::env::var(var).map_err(|_| bad(format!("api_key_env names ${var}, which is not set")))?),
        };
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(profile.connect_timeout_s.max(1)))
            .timeout(Duration::from_secs(profile.request_timeout_s.max(1)))
            .build()
            .map_err(|e| bad(format!("cannot set up the HTTP client: {e}")))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("b4-served")
            .enable_all()
            .build()
            .map_err(|e| bad(format!("cannot start the request runtime: {e}")))?;
        let endpoint = Endpoint {
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            api_key_env: profile.api_key_env.clone(),
            retries: profile.retries,
            request_timeout_s: profile.request_timeout_s,
        };
        Ok(Self { profile: profile.clone(), model: model.to_string(), endpoint: Arc::new(endpoint), client, runtime: Some(runtime) })
    }

    /// The constraint for a decision asked as `ask`, and how it is decoded: free, with a
    /// warning, where the server takes no constraint of that form.
    fn constraint(&self, request: &DecisionRequest, ask: Ask, warnings: &mut Vec<String>) -> (Option<Constraint>, Decoding) {
        if request.decoding.unwrap_or(self.profile.decoding) == Decoding::Free {
            return (None, Decoding::Free);
        }
        let target = ask.target(ends_with_results(&request.messages));
        let tools = match ToolSpec::parse_all(&request.tools).and_then(|t| grounding::grounded(&t, &request.messages)) {
            Ok(tools) => tools,
            Err(e) => {
                warnings.push(format!("decoded without constraint: tools schema, {e}"));
                return (None, Decoding::Free);
            }
        };
        let strategy = request.strategy.unwrap_or(self.profile.strategy);
        if constrain::uses_tasks(target, strategy, &tools) && !ends_with_results(&request.messages) {
            warnings.push("tasks_first needs the in-process decoder: constrained calls-first instead".into());
        }
        if self.profile.no_call_bias != 0.0 && target == Target::Envelope(constrain::KeyOrder::CallsFirst) {
            warnings.push("no_call_bias needs the in-process decoder: not applied".into());
        }
        if self.profile.builtin_no_call_bias != 0.0 && matches!(target, Target::Native(_)) {
            warnings.push("builtin_no_call_bias needs the in-process decoder: not applied".into());
        }
        if self.profile.input_given_bias.is_some() {
            warnings.push("input_given_bias needs the in-process decoder: not applied".into());
        }
        if self.profile.omit_optional_bias != 0.0 {
            warnings.push("omit_optional_bias needs the in-process decoder: not applied".into());
        }
        if self.profile.more_calls_bias != 0.0 {
            warnings.push("more_calls_bias needs the in-process decoder: not applied".into());
        }
        if self.profile.name_calibration != 0.0 {
            warnings.push("name_calibration needs the in-process decoder: not applied".into());
        }
        if self.profile.true_bias != 0.0 {
            warnings.push("true_bias needs the in-process decoder: not applied".into());
        }
        if self.profile.add_stated_optional {
            warnings.push("add_stated_optional needs the in-process decoder: not applied".into());
        }
        let constraint = match (self.profile.server, constrain::json_schema(&tools, target)) {
            (ServerKind::Vllm, _) => Constraint::Lark(constrain::lark(&tools, target)),
            (_, Some(schema)) => Constraint::JsonSchema(schema),
            (server, None) => {
                warnings.push(format!(
                    "decoded free: a {server:?} server takes no grammar for builtin's native calls (its own template and tool parser decide them)"
                ));
                return (None, Decoding::Free);
            }
        };
        (Some(constraint), Decoding::Constrained)
    }

    /// Sends `body` and waits for the answer, passing each piece of text to `on_token`;
    /// aborts the request (closing its connection) once `cancel` is set.
    fn send(&self, body: serde_json::Value, on_token: TokenSink<'_>, cancel: &AtomicBool) -> Result<Outcome, BrainError> {
        let runtime = self.runtime.as_ref().ok_or_else(|| BrainError::Other("the served brain was shut down".into()))?;
        let (tx, rx) = mpsc::channel();
        let (client, endpoint) = (self.client.clone(), self.endpoint.clone());
        let task = runtime.spawn(async move {
            let result = client::complete(&client, &endpoint, &body, &tx).await;
            let _ = tx.send(Event::Done(result));
        });
        let failed = |problem: String| BrainError::Server { base_url: self.endpoint.base_url.clone(), problem };
        loop {
            if cancel.load(Ordering::Relaxed) {
                task.abort();
                return Err(BrainError::Cancelled);
            }
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(Event::Text(text)) => on_token(Stream::Text(&text)),
                Ok(Event::Done(result)) => return result.map_err(failed),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(failed("the request ended without an answer".into())),
            }
        }
    }
}

impl ServedBrain {
    /// [`decision::answer_from_results`] with the answer written by the server, free.
    fn answer_from_results(
        &self,
        decided: &mut Decision,
        question: &str,
        results: &[synthesis::Called<'_>],
        on_token: TokenSink<'_>,
        cancel: &AtomicBool,
    ) -> Result<(), BrainError> {
        let profile = Profile { max_new_tokens: self.profile.max_new_tokens.min(decision::ANSWER_TOKENS), ..self.profile.clone() };
        synthesis::write(decided, question, results, on_token, |messages, on_token| {
            let body = wire::body(&profile, &self.model, messages, None, None);
            let outcome = self.send(body, on_token, cancel)?;
            let warnings = outcome.retried.iter().map(|r| format!("model server: {r}")).collect();
            Ok(synthesis::Written { text: outcome.completion.raw_text(), stats: stats_of(&outcome), warnings })
        })
    }
}

impl Drop for ServedBrain {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A decision's figures from what the server reported and what we measured.
fn stats_of(outcome: &Outcome) -> DecisionStats {
    let completion = &outcome.completion;
    let usage = completion.usage.clone().unwrap_or_default();
    let generated = if usage.completion_tokens > 0 { usage.completion_tokens } else { completion.pieces };
    let ttft_ms = outcome.ttft_ms.unwrap_or(outcome.total_ms);
    let decode_ms = (outcome.total_ms - ttft_ms).max(0.0);
    let per_second = |tokens: usize, ms: f64| if ms > 0.0 { tokens as f64 * 1000.0 / ms } else { 0.0 };
    DecisionStats {
        prompt_tokens: usage.prompt_tokens,
        reused_tokens: usage.cached_tokens,
        generated_tokens: generated,
        prefill_ms: ttft_ms,
        decode_ms,
        prefill_tok_s: per_second(usage.prompt_tokens.saturating_sub(usage.cached_tokens), ttft_ms),
        // The first token came with the prefill.
        decode_tok_s: per_second(generated.saturating_sub(1), decode_ms),
        latency_ms: outcome.total_ms,
        ttft_ms,
        ..DecisionStats::default()
    }
}

impl Brain for ServedBrain {
    fn profile(&self) -> &Profile {
        &self.profile
    }

    fn decide(&mut self, request: &DecisionRequest, on_token: TokenSink<'_>, cancel: &AtomicBool) -> Result<Decision, BrainError> {
        if self.profile.fresh_follow_up {
            if let Some(decided) = super::follow_up::ask(self, request, on_token, cancel)? {
                return Ok(decided);
            }
        }
        let strategy = request.strategy.unwrap_or(self.profile.strategy);
        let ask = Ask { next_call: self.profile.next_call_after_results, ..Ask::new(request.phase, request.tool_calling, None) };
        let margin = constrain::Margin::default();
        let asked_first = next_step::asked_first(&self.profile, request, &request.messages);
        let mut warnings = Vec::new();
        if asked_first {
            if let Some(decided) = next_step::first(self, request, &request.messages, on_token, cancel, Self::answer_from_results)? {
                return Ok(decided);
            }
            warnings.push(decision::NO_ANSWER_NOTE.into());
        }
        let mut decided = decision::decide(&self.profile, request, &margin, warnings, |reminder| {
            let input = prompt::build(&request.messages, &request.tools, ask, strategy, reminder, None);
            let mut warnings = Vec::new();
            let (constraint, decoding) = self.constraint(request, ask, &mut warnings);
            let messages = wire::messages(&input.messages, &request.messages);
            let body = wire::body(&self.profile, &self.model, messages, input.tools.as_deref(), constraint.as_ref());
            let prompt = serde_json::to_string_pretty(&body).unwrap_or_default();
            let outcome = self.send(body, &mut *on_token, cancel)?;
            warnings.extend(outcome.retried.iter().map(|r| format!("model server: {r}")));
            if outcome.completion.server_calls() > 0 {
                warnings.push(format!("{} call(s) parsed by the server, checked by ours", outcome.completion.server_calls()));
            }
            if outcome.completion.finish_reason.as_deref() == Some("length") {
                warnings.push(format!("the answer reached max_new_tokens ({})", self.profile.max_new_tokens));
            }
            Ok(Attempt { raw: outcome.completion.raw_text(), prompt, decoding, stats: stats_of(&outcome), warnings })
        })?;
        if self.profile.redo_list_echo && super::list_echo::redo(self, &mut decided, request, on_token, cancel)? {
            return Ok(decided);
        }
        if decided.valid() && (self.profile.drop_made_up_calls || self.profile.drop_unfit_actions) && request.phase != crate::protocol::Phase::Plan {
            super::made_up::drop(self, &mut decided, request, &request.messages, on_token, cancel)?;
        }
        if decided.valid() {
            if self.profile.next_step_check && !asked_first && request.phase == Phase::React && decided.ai.tool_calls.is_empty() {
                next_step::check(self, &mut decided, request, &request.messages, on_token, cancel)?;
            }
            if self.profile.answer_from_results && !asked_first && request.phase != Phase::Plan && decided.ai.tool_calls.is_empty() {
                if let Some((question, results)) = synthesis::results_for_question(&request.messages) {
                    self.answer_from_results(&mut decided, question, &results, on_token, cancel)?;
                }
            }
            decided.ai.number_calls();
        }
        Ok(decided)
    }
}
