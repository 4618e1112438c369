//! What every real brain does with a model's raw text, wherever the model runs (in process
//! or on a server): parse it, keep an answer and calls apart (the exclusivity policy, with
//! one retry under a stronger reminder), restore what the request said, and report how the
//! decision was made.

use super::constrain::Margin;
use super::faithful;
use super::parse::{self, Parsed};
use super::prompt::Reminder;
use super::{BrainError, Decision, DecisionRequest, DecisionStatus, Decoding, Exclusivity, Profile};
use crate::protocol::{AiMessage, DecisionReport, DecisionStats, ToolCall};
use crate::text::one_line;

/// One generation of a decision: what the model saw and wrote.
pub(crate) struct Attempt {
    /// The model's raw text.
    pub raw: String,
    /// The prompt as the model saw it (rendered, or the request sent).
    pub prompt: String,
    /// How it was decoded (free where a constraint could not be applied).
    pub decoding: Decoding,
    pub stats: DecisionStats,
    pub warnings: Vec<String>,
}

/// Runs `attempt` (once, or twice when the exclusivity policy retries with
/// [`Reminder::Exclusive`]) and turns its raw text into the decision. `warnings` are those
/// gathered before the first attempt (a trimmed conversation, say); `margin` receives the
/// model's own answer-or-call margin where constrained decoding watched it.
pub(crate) fn decide(
    profile: &Profile,
    request: &DecisionRequest,
    margin: &Margin,
    mut warnings: Vec<String>,
    mut attempt: impl FnMut(Reminder) -> Result<Attempt, BrainError>,
) -> Result<Decision, BrainError> {
    let mut reminder = Reminder::None;
    let mut stats = DecisionStats::default();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let Attempt { raw, prompt, decoding, stats: attempt_stats, warnings: attempt_warnings } = attempt(reminder)?;
        accumulate(&mut stats, &attempt_stats);
        warnings.extend(attempt_warnings);
        // What the constraint watched in this attempt (one read: the lock is the decoder's).
        let watched = margin.lock().map(|m| m.clone()).unwrap_or_default();
        let decision = |ai: AiMessage, parsed: Option<&Parsed>, status, error: Option<String>, warnings: Vec<String>| Decision {
            ai,
            raw_output: raw.clone(),
            prompt: prompt.clone(),
            plan: parsed.and_then(|p| p.plan.clone()),
            report: DecisionReport {
                status,
                error,
                attempts,
                format: parsed.map(|p| p.format.to_string()),
                reasoning: parsed.and_then(|p| p.reasoning.clone()),
                stats: stats.clone(),
                warnings,
                no_call_margin: watched.answer.map(f64::from),
                more_call_margins: watched.more_calls.iter().copied().map(f64::from).collect(),
                bool_margins: watched.booleans.iter().map(|(param, m)| (param.clone(), f64::from(*m))).collect(),
                ..DecisionReport::new(&profile.name, request.phase, request.tool_calling, Some(decoding))
            },
        };
        let mut parsed = match parse::parse(&raw, &request.tools, request.phase) {
            Ok(parsed) => parsed,
            Err(e) => {
                // Unparseable structure: the text itself is the best answer we have.
                let ai = AiMessage::answer(raw.trim());
                return Ok(decision(ai, None, DecisionStatus::Invalid, Some(e.to_string()), warnings));
            }
        };
        warnings.extend(parsed.rejected.iter().map(|r| format!("refused call: {r}")));
        warnings.extend(parsed.repaired.iter().map(|r| format!("rewritten to the described format: {r}")));
        let both = !parsed.content.trim().is_empty() && !parsed.tool_calls.is_empty();
        let mut ai = AiMessage { content: parsed.content.clone(), tool_calls: parsed.tool_calls.clone() };
        let stated = faithful::stated_text(&request.messages);
        let tools = crate::tools::spec::ToolSpec::parse_all(&request.tools).unwrap_or_default();
        let question = super::last_question(&request.messages).map(super::follow_up::new_question);
        if parsed.plan.is_none() && watched.added_call && !ai.tool_calls.is_empty() {
            let made_up = |call: &ToolCall| profile.drop_made_up_calls && !super::made_up::made_up_calls(std::slice::from_ref(call), &tools, &stated).is_empty();
            let mut first_made_up = made_up(&ai.tool_calls[0]);
            if first_made_up && ai.tool_calls.len() >= 2 && ai.tool_calls[1].name == ai.tool_calls[0].name && !made_up(&ai.tool_calls[1]) {
                // The added call is the model's second try at the same call, with the values
                // written this time ("那 1 加仑呢？": 1.5 cups, then 1).
                let first = ai.tool_calls.remove(0);
                warnings.push(format!("a call with a value nobody wrote, the added call of the same tool kept in its place: {}", first.name));
                first_made_up = false;
            }
            // Measured on fresh requests: a follow-up asked afresh repeats an earlier call first,
            // and there the call the model nearly added was one nobody asked for.
            let follow_up = super::last_question(&request.messages).is_some_and(|q| super::follow_up::new_question(q) != q);
            // And only a call whose values the conversation writes: kept for its margin alone,
            // `calculator("2 * 3 + 4 * 5")` went with a request to find a recipe.
            let written = |call: &ToolCall| super::next_step::values_written(call, &tools, &super::next_step::conversation_text(&request.messages));
            let near = !follow_up
                && watched.more_calls.first().is_some_and(|&m| m > -super::extra_call::NEAR_MARGIN)
                && ai.tool_calls.get(1).is_some_and(written);
            let dropped = super::extra_call::check(&mut ai.tool_calls, question.unwrap_or_default(), first_made_up, near);
            warnings.extend(dropped.iter().map(|c| format!("an added call doing no new work, dropped: {c}")));
        }
        if parsed.plan.is_none() && !watched.added_call && profile.drop_unasked_tools {
            let dropped = super::extra_call::unasked(&mut ai.tool_calls, question.unwrap_or_default());
            warnings.extend(dropped.iter().map(|c| format!("a call of a tool the request does not ask for, dropped: {c}")));
        }
        if let Some(question) = question {
            let restored = faithful::restore_brackets(&mut ai.tool_calls, question);
            warnings.extend(restored.iter().map(|r| format!("brackets restored from the request: {r}")));
            let restored = faithful::restore_codes(&mut ai.tool_calls, question);
            warnings.extend(restored.iter().map(|r| format!("a code restored from the request: {r}")));
            let restored = faithful::restore_wide_punctuation(&mut ai.tool_calls, question);
            warnings.extend(restored.iter().map(|r| format!("the request's punctuation restored: {r}")));
            let restored = super::stated_times::put_right(&mut ai.tool_calls, &tools, question);
            warnings.extend(restored.iter().map(|r| format!("a date or time put back as the request states it: {r}")));
            let restored = faithful::restore_expression(&mut ai.tool_calls, question, &stated);
            warnings.extend(restored.iter().map(|r| format!("an expression nobody wrote, the request's put back: {r}")));
            if profile.add_wanted_expression && parsed.plan.is_none() {
                let earlier = super::calls_since_question(&request.messages);
                if let Some(added) = faithful::add_wanted_expression(&mut ai.tool_calls, &tools, question, &earlier) {
                    warnings.push(format!("the calculation the request asks for, which no call made, added: {added}"));
                }
            }
        }
        if profile.name_choices {
            if let Some(question) = question {
                // The request's own words: a next-step check's results name choices too.
                let asked = super::next_step::asked(question);
                let changed = super::choice_names::put_right(&mut ai.tool_calls, &tools, asked);
                warnings.extend(changed.iter().map(|c| format!("a choice the request does not name, put right: {c}")));
            }
        }
        let fresh = super::calls_since_question(&request.messages).is_empty();
        if profile.fan_out_choices && parsed.plan.is_none() && fresh {
            if let Some(question) = question {
                let fanned = super::choice_names::fan_out(&mut ai.tool_calls, &tools, question);
                warnings.extend(fanned.iter().map(|f| format!("one call for each choice the request lists: {f}")));
                let fanned = super::listed_names::fan_out(&mut ai.tool_calls, &tools, question);
                warnings.extend(fanned.iter().map(|f| format!("one call for each name the request lists: {f}")));
            }
        }
        if profile.noun_values {
            if let Some(question) = question {
                let changed = super::noun_values::put_right(&mut ai.tool_calls, &tools, super::next_step::asked(question));
                warnings.extend(changed.iter().map(|c| format!("a value the request names by the parameter's noun, put in: {c}")));
            }
        }
        if profile.name_flags {
            if let Some(question) = question {
                let asked = super::next_step::asked(question);
                let changed = super::named_flags::put_right(&mut ai.tool_calls, &tools, asked);
                warnings.extend(changed.iter().map(|c| format!("a flag the request asks for in so many words, put right: {c}")));
            }
        }
        if profile.omit_unstated_optional && !ai.tool_calls.is_empty() {
            let left_out = faithful::drop_unstated_optional(&mut ai.tool_calls, &tools, &stated);
            warnings.extend(left_out.iter().map(|a| format!("optional argument nobody stated, left out: {a}")));
        }
        if profile.add_named_choices && !ai.tool_calls.is_empty() {
            let added = faithful::add_named_choices(&mut ai.tool_calls, &tools, question.unwrap_or_default());
            warnings.extend(added.iter().map(|a| format!("optional choice the request names, added: {a}")));
        }
        if parsed.plan.is_none() {
            let repeated = drop_repeated_calls(&mut ai.tool_calls);
            warnings.extend(repeated.iter().map(|name| format!("a call repeating an earlier one of this decision, dropped: {name}")));
        }
        // A plan's steps run the calls as mended above.
        if let Some(plan) = parsed.plan.as_mut() {
            let steps = plan.plan.iter_mut().filter_map(|step| step.tool_call.as_mut());
            for (planned, mended) in steps.zip(&ai.tool_calls) {
                if planned.id == mended.id {
                    *planned = mended.clone();
                }
            }
        }
        if both && !parsed.format.is_envelope() {
            // Narration around native calls ("I'll read it. <tool_call>...") is how
            // these models talk, not a claim to be done: the calls are the decision.
            warnings.push(format!("text around {} tool calls dropped: {}", parsed.format, ai.content.trim()));
            ai.content.clear();
        } else if both {
            match request.exclusivity {
                Exclusivity::RetryThenContent if attempts == 1 => {
                    warnings.push("content and tool_calls both set: retrying once with a stronger reminder".into());
                    reminder = Reminder::Exclusive;
                    continue;
                }
                Exclusivity::RetryThenContent | Exclusivity::ContentWins => {
                    warnings.push("content and tool_calls both set: keeping the content, dropping the calls".into());
                    ai.tool_calls.clear();
                }
                Exclusivity::CallsWin => {
                    warnings.push("content and tool_calls both set: keeping the calls, dropping the content".into());
                    ai.content.clear();
                }
                Exclusivity::Error => {
                    let error = Some("content and tool_calls are both set".to_string());
                    return Ok(decision(ai, Some(&parsed), DecisionStatus::Invalid, error, warnings));
                }
            }
        }
        if ai.content.trim().is_empty() && ai.tool_calls.is_empty() && parsed.plan.is_none() {
            let error = if parsed.rejected.is_empty() {
                "the model gave neither an answer nor a tool call".to_string()
            } else {
                format!("every call was refused: {}", parsed.rejected.join("; "))
            };
            return Ok(decision(ai, Some(&parsed), DecisionStatus::Invalid, Some(error), warnings));
        }
        return Ok(decision(ai, Some(&parsed), DecisionStatus::Success, None, warnings));
    }
}

/// Drops each call that repeats an earlier one of the same decision (same tool, the
/// arguments agreeing where both give one): it would only run the same work twice. A
/// profile's `more_calls_bias` makes the model write a second call, which is such a repeat
/// where the request asked for one thing. The names of the calls dropped, in order.
fn drop_repeated_calls(calls: &mut Vec<ToolCall>) -> Vec<String> {
    let mut kept: Vec<ToolCall> = Vec::with_capacity(calls.len());
    let mut dropped = Vec::new();
    for call in calls.drain(..) {
        if kept.iter().any(|k| super::next_step::repeats(&call, k) || super::next_step::repeats(k, &call)) {
            dropped.push(call.name);
        } else {
            kept.push(call);
        }
    }
    *calls = kept;
    dropped
}

/// Where the raw text goes on with an answer written again from the tool results.
pub(crate) const ANSWER_MARK: &str = "\n\n[answer written from the tool results]\n";

/// Most tokens of an answer written from tool results.
pub(crate) const ANSWER_TOKENS: usize = 256;

/// Puts `answer`, written again from the question and its tool results alone
/// ([`super::synthesis`]), in `decided` in place of its own answer (which the report keeps);
/// the decision's own answer stays when this one came out empty. `raw` is what the model
/// wrote for it; the generations' figures add to the decision's.
pub(crate) fn answer_from_results(decided: &mut Decision, raw: &str, answer: &str, stats: &DecisionStats, warnings: &[String]) {
    add_generation(&mut decided.report.stats, stats);
    decided.report.warnings.extend(warnings.iter().cloned());
    decided.raw_output.push_str(ANSWER_MARK);
    decided.raw_output.push_str(raw);
    let answer = answer.trim();
    if answer.is_empty() {
        decided.report.warnings.push("the answer written from the tool results came out empty: the decision's own answer stays".into());
    } else if decided.ai.content.trim().is_empty() {
        decided.report.warnings.push("answer written from the tool results".into());
        decided.ai.content = answer.to_string();
    } else {
        decided.report.warnings.push(format!("answer written from the tool results (the decision's own: {})", one_line(&decided.ai.content, 120)));
        decided.ai.content = answer.to_string();
    }
}

/// Where the raw text goes on with the request asked afresh ([`super::next_step`]).
pub(crate) const NEXT_STEP_MARK: &str = "\n\n[next step checked: the request asked again with its results]\n";

/// Makes `calls`, the new calls of the next-step check `checked`, `decided`'s decision in
/// place of its answer (kept in the report); with none, the answer stays. The check's
/// figures and raw text add to the decision's; each dropped call is a warning.
pub(crate) fn next_step(decided: &mut Decision, checked: &Decision, calls: Vec<ToolCall>, dropped: &[super::next_step::Dropped]) {
    let total = &mut decided.report.stats;
    let s = &checked.report.stats;
    add_generation(total, s);
    total.mask_ms += s.mask_ms;
    total.grammar_ms += s.grammar_ms;
    total.grammar_wait_ms += s.grammar_wait_ms;
    decided.report.warnings.extend(checked.report.warnings.iter().cloned());
    decided.raw_output.push_str(NEXT_STEP_MARK);
    decided.raw_output.push_str(&checked.raw_output);
    for why in dropped {
        decided.report.warnings.push(format!("next step: dropped {why}"));
    }
    if !calls.is_empty() {
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        decided.report.warnings.push(format!(
            "next step: {} called instead of the answer (the decision's own: {})",
            names.join(", "),
            one_line(&decided.ai.content, 120)
        ));
        decided.ai = AiMessage::calls(calls);
    }
}

/// The decision after tool results made by the next-step check `checked` alone
/// ([`super::next_step::first`]): `calls`, its new calls, or where there are none, its
/// answer (empty when it made only repeats), which the brain then writes again from the
/// results. The raw text is the check's after [`NEXT_STEP_MARK`]; the report names the
/// request's way and says what the check dropped.
pub(crate) fn from_next_step(request: &DecisionRequest, mut checked: Decision, calls: Vec<ToolCall>, dropped: &[super::next_step::Dropped]) -> Decision {
    checked.raw_output = format!("{}{}", NEXT_STEP_MARK.trim_start(), checked.raw_output);
    let report = &mut checked.report;
    report.tool_calling = request.tool_calling;
    report.warnings.extend(dropped.iter().map(|why| format!("next step: dropped {why}")));
    if !report.valid() {
        // No call comes from an invalid check; the answer is written from the results.
        report.warnings.push(format!("next step: the check was invalid ({})", report.error.take().unwrap_or_default()));
        report.status = DecisionStatus::Success;
        checked.ai = AiMessage::answer("");
    } else if calls.is_empty() {
        checked.ai = AiMessage::answer(checked.ai.content.trim());
    } else {
        checked.ai = AiMessage::calls(calls);
    }
    checked
}

/// Where the raw text goes on when neither the next-step check asked first nor the answer
/// from the results said anything: the conversation's own decision follows.
pub(crate) const NO_ANSWER_YET: &str = "\n\n[no call and no answer from the check: decided in the conversation]\n";

/// The report's line for [`NO_ANSWER_YET`].
pub(crate) const NO_ANSWER_NOTE: &str = "the next-step check made no call and the answer from the results came out empty: decided in the conversation";

/// Where the raw text goes on with the answer for one result the answer left out.
pub(crate) fn part_mark(number: usize, tool: &str) -> String {
    format!("\n\n[answer for result {number} ({tool}), which the answer left out]\n")
}

/// Adds a further generation's tokens and times (after the decision's own) to its total.
pub(crate) fn add_generation(total: &mut DecisionStats, s: &DecisionStats) {
    // The tokens read from the prompt cache on disk, by whichever pass read them first (the
    // name prior's probe reads the system prefix before the decision, which then reuses it
    // in memory).
    total.prompt_cache_tokens = total.prompt_cache_tokens.max(s.prompt_cache_tokens);
    total.generated_tokens += s.generated_tokens;
    total.prefill_ms += s.prefill_ms;
    total.decode_ms += s.decode_ms;
    total.latency_ms += s.latency_ms;
}

/// Adds one attempt's figures to the running total of a decision.
fn accumulate(total: &mut DecisionStats, s: &DecisionStats) {
    total.prompt_tokens = s.prompt_tokens;
    total.reused_tokens = s.reused_tokens;
    total.generated_tokens += s.generated_tokens;
    total.prefill_ms += s.prefill_ms;
    total.decode_ms += s.decode_ms;
    total.prefill_tok_s = s.prefill_tok_s;
    total.decode_tok_s = s.decode_tok_s;
    total.latency_ms += s.latency_ms;
    total.mask_ms += s.mask_ms;
    total.grammar_ms += s.grammar_ms;
    total.grammar_wait_ms += s.grammar_wait_ms;
    total.fast_forwarded += s.fast_forwarded;
    total.prompt_cache_tokens = s.prompt_cache_tokens;
    if total.ttft_ms == 0.0 {
        total.ttft_ms = s.ttft_ms;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::brain::constrain::Margins;
    use crate::brain::next_step::Dropped;
    use crate::protocol::{Phase, ToolCalling};

    fn request(way: ToolCalling) -> DecisionRequest {
        DecisionRequest {
            messages: Vec::new(),
            tools: Vec::new(),
            phase: Phase::React,
            tool_calling: way,
            exclusivity: Exclusivity::RetryThenContent,
            decoding: None,
            strategy: None,
            more_calls_bias: None,
            answer_bias: None,
            name_calibration: None,
        }
    }

    fn checked(ai: AiMessage, status: DecisionStatus) -> Decision {
        let mut report = DecisionReport::new("qwen-0.5b", Phase::React, ToolCalling::PromptJson, Some(Decoding::Constrained));
        report.status = status;
        if status != DecisionStatus::Success {
            report.error = Some("the model gave neither an answer nor a tool call".into());
        }
        Decision { ai, raw_output: r#"{"tool_calls": []}"#.into(), prompt: "p".into(), plan: None, report }
    }

    fn call(name: &str) -> ToolCall {
        ToolCall { id: String::new(), name: name.into(), args: json!({"path": "a.md"}).as_object().unwrap().clone() }
    }

    #[test]
    fn a_plan_runs_its_calls_as_mended_from_the_request() {
        // The served 0.5B's plan for this question computed the plan prompt's own `2+2`.
        let tools: Vec<serde_json::Value> = serde_json::from_str(include_str!("../../data/messages/tools_schema_basic.json")).unwrap();
        let question = "读取 docs/agent_intro.txt 并计算 12*12";
        let request = DecisionRequest { messages: vec![crate::protocol::Message::user(question)], tools, phase: Phase::Plan, ..request(ToolCalling::PromptJson) };
        let raw = r#"{"reasoning": "read, then compute", "plan": [{"step": 1, "description": "Read the file", "tool_call": {"name": "file_reader", "args": {"path": "docs/agent_intro.txt"}}}, {"step": 2, "description": "Compute the expression", "tool_call": {"name": "calculator", "args": {"expression": "2+2"}}}]}"#;
        let attempt = |_| Ok(Attempt { raw: raw.into(), prompt: "p".into(), decoding: Decoding::Constrained, stats: DecisionStats::default(), warnings: Vec::new() });
        let decided = decide(&Profile::default(), &request, &Margin::default(), Vec::new(), attempt).unwrap();
        let plan = decided.plan.expect("a plan");
        assert_eq!(plan.plan[1].tool_call.as_ref().map(|c| &c.args["expression"]), Some(&json!("12*12")));
        assert_eq!(plan.plan[0].tool_call.as_ref().map(|c| &c.args["path"]), Some(&json!("docs/agent_intro.txt")));
        assert_eq!(decided.ai.tool_calls[1].args["expression"], "12*12");
        assert!(decided.report.warnings.iter().any(|w| w.contains(r#""2+2" -> "12*12""#)), "{:?}", decided.report.warnings);
    }

    /// `raw` decided for `question` under a profile with `more_calls_bias` 30, where the bias
    /// made the second call or not (`added_call`).
    fn decided_with_margins(question: &str, raw: &str, added_call: bool) -> Decision {
        decided_with(question, raw, vec![-14.0, -17.0], added_call)
    }

    fn decided_with(question: &str, raw: &str, more_calls: Vec<f32>, added_call: bool) -> Decision {
        let tools = vec![json!({"type": "function", "function": {"name": "maps.directions", "parameters": {"type": "object", "properties": {
            "origin": {"type": "string"}, "destination": {"type": "string"}, "mode": {"type": "string", "enum": ["driving", "walking", "cycling"]}
        }, "required": ["origin", "destination"]}}})];
        let request = DecisionRequest { messages: vec![crate::protocol::Message::user(question)], tools, ..request(ToolCalling::PromptJson) };
        let margin = Margin::default();
        *margin.lock().unwrap() = Margins { more_calls, added_call, ..Margins::default() };
        let attempt = |_| Ok(Attempt { raw: raw.into(), prompt: "p".into(), decoding: Decoding::Constrained, stats: DecisionStats::default(), warnings: Vec::new() });
        decide(&Profile { more_calls_bias: 30.0, ..Profile::default() }, &request, &margin, Vec::new(), attempt).unwrap()
    }

    #[test]
    fn an_added_call_the_model_nearly_wrote_stays_where_its_values_are_written() {
        let call = |id: &str, to: &str, mode: &str| format!(r#"{{"id": "{id}", "name": "maps.directions", "args": {{"origin": "Louvre", "destination": "{to}", "mode": "{mode}"}}}}"#);
        let raw = |calls: &[String]| format!(r#"{{"tool_calls": [{}], "content": ""}}"#, calls.join(", "));
        let asked = "Walking directions from the Louvre to the Eiffel Tower.";
        let two = raw(&[call("call_001", "Eiffel Tower", "walking"), call("call_002", "Eiffel Tower", "cycling")]);
        assert_eq!(decided_with(asked, &two, vec![-1.0, -17.0], true).ai.tool_calls.len(), 2);
        // Further off, or a value nobody wrote, or a follow-up asked afresh: it goes.
        assert_eq!(decided_with(asked, &two, vec![-3.5, -17.0], true).ai.tool_calls.len(), 1);
        let elsewhere = raw(&[call("call_001", "Eiffel Tower", "walking"), call("call_002", "Notre-Dame", "walking")]);
        assert_eq!(decided_with(asked, &elsewhere, vec![-1.0, -17.0], true).ai.tool_calls.len(), 1);
        let follow_up = format!("Earlier in this conversation:\n- The user asked: Hi\n- You answered: Hello!\n\nNew request: {asked}");
        assert_eq!(decided_with(&follow_up, &two, vec![-1.0, -17.0], true).ai.tool_calls.len(), 1);
    }

    #[test]
    fn an_added_call_stays_only_for_new_work_and_a_repeated_one_goes() {
        let call = |id: &str, mode: &str| format!(r#"{{"id": "{id}", "name": "maps.directions", "args": {{"origin": "Louvre", "destination": "Eiffel Tower", "mode": "{mode}"}}}}"#);
        let raw = |calls: &[String]| format!(r#"{{"tool_calls": [{}], "content": ""}}"#, calls.join(", "));
        let two = raw(&[call("call_001", "walking"), call("call_002", "cycling")]);
        // Walking and cycling asked for: the added call does the second.
        let both = decided_with_margins("Walking and cycling directions from the Louvre to the Eiffel Tower.", &two, true);
        assert_eq!(both.ai.tool_calls.len(), 2, "{:?}", both.report.warnings);
        assert_eq!(both.report.more_call_margins, [-14.0, -17.0]);
        // Walking only: cycling is a value nobody asked for; the call goes.
        let one = decided_with_margins("Walking directions from the Louvre to the Eiffel Tower.", &two, true);
        assert_eq!(one.ai.tool_calls.len(), 1);
        assert_eq!(one.ai.tool_calls[0].args["mode"], "walking");
        assert!(one.report.warnings.iter().any(|w| w.starts_with("an added call doing no new work, dropped: maps.directions(")), "{:?}", one.report.warnings);
        // The model's own second call is not judged.
        let own = decided_with_margins("Walking directions from the Louvre to the Eiffel Tower.", &two, false);
        assert_eq!(own.ai.tool_calls.len(), 2);
        // The same call twice: the repeat goes, whoever wrote it.
        let twice = decided_with_margins("Walking directions from the Louvre to the Eiffel Tower.", &raw(&[call("call_001", "walking"), call("call_002", "walking")]), false);
        assert_eq!(twice.ai.tool_calls.len(), 1);
        assert_eq!(twice.report.warnings, ["a call repeating an earlier one of this decision, dropped: maps.directions"]);
    }

    #[test]
    fn a_choice_the_request_does_not_name_is_put_right_when_the_profile_says_so() {
        let units = ["mm", "cm", "m", "km", "mile"];
        let tools = vec![json!({"type": "function", "function": {"name": "unit.convert_length", "parameters": {"type": "object", "properties": {
            "value": {"type": "number"}, "from_unit": {"type": "string", "enum": units}, "to_unit": {"type": "string", "enum": units}
        }, "required": ["value", "from_unit", "to_unit"]}}})];
        let request = DecisionRequest { messages: vec![crate::protocol::Message::user("Convert 5 miles to km.")], tools, ..request(ToolCalling::PromptJson) };
        let raw = r#"{"tool_calls": [{"id": "call_001", "name": "unit.convert_length", "args": {"value": 5, "from_unit": "m", "to_unit": "km"}}], "content": ""}"#;
        let decided = |profile: &Profile| {
            let attempt = |_| Ok(Attempt { raw: raw.into(), prompt: "p".into(), decoding: Decoding::Constrained, stats: DecisionStats::default(), warnings: Vec::new() });
            decide(profile, &request, &Margin::default(), Vec::new(), attempt).unwrap()
        };
        let on = decided(&Profile { name_choices: true, ..Profile::default() });
        assert_eq!(on.ai.tool_calls[0].args["from_unit"], "mile");
        assert_eq!(on.report.warnings, [r#"a choice the request does not name, put right: unit.convert_length: from_unit "m" -> "mile""#]);
        let off = decided(&Profile::default());
        assert_eq!(off.ai.tool_calls[0].args["from_unit"], "m");
    }

    #[test]
    fn a_flag_the_request_asks_for_is_put_right_when_the_profile_says_so() {
        let tools = vec![json!({"type": "function", "function": {"name": "maps.nearby", "parameters": {"type": "object", "properties": {
            "location": {"type": "string"}, "open_now": {"type": "boolean", "description": "Only places open now. Default: false."}
        }, "required": ["location"]}}})];
        let request = DecisionRequest { messages: vec![crate::protocol::Message::user("在静安寺附近找现在营业的药店。")], tools, ..request(ToolCalling::PromptJson) };
        let raw = r#"{"tool_calls": [{"id": "call_001", "name": "maps.nearby", "args": {"location": "静安寺", "open_now": false}}], "content": ""}"#;
        let decided = |profile: &Profile| {
            let attempt = |_| Ok(Attempt { raw: raw.into(), prompt: "p".into(), decoding: Decoding::Constrained, stats: DecisionStats::default(), warnings: Vec::new() });
            decide(profile, &request, &Margin::default(), Vec::new(), attempt).unwrap()
        };
        let on = decided(&Profile { name_flags: true, ..Profile::default() });
        assert_eq!(on.ai.tool_calls[0].args["open_now"], true);
        assert_eq!(on.report.warnings, ["a flag the request asks for in so many words, put right: maps.nearby: open_now false -> true"]);
        let off = decided(&Profile::default());
        assert_eq!(off.ai.tool_calls[0].args["open_now"], false);
    }

    #[test]
    fn a_check_asked_first_gives_its_new_calls_or_leaves_the_answer_to_the_results() {
        // A new call: the decision, under the request's way, the check's text after the mark.
        let made = from_next_step(&request(ToolCalling::Builtin), checked(AiMessage::calls(vec![call("file_reader")]), DecisionStatus::Success), vec![call("file_reader")], &[]);
        assert_eq!(made.ai.tool_calls.len(), 1);
        assert_eq!(made.report.tool_calling, ToolCalling::Builtin);
        assert_eq!(made.raw_output, format!("{}{}", NEXT_STEP_MARK.trim_start(), r#"{"tool_calls": []}"#));

        // Only a repeat: no call and no answer yet (the brain writes it from the results).
        let repeat = AiMessage::calls(vec![call("file_reader")]);
        let done = from_next_step(&request(ToolCalling::PromptJson), checked(repeat, DecisionStatus::Success), Vec::new(), &[Dropped::Repeat("file_reader".into())]);
        assert!(done.ai.tool_calls.is_empty() && done.ai.content.is_empty());
        assert_eq!(done.report.warnings, ["next step: dropped file_reader: repeats a call already made"]);

        // The check answered: its answer stays until one from the results replaces it.
        let answered = from_next_step(&request(ToolCalling::PromptJson), checked(AiMessage::answer(" 13.2 "), DecisionStatus::Success), Vec::new(), &[]);
        assert_eq!(answered.ai.content, "13.2");

        // An invalid check is no decision's failure: nothing from it is kept.
        let invalid = from_next_step(&request(ToolCalling::PromptJson), checked(AiMessage::answer("{\"tool_"), DecisionStatus::Invalid), Vec::new(), &[]);
        assert!(invalid.valid() && invalid.ai.content.is_empty() && invalid.report.error.is_none());
        assert!(invalid.report.warnings[0].starts_with("next step: the check was invalid (the model gave neither"), "{:?}", invalid.report.warnings);
    }

    #[test]
    fn an_answer_from_the_results_names_the_decisions_own_only_when_there_was_one() {
        let stats = DecisionStats { generated_tokens: 5, latency_ms: 10.0, ..DecisionStats::default() };
        let mut empty = checked(AiMessage::answer(""), DecisionStatus::Success);
        answer_from_results(&mut empty, "It is 13.2.", "It is 13.2.", &stats, &[]);
        assert_eq!(empty.ai.content, "It is 13.2.");
        assert_eq!(empty.report.warnings, ["answer written from the tool results"]);
        assert_eq!(empty.report.stats.generated_tokens, 5);

        let mut own = checked(AiMessage::answer("13"), DecisionStatus::Success);
        answer_from_results(&mut own, "It is 13.2.", "It is 13.2.", &stats, &[]);
        assert_eq!(own.report.warnings, ["answer written from the tool results (the decision's own: 13)"]);
        let mut kept = checked(AiMessage::answer("13"), DecisionStatus::Success);
        answer_from_results(&mut kept, "  ", "  ", &stats, &[]);
        assert_eq!(kept.ai.content, "13");
    }
}
