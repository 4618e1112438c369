//! The deterministic mock brain: the seeds' mock behaviour, for demos and tests.
//!
//! First turn: tool calls picked from cues in the question (a file path, an arithmetic
//! expression, a search request, a CSV file), falling back to the seeds' pair
//! `file_reader(docs/agent_intro.txt)` + `local_file_search("Agent")`. After tool results:
//! a final answer that sums up every ToolMessage, or the seeds' failure message when any
//! tool failed. In the plan phase: a plan with one step per call (the seeds' three steps
//! when the question has no cues). A profile's `mock_delay_ms` makes each decision take
//! that long, or until it is cancelled.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{Brain, BrainError, Decision, DecisionRequest, Profile, TokenSink};
use crate::protocol::{
    AiMessage, Args, DecisionReport, DecisionStats, Message, Phase, Plan, PlanStep, Stream, ToolCall, ToolStatus,
};

pub struct MockBrain {
    profile: Profile,
}

impl MockBrain {
    pub fn new(profile: Profile) -> Self {
        Self { profile }
    }
}

impl Brain for MockBrain {
    fn profile(&self) -> &Profile {
        &self.profile
    }

    fn decide(
        &mut self,
        request: &DecisionRequest,
        on_token: TokenSink<'_>,
        cancel: &AtomicBool,
    ) -> Result<Decision, BrainError> {
        let started = Instant::now();
        let delay = Duration::from_millis(self.profile.mock_delay_ms);
        while started.elapsed() < delay {
            if cancel.load(Ordering::SeqCst) {
                return Err(BrainError::Cancelled);
            }
            std::thread::sleep(delay.saturating_sub(started.elapsed()).min(Duration::from_millis(10)));
        }
        let (ai, plan) = mock_decide(&request.messages, request.phase);
        let raw = match &plan {
            Some(plan) => serde_json::to_string(plan).unwrap_or_default(),
            None => serde_json::to_string(&ai).unwrap_or_default(),
        };
        on_token(Stream::Text(&raw));
        let latency_ms = started.elapsed().as_secs_f64() * 1e3;
        // No model decoded: the report says so (no decoding, no token speeds).
        let report = DecisionReport {
            format: Some("mock".into()),
            stats: DecisionStats { latency_ms, ..DecisionStats::default() },
            ..DecisionReport::new(&self.profile.name, request.phase, request.tool_calling, None)
        };
        Ok(Decision { ai, raw_output: raw, prompt: String::new(), plan, report })
    }
}

/// The mock's decision for a conversation.
pub fn mock_decide(messages: &[Message], phase: Phase) -> (AiMessage, Option<Plan>) {
    let results = tool_results_since_last_user(messages);
    if !results.is_empty() {
        return (summarize(&results), None);
    }
    let question = last_user_question(messages);
    let mut ai = AiMessage::calls(calls_for(&question));
    ai.number_calls();
    if phase == Phase::Plan {
        let plan = Plan {
            reasoning: "Mock plan: one step per task found in the question.".into(),
            plan: ai
                .tool_calls
                .iter()
                .enumerate()
                .map(|(i, call)| PlanStep {
                    step: i + 1,
                    description: describe(call),
                    tool_call: Some(call.clone()),
                })
                .collect(),
        };
        return (ai, Some(plan));
    }
    (ai, None)
}

fn last_user_question(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::User { content } => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

fn tool_results_since_last_user(messages: &[Message]) -> Vec<&crate::protocol::ToolMessage> {
    let start = messages.iter().rposition(|m| matches!(m, Message::User { .. })).map_or(0, |i| i + 1);
    messages[start..]
        .iter()
        .filter_map(|m| match m {
            Message::Tool(tm) => Some(tm),
            _ => None,
        })
        .collect()
}

/// Every result must have succeeded; then three points from all their contents.
fn summarize(results: &[&crate::protocol::ToolMessage]) -> AiMessage {
    for tm in results {
        let body_ok = tm.body().and_then(|b| b.get("status").and_then(Value::as_str).map(|s| s == "success"));
        if tm.status != ToolStatus::Success || body_ok == Some(false) {
            let detail = tm.error_text().unwrap_or_else(|| "无法解析工具返回内容".into());
            return AiMessage::answer(format!("工具调用失败，无法完成请求：{detail}"));
        }
        if body_ok.is_none() {
            return AiMessage::answer("工具调用失败：无法解析工具返回内容");
        }
    }
    let combined: Vec<String> = results.iter().filter_map(|tm| tm.output_text()).filter(|t| !t.trim().is_empty()).collect();
    if combined.is_empty() {
        return AiMessage::answer("三条中文要点如下：\n1. 工具结果未提供可提取内容");
    }
    AiMessage::answer(format!("三条中文要点如下：\n{}", key_points(&combined)))
}

/// The sentences (or lines) of a text, cleaned of Markdown bullets.
fn sentences(text: &str) -> Vec<&str> {
    text.lines()
        .flat_map(|line| line.split_inclusive(['。', '！', '？']))
        .map(|s| s.trim().trim_start_matches(['#', '-', '*', ' ']).trim())
        .filter(|s| !s.is_empty())
        .collect()
}

/// One point from every result, then more from the first ones until there are three;
/// numbered.
fn key_points(results: &[String]) -> String {
    let per_result: Vec<Vec<&str>> = results.iter().map(|r| sentences(r)).collect();
    let mut points: Vec<&str> = per_result.iter().filter_map(|s| s.first().copied()).collect();
    let rest = per_result.iter().flat_map(|s| s.iter().skip(1).copied());
    points.extend(rest.take(3usize.saturating_sub(points.len())));
    points.iter().enumerate().map(|(i, p)| format!("{}. {p}", i + 1)).collect::<Vec<_>>().join("\n")
}

fn describe(call: &ToolCall) -> String {
    let what = match call.name.as_str() {
        "file_reader" => "读取文件",
        "calculator" => "计算表达式",
        "local_file_search" => "搜索本地文件",
        "table_analyzer" => "分析表格",
        "format_converter" => "转换格式",
        _ => "调用工具",
    };
    let first_arg = call.args.values().next().map(|v| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    match first_arg {
        Some(arg) => format!("{what}: {arg}"),
        None => what.to_string(),
    }
}

fn call(name: &str, args: Value) -> ToolCall {
    let args = match args {
        Value::Object(map) => map,
        _ => Args::new(),
    };
    ToolCall { id: String::new(), name: name.into(), args }
}

/// The calls the question's cues ask for, or the seeds' default pair.
fn calls_for(question: &str) -> Vec<ToolCall> {
    let mut calls = Vec::new();
    for path in file_paths(question) {
        if path.to_lowercase().ends_with(".csv") {
            calls.push(call("table_analyzer", json!({"path": path})));
        } else {
            calls.push(call("file_reader", json!({"path": path, "max_chars": 2000})));
        }
    }
    if let Some(expr) = arithmetic(question) {
        calls.push(call("calculator", json!({"expression": expr})));
    }
    let lower = question.to_lowercase();
    if ["搜索", "查找", "search", "find"].iter().any(|cue| lower.contains(cue)) {
        let query = quoted(question).unwrap_or_else(|| "Agent".into());
        calls.push(call("local_file_search", json!({"query": query, "max_results": 5})));
    }
    if calls.is_empty() {
        calls.push(call("file_reader", json!({"path": "docs/agent_intro.txt", "max_chars": 2000})));
        calls.push(call("local_file_search", json!({"query": "Agent"})));
    }
    calls
}

/// Words that look like relative file paths with a known extension.
fn file_paths(text: &str) -> Vec<String> {
    const EXTS: [&str; 7] = [".txt", ".md", ".csv", ".json", ".yaml", ".yml", ".log"];
    let mut found: Vec<String> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || "._-/".contains(c)))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| EXTS.iter().any(|e| w.to_lowercase().ends_with(e)) && w.len() > 4)
        .map(str::to_string)
        .collect();
    found.dedup();
    found
}

/// The longest run of digits, operators, parentheses and spaces that has an operator.
fn arithmetic(text: &str) -> Option<String> {
    let is_expr = |c: char| c.is_ascii_digit() || " .+-*/^()".contains(c);
    let mut best: Option<String> = None;
    let mut current = String::new();
    for c in text.chars().chain(std::iter::once('\u{0}')) {
        if is_expr(c) {
            current.push(c);
            continue;
        }
        let candidate = current.trim().trim_matches(|c: char| "+-*/^.".contains(c)).trim().to_string();
        let has_op = candidate.chars().any(|c| "+-*/^".contains(c));
        let has_digit = candidate.chars().any(|c| c.is_ascii_digit());
        if has_op && has_digit && best.as_ref().is_none_or(|b| candidate.len() > b.len()) {
            best = Some(candidate);
        }
        current.clear();
    }
    best
}

fn quoted(text: &str) -> Option<String> {
    const PAIRS: [(char, char); 5] = [('\'', '\''), ('"', '"'), ('“', '”'), ('‘', '’'), ('「', '」')];
    PAIRS.iter().find_map(|(open, close)| {
        let start = text.find(*open)? + open.len_utf8();
        let len = text[start..].find(*close)?;
        let inner = text[start..start + len].trim();
        (!inner.is_empty()).then(|| inner.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(ai: &AiMessage) -> Vec<&str> {
        ai.tool_calls.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn seeds_three_tasks_become_three_calls() {
        let q = "帮我做三件事：1) 阅读 docs/agent_intro.txt；2) 计算 3.14 * 5；3) 搜索包含'Agent'的文件。";
        let (ai, plan) = mock_decide(&[Message::user(q)], Phase::React);
        assert_eq!(plan, None);
        assert_eq!(
            ai.tool_calls,
            vec![
                ToolCall { id: "call_001".into(), name: "file_reader".into(), args: json!({"path": "docs/agent_intro.txt", "max_chars": 2000}).as_object().unwrap().clone() },
                ToolCall { id: "call_002".into(), name: "calculator".into(), args: json!({"expression": "3.14 * 5"}).as_object().unwrap().clone() },
                ToolCall { id: "call_003".into(), name: "local_file_search".into(), args: json!({"query": "Agent", "max_results": 5}).as_object().unwrap().clone() },
            ]
        );
    }

    #[test]
    fn no_cue_gives_the_seeds_default_pair() {
        let (ai, _) = mock_decide(&[Message::user("法国的首都是哪里？")], Phase::React);
        assert_eq!(names(&ai), vec!["file_reader", "local_file_search"]);
    }

    #[test]
    fn csv_goes_to_table_analyzer_and_expression_is_trimmed() {
        let (ai, _) = mock_decide(&[Message::user("分析 data/sample.csv")], Phase::React);
        assert_eq!(names(&ai), vec!["table_analyzer"]);
        let (ai, _) = mock_decide(&[Message::user("计算 3.14 * 5 - 2.5")], Phase::React);
        assert_eq!(ai.tool_calls[0].args["expression"], "3.14 * 5 - 2.5");
    }

    #[test]
    fn plan_phase_has_one_step_per_call() {
        let (_, plan) = mock_decide(&[Message::user("读取 docs/agent_intro.txt 并计算 2 + 2")], Phase::Plan);
        let plan = plan.unwrap();
        assert_eq!(plan.plan.len(), 2);
        assert_eq!(plan.plan[1].step, 2);
        assert_eq!(plan.plan[1].tool_call.as_ref().unwrap().name, "calculator");
    }

    #[test]
    fn results_are_summed_up_or_failure_reported() {
        let c1 = call("file_reader", json!({}));
        let ok = crate::protocol::ToolMessage::success(&c1, json!({"content": "第一句。第二句。\n第三行\n第四行"}));
        let (ai, _) = mock_decide(&[Message::user("q"), Message::Tool(ok.clone())], Phase::React);
        assert_eq!(ai.content, "三条中文要点如下：\n1. 第一句。\n2. 第二句。\n3. 第三行");
        let calc = crate::protocol::ToolMessage::success(&c1, json!({"content": "2 + 2 = 4"}));
        let (ai, _) = mock_decide(&[Message::user("q"), Message::Tool(ok.clone()), Message::Tool(calc)], Phase::React);
        assert_eq!(ai.content, "三条中文要点如下：\n1. 第一句。\n2. 2 + 2 = 4\n3. 第二句。");
        let bad = crate::protocol::ToolMessage::error(&c1, "file not found: x.txt");
        let (ai, _) = mock_decide(&[Message::user("q"), Message::Tool(ok), Message::Tool(bad)], Phase::React);
        assert_eq!(ai.content, "工具调用失败，无法完成请求：file not found: x.txt");
    }

    #[test]
    fn a_new_question_starts_fresh() {
        let c1 = call("file_reader", json!({}));
        let ok = crate::protocol::ToolMessage::success(&c1, json!({"content": "x"}));
        let msgs = [Message::user("q"), Message::Tool(ok), Message::user("计算 1+1")];
        let (ai, _) = mock_decide(&msgs, Phase::React);
        assert_eq!(names(&ai), vec!["calculator"]);
    }
}
