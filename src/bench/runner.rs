//! Runs every setting x case x repeat: one decision each, scored, one record each.
//!
//! Settings run one after another with one brain per profile (loaded once by the caller).
//! `stop` ends the run before the next decision; `cancel` is handed to the brain, which
//! stops its current generation within a token (that decision is not recorded).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::case::{BenchCase, FunctionOrder};
use super::{score, BenchError};
use crate::brain::{Brain, BrainError, Decision, DecisionRequest, Decoding, Exclusivity, Profile, Strategy};
use crate::protocol::{Phase, Stream, ToolCall, ToolCalling};

/// What each decision is asked for, as `b4 decide --mode` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum BenchMode {
    /// The deterministic mock brain, ReAct decisions.
    Mock,
    /// One ReAct decision per case.
    PromptJson,
    /// A plan per case; its steps' calls are scored.
    PlanExecute,
}

impl BenchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            BenchMode::Mock => "mock",
            BenchMode::PromptJson => "prompt_json",
            BenchMode::PlanExecute => "plan_execute",
        }
    }

    pub fn phase(self) -> Phase {
        match self {
            BenchMode::PlanExecute => Phase::Plan,
            BenchMode::Mock | BenchMode::PromptJson => Phase::React,
        }
    }
}

/// One column of the report: a profile with a tool-calling way and a decoding.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// `profile-tool_calling-decoding`, safe as a directory name.
    pub name: String,
    pub profile: Profile,
    pub tool_calling: ToolCalling,
    pub decoding: Decoding,
}

impl Setting {
    pub fn new(profile: Profile, tool_calling: ToolCalling, decoding: Decoding) -> Self {
        let decoding_name = match decoding {
            Decoding::Free => "free",
            Decoding::Constrained => "constrained",
        };
        let mut name = format!("{}-{}-{decoding_name}", safe_name(&profile.name), tool_calling.as_str());
        // The seeds' strategy is the unnamed one.
        if profile.strategy != Strategy::CallsFirst {
            name = format!("{name}-{}", profile.strategy.as_str());
        }
        Self { name, profile, tool_calling, decoding }
    }
}

/// Letters, digits, `.`, `-` and `_` kept (any script); anything else becomes `_`.
pub fn safe_name(name: &str) -> String {
    let safe: String = name.chars().map(|c| if c.is_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
    match safe.trim_matches('.') {
        "" => "_".into(),
        _ => safe,
    }
}

/// Everything one run needs.
#[derive(Clone, Debug)]
pub struct BenchPlan {
    pub mode: BenchMode,
    pub settings: Vec<Setting>,
    pub cases: Vec<BenchCase>,
    pub repeat: usize,
    /// The global tools schema; a case's own tools replace it.
    pub tools: Option<Vec<Value>>,
    pub exclusivity: Exclusivity,
    /// The order each case's functions are offered in.
    pub function_order: FunctionOrder,
}

impl BenchPlan {
    pub fn decisions(&self) -> usize {
        self.settings.len() * self.cases.len() * self.repeat.max(1)
    }

    /// Fails when a case has no tools to offer (neither its own nor the global schema).
    pub fn check(&self) -> Result<(), BenchError> {
        self.cases.iter().try_for_each(|case| self.tools_for(case).map(|_| ()))
    }

    fn tools_for<'a>(&'a self, case: &'a BenchCase) -> Result<&'a Vec<Value>, BenchError> {
        case.tools.as_ref().or(self.tools.as_ref()).ok_or_else(|| BenchError::NoTools { case: case.id.clone() })
    }

    /// What `case` asks under `setting`: its messages, its tools in the plan's order.
    fn request(&self, case: &BenchCase, setting: &Setting) -> Result<DecisionRequest, BenchError> {
        let mut tools = self.tools_for(case)?.clone();
        self.function_order.apply(&mut tools);
        Ok(DecisionRequest {
            messages: case.messages.clone(),
            tools,
            phase: self.mode.phase(),
            tool_calling: setting.tool_calling,
            exclusivity: self.exclusivity,
            decoding: Some(setting.decoding),
            strategy: Some(setting.profile.strategy),
            more_calls_bias: None,
            answer_bias: None,
            name_calibration: None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordStatus {
    /// The output parsed.
    Success,
    /// The output did not parse.
    Invalid,
    /// The brain failed (no output).
    Error,
}

/// One decision's outcome and figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CaseRecord {
    pub setting: String,
    pub case: String,
    pub category: String,
    /// 1-based repeat number.
    pub run: usize,
    pub status: RecordStatus,
    pub valid: bool,
    /// `None` when the case has no expected decision.
    pub correct: Option<bool>,
    /// Why it is not correct.
    pub reason: Option<String>,
    /// The brain's error, or why the output was invalid or repaired.
    pub error: Option<String>,
    /// Wall time of the decision.
    pub latency_ms: f64,
    pub prompt_tokens: usize,
    pub reused_tokens: usize,
    pub generated_tokens: usize,
    pub decode_tok_s: f64,
    /// Decode time of the decision, mask time included.
    #[serde(default)]
    pub decode_ms: f64,
    /// Constrained decoding: time computing token masks (part of `decode_ms`).
    #[serde(default)]
    pub mask_ms: f64,
    /// Constrained decoding: time compiling the decision's grammar.
    #[serde(default)]
    pub grammar_ms: f64,
    /// Calls scored: the AIMessage's, or the plan's steps' in plan_execute mode.
    pub tool_calls: usize,
    pub tool_names: Vec<String>,
    /// Characters of the AIMessage content.
    pub content_len: usize,
    pub format: Option<String>,
    pub attempts: usize,
    pub warnings: Vec<String>,
}

/// The decision about to be made.
pub struct Job<'a> {
    /// 0-based position among all decisions of the run.
    pub index: usize,
    pub total: usize,
    pub setting: &'a Setting,
    pub case: &'a BenchCase,
    /// 1-based repeat number.
    pub run: usize,
    pub repeat: usize,
    pub request: &'a DecisionRequest,
}

/// Told about each decision: the progress bar and the per-case files live here.
pub trait Observer {
    fn started(&mut self, _job: &Job<'_>) {}
    fn token(&mut self, _text: &str) {}
    fn finished(&mut self, job: &Job<'_>, record: &CaseRecord, decision: Option<&Decision>) -> anyhow::Result<()>;
}

/// The records of a run; `interrupted` when it stopped before the last decision.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BenchRun {
    pub records: Vec<CaseRecord>,
    pub interrupted: bool,
}

/// Runs the plan. `brains` holds one brain per profile name of the settings.
pub fn run(
    plan: &BenchPlan,
    brains: &mut BTreeMap<String, Box<dyn Brain>>,
    observer: &mut dyn Observer,
    stop: &AtomicBool,
    cancel: &AtomicBool,
) -> Result<BenchRun, BenchError> {
    plan.check()?;
    let total = plan.decisions();
    let repeat = plan.repeat.max(1);
    let mut result = BenchRun::default();
    for setting in &plan.settings {
        let brain = brains.get_mut(&setting.profile.name).ok_or_else(|| BenchError::NoBrain(setting.profile.name.clone()))?;
        for case in &plan.cases {
            let request = plan.request(case, setting)?;
            for run in 1..=repeat {
                if stop.load(Ordering::SeqCst) {
                    result.interrupted = true;
                    return Ok(result);
                }
                let job = Job { index: result.records.len(), total, setting, case, run, repeat, request: &request };
                observer.started(&job);
                let started = Instant::now();
                let outcome = brain.decide(
                    &request,
                    &mut |piece| {
                        if let Stream::Text(text) = piece {
                            observer.token(text);
                        }
                    },
                    cancel,
                );
                let latency_ms = started.elapsed().as_secs_f64() * 1e3;
                let (record, decision) = match outcome {
                    Err(BrainError::Cancelled) => {
                        result.interrupted = true;
                        return Ok(result);
                    }
                    Ok(decision) => (record_decision(plan, setting, case, run, &decision, latency_ms), Some(decision)),
                    Err(e) => (record_error(setting, case, run, &e, latency_ms), None),
                };
                observer.finished(&job, &record, decision.as_ref()).map_err(BenchError::Output)?;
                result.records.push(record);
            }
        }
    }
    Ok(result)
}

/// The calls a decision made: the plan's steps in the plan phase, else the AIMessage's.
pub fn decided_calls(decision: &Decision) -> Vec<ToolCall> {
    match &decision.plan {
        Some(plan) => plan.plan.iter().filter_map(|step| step.tool_call.clone()).collect(),
        None => decision.ai.tool_calls.clone(),
    }
}

fn record_decision(plan: &BenchPlan, setting: &Setting, case: &BenchCase, run: usize, decision: &Decision, latency_ms: f64) -> CaseRecord {
    let calls = decided_calls(decision);
    let report = &decision.report;
    let valid = report.valid();
    let verdict = case.expected.as_ref().map(|expected| {
        if !valid {
            return Err(format!("the output did not parse: {}", report.error.as_deref().unwrap_or("no reason given")));
        }
        let tools = case.tools.as_deref().or(plan.tools.as_deref()).unwrap_or_default();
        score::score(expected, &calls, &decision.ai.content, tools)
    });
    let stats = &report.stats;
    CaseRecord {
        setting: setting.name.clone(),
        case: case.id.clone(),
        category: case.category.clone(),
        run,
        status: if valid { RecordStatus::Success } else { RecordStatus::Invalid },
        valid,
        correct: verdict.as_ref().map(Result::is_ok),
        reason: verdict.and_then(Result::err),
        error: report.error.clone(),
        latency_ms,
        prompt_tokens: stats.prompt_tokens,
        reused_tokens: stats.reused_tokens,
        generated_tokens: stats.generated_tokens,
        decode_tok_s: stats.decode_tok_s,
        decode_ms: stats.decode_ms,
        mask_ms: stats.mask_ms,
        grammar_ms: stats.grammar_ms,
        tool_calls: calls.len(),
        tool_names: calls.into_iter().map(|c| c.name).collect(),
        content_len: decision.ai.content.chars().count(),
        format: report.format.clone(),
        attempts: report.attempts,
        warnings: report.warnings.clone(),
    }
}

fn record_error(setting: &Setting, case: &BenchCase, run: usize, error: &BrainError, latency_ms: f64) -> CaseRecord {
    CaseRecord {
        setting: setting.name.clone(),
        case: case.id.clone(),
        category: case.category.clone(),
        run,
        status: RecordStatus::Error,
        valid: false,
        correct: case.expected.as_ref().map(|_| false),
        reason: case.expected.as_ref().map(|_| format!("the brain failed: {error}")),
        error: Some(error.to_string()),
        latency_ms,
        prompt_tokens: 0,
        reused_tokens: 0,
        generated_tokens: 0,
        decode_tok_s: 0.0,
        decode_ms: 0.0,
        mask_ms: 0.0,
        grammar_ms: 0.0,
        tool_calls: 0,
        tool_names: Vec::new(),
        content_len: 0,
        format: None,
        attempts: 0,
        warnings: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::bench::case::case_from_value;
    use crate::brain::mock::MockBrain;
    use crate::brain::Backend;
    use crate::tools::spec::ToolSpec;

    fn mock_profile() -> Profile {
        Profile { name: "mock".into(), backend: Backend::Mock, ..Profile::default() }
    }

    fn tools() -> Vec<Value> {
        vec![
            json!({"type": "function", "function": {"name": "calculator", "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}}}),
            json!({"type": "function", "function": {"name": "file_reader", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "max_chars": {"type": "integer"}}, "required": ["path"]}}}),
            json!({"type": "function", "function": {"name": "local_file_search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "max_results": {"type": "integer"}}, "required": ["query"]}}}),
        ]
    }

    fn cases() -> Vec<BenchCase> {
        let case = |id: &str, q: &str, expected: Value| {
            case_from_value("t", id, json!({"id": id, "category": "simple", "messages": [{"role": "user", "content": q}], "expected": expected})).unwrap()
        };
        vec![
            case("calc", "计算 2 + 2", json!({"tool_calls": [{"name": "calculator", "args": {"expression": ["2 + 2"]}}]})),
            case("wrong", "计算 2 + 2", json!({"tool_calls": [{"name": "calculator", "args": {"expression": ["2 + 3"]}}]})),
            case("none", "法国的首都是哪里？", json!({"no_tool_call": true})),
        ]
    }

    fn plan(mode: BenchMode, repeat: usize) -> BenchPlan {
        BenchPlan {
            mode,
            settings: vec![
                Setting::new(mock_profile(), ToolCalling::PromptJson, Decoding::Free),
                Setting::new(mock_profile(), ToolCalling::Builtin, Decoding::Free),
            ],
            cases: cases(),
            repeat,
            tools: Some(tools()),
            exclusivity: Exclusivity::default(),
            function_order: FunctionOrder::Given,
        }
    }

    #[test]
    fn the_plan_offers_each_case_its_functions_in_the_order_asked() {
        let names = |p: &BenchPlan| -> Vec<String> {
            let request = p.request(&p.cases[0], &p.settings[0]).unwrap();
            ToolSpec::parse_all(&request.tools).unwrap().into_iter().map(|t| t.name).collect()
        };
        let mut p = plan(BenchMode::PromptJson, 1);
        assert_eq!(names(&p), ["calculator", "file_reader", "local_file_search"]);
        p.function_order = FunctionOrder::Reversed;
        assert_eq!(names(&p), ["local_file_search", "file_reader", "calculator"]);
        p.function_order = FunctionOrder::Rotated;
        assert_eq!(names(&p), ["file_reader", "local_file_search", "calculator"]);
        // A case's own tools are reordered the same way.
        p.cases[0].tools = Some(tools()[..2].to_vec());
        assert_eq!(names(&p), ["file_reader", "calculator"]);
    }

    fn brains() -> BTreeMap<String, Box<dyn Brain>> {
        BTreeMap::from([("mock".to_string(), Box::new(MockBrain::new(mock_profile())) as Box<dyn Brain>)])
    }

    /// Remembers what it was told; can raise `stop` after some decisions.
    #[derive(Default)]
    struct Recorder<'a> {
        started: Vec<(usize, String, String, usize)>,
        tokens: usize,
        stop_after: Option<(usize, &'a AtomicBool)>,
    }

    impl Observer for Recorder<'_> {
        fn started(&mut self, job: &Job<'_>) {
            self.started.push((job.index, job.setting.name.clone(), job.case.id.clone(), job.run));
        }
        fn token(&mut self, _text: &str) {
            self.tokens += 1;
        }
        fn finished(&mut self, job: &Job<'_>, _record: &CaseRecord, decision: Option<&Decision>) -> anyhow::Result<()> {
            assert!(decision.is_some());
            if let Some((after, stop)) = self.stop_after {
                if job.index + 1 >= after {
                    stop.store(true, Ordering::SeqCst);
                }
            }
            Ok(())
        }
    }

    #[test]
    fn every_setting_case_and_repeat_gets_a_scored_record() {
        let (stop, cancel) = (AtomicBool::new(false), AtomicBool::new(false));
        let mut observer = Recorder::default();
        let run = run(&plan(BenchMode::Mock, 2), &mut brains(), &mut observer, &stop, &cancel).unwrap();
        assert!(!run.interrupted);
        assert_eq!(run.records.len(), 12);
        assert_eq!(observer.tokens, 12);
        assert_eq!(observer.started[0], (0, "mock-prompt_json-free".into(), "calc".into(), 1));
        assert_eq!(observer.started[11], (11, "mock-builtin-free".into(), "none".into(), 2));
        let outcome: Vec<(&str, usize, Option<bool>)> = run.records.iter().take(6).map(|r| (r.case.as_str(), r.run, r.correct)).collect();
        assert_eq!(
            outcome,
            vec![("calc", 1, Some(true)), ("calc", 2, Some(true)), ("wrong", 1, Some(false)), ("wrong", 2, Some(false)), ("none", 1, Some(false)), ("none", 2, Some(false))]
        );
        let wrong = &run.records[2];
        assert_eq!(wrong.reason.as_deref(), Some("calculator: param 'expression': got \"2 + 2\", expected one of [\"2 + 3\"]"));
        let none = &run.records[4];
        assert_eq!(none.reason.as_deref(), Some("expected no tool call, got 2: [file_reader, local_file_search]"));
        assert_eq!((none.status, none.valid, none.tool_calls, none.content_len), (RecordStatus::Success, true, 2, 0));
        assert_eq!(none.tool_names, vec!["file_reader", "local_file_search"]);
    }

    #[test]
    fn a_final_answer_is_scored_on_the_decisions_content() {
        // The mock answers tool results by quoting their output.content.
        let case = |id: &str, must_contain: Value| {
            let messages = json!([
                {"role": "user", "content": "读一下 notes/plan.md"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "call_001", "name": "file_reader", "args": {"path": "notes/plan.md"}}]},
                {"role": "tool", "tool_call_id": "call_001", "name": "file_reader", "status": "success",
                 "content": json!({"status": "success", "output": {"content": "发布日期定在 3 月 14 日。"}}).to_string()}
            ]);
            let expected = json!({"final_answer": {"must_contain": must_contain}});
            case_from_value("t", id, json!({"id": id, "category": "multi_turn", "messages": messages, "expected": expected})).unwrap()
        };
        let mut p = plan(BenchMode::Mock, 1);
        p.settings.truncate(1);
        p.cases = vec![case("right", json!([["3 月 14 日", "3月14日"]])), case("wrong", json!([["3 月 15 日"]]))];
        let (stop, cancel) = (AtomicBool::new(false), AtomicBool::new(false));
        let run = run(&p, &mut brains(), &mut Recorder::default(), &stop, &cancel).unwrap();
        let outcome: Vec<(&str, Option<bool>, Option<&str>)> = run.records.iter().map(|r| (r.case.as_str(), r.correct, r.reason.as_deref())).collect();
        assert_eq!(outcome, [("right", Some(true), None), ("wrong", Some(false), Some("the answer lacks 3 月 15 日"))]);
    }

    #[test]
    fn plan_execute_scores_the_plans_calls() {
        let (stop, cancel) = (AtomicBool::new(false), AtomicBool::new(false));
        let mut observer = Recorder::default();
        let run = run(&plan(BenchMode::PlanExecute, 1), &mut brains(), &mut observer, &stop, &cancel).unwrap();
        let correct: Vec<Option<bool>> = run.records.iter().take(3).map(|r| r.correct).collect();
        assert_eq!(correct, vec![Some(true), Some(false), Some(false)]);
        assert_eq!(run.records[0].format.as_deref(), Some("mock"));
    }

    #[test]
    fn stop_ends_the_run_after_the_current_decision() {
        let (stop, cancel) = (AtomicBool::new(false), AtomicBool::new(false));
        let mut observer = Recorder { stop_after: Some((4, &stop)), ..Recorder::default() };
        let run = run(&plan(BenchMode::Mock, 1), &mut brains(), &mut observer, &stop, &cancel).unwrap();
        assert!(run.interrupted);
        assert_eq!(run.records.len(), 4);
        assert_eq!(run.records[3].setting, "mock-builtin-free");
    }

    #[test]
    fn a_case_without_tools_is_refused_before_anything_runs() {
        let (stop, cancel) = (AtomicBool::new(false), AtomicBool::new(false));
        let mut p = plan(BenchMode::Mock, 1);
        p.tools = None;
        let mut observer = Recorder::default();
        let err = run(&p, &mut brains(), &mut observer, &stop, &cancel).unwrap_err();
        assert_eq!(err.to_string(), "case calc: it has no tools and no --tools_schema was given");
        assert!(observer.started.is_empty());
    }

    #[test]
    fn setting_names_are_safe_directory_names() {
        let profile = Profile { name: "my model/v2".into(), ..mock_profile() };
        assert_eq!(Setting::new(profile, ToolCalling::Builtin, Decoding::Constrained).name, "my_model_v2-builtin-constrained");
        assert_eq!(safe_name(".."), "_");
        assert_eq!(safe_name("案例_1"), "案例_1");
    }
}
