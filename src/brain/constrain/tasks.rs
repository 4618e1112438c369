//! The tasks-first decision ([`Strategy::TasksFirst`](crate::protocol::Strategy)) as one
//! constraint in two stages: the model first lists the request's tasks, each with the tool
//! that does it or `none` ([`tasks_lark`]); once the task list is closed, its text is read
//! and the rest of the answer is constrained to exactly one call per task with a tool,
//! each naming that tool ([`after_tasks_lark`]), or to a final answer when no task has one.
//!
//! A grammar cannot count the tasks and bind each call's name to its task; reading the
//! first stage's output can, and the model writes one continuous answer either way.

use std::sync::Arc;

use serde_json::Value;

use super::super::generate::TokenConstraint;
use crate::tools::spec::ToolSpec;
use super::grammar::{after_tasks_lark, tasks_lark, NO_TOOL};
use super::{ConstrainError, GrammarConstraint, TokenSpace};

/// One tasks-first generation's state.
pub struct TasksFirst {
    space: Arc<TokenSpace>,
    tools: Vec<ToolSpec>,
    /// The first stage's text, until its grammar completes.
    written: Vec<u8>,
    current: GrammarConstraint,
    /// The calls' stage: the tools chosen, in order.
    chosen: Option<Vec<String>>,
}

impl std::fmt::Debug for TasksFirst {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TasksFirst").field("chosen", &self.chosen).field("current", &self.current).finish()
    }
}

impl TasksFirst {
    pub fn new(space: Arc<TokenSpace>, tools: &[ToolSpec]) -> Result<Self, ConstrainError> {
        let current = space.constraint(&tasks_lark(tools))?;
        Ok(Self { space, tools: tools.to_vec(), written: Vec::new(), current, chosen: None })
    }

    /// The tools the tasks named, once the task list is written.
    pub fn chosen(&self) -> Option<&[String]> {
        self.chosen.as_deref()
    }

    /// The task list is complete: read it and switch to the calls' grammar.
    fn start_calls(&mut self) -> Result<(), String> {
        let chosen = chosen_tools(&self.written)?;
        let lark = after_tasks_lark(&self.tools, &chosen).map_err(|e| e.to_string())?;
        self.current = self.space.constraint(&lark).map_err(|e| e.to_string())?;
        self.chosen = Some(chosen);
        Ok(())
    }
}

/// The tools named by the tasks in `{"tasks": [...]` (the first stage's text), `none`
/// left out.
pub fn chosen_tools(written: &[u8]) -> Result<Vec<String>, String> {
    let text = std::str::from_utf8(written).map_err(|e| format!("task list is not UTF-8: {e}"))?;
    let value: Value = serde_json::from_str(&format!("{text}}}")).map_err(|e| format!("task list {text:?}: {e}"))?;
    let tasks = value.get("tasks").and_then(Value::as_array).ok_or_else(|| format!("no task list in {text:?}"))?;
    Ok(tasks
        .iter()
        .filter_map(|t| t.get("tool").and_then(Value::as_str))
        .filter(|name| *name != NO_TOOL)
        .map(str::to_string)
        .collect())
}

impl TokenConstraint for TasksFirst {
    fn allowed(&mut self) -> Option<Vec<u32>> {
        self.current.allowed()
    }

    fn mask_logits(&mut self, logits: &mut [f32]) -> Result<bool, String> {
        self.current.mask_logits(logits)
    }

    fn commit(&mut self, token: u32) -> Result<(), String> {
        self.current.commit(token)?;
        if self.chosen.is_none() {
            self.written.extend_from_slice(&self.space.token_bytes(token));
            if self.current.is_finished() {
                self.start_calls()?;
            }
        }
        Ok(())
    }

    fn is_finished(&self) -> bool {
        self.chosen.is_some() && self.current.is_finished()
    }

    fn draft(&mut self) -> Vec<u32> {
        self.current.draft()
    }

    fn valid_prefix(&mut self, tokens: &[u32]) -> usize {
        self.current.valid_prefix(tokens)
    }
}

#[cfg(test)]
mod tests {
    use llguidance::toktrie::ApproximateTokEnv;
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<ToolSpec> {
        let weather = json!({"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}});
        let factorial = json!({"name": "math.factorial", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}});
        ToolSpec::parse_all(&[weather, factorial]).unwrap()
    }

    fn space() -> Arc<TokenSpace> {
        Arc::new(TokenSpace::from_env(ApproximateTokEnv::single_byte_env()).unwrap())
    }

    /// Feeds `text` one byte-token at a time; the error of the first refused byte.
    fn feed(constraint: &mut TasksFirst, text: &str) -> Result<(), String> {
        for (i, byte) in text.bytes().enumerate() {
            let mut logits = vec![0.0f32; constraint.space.vocab_size()];
            constraint.mask_logits(&mut logits)?;
            if !logits[usize::from(byte)].is_finite() {
                return Err(format!("byte {i} ({:?}) refused after {:?}", char::from(byte), &text[..i]));
            }
            constraint.commit(u32::from(byte))?;
        }
        Ok(())
    }

    #[test]
    fn each_task_with_a_tool_gets_exactly_its_call() {
        let space = space();
        let tasks = r#"{"tasks": [{"task": "weather in Tokyo", "tool": "get_weather"}, {"task": "5!", "tool": "math.factorial"}]"#;
        let calls = r#", "tool_calls": [{"id": "call_001", "name": "get_weather", "args": {"city": "Tokyo"}}, {"id": "call_002", "name": "math.factorial", "args": {"n": 5}}], "content": ""}"#;
        let mut constraint = TasksFirst::new(space.clone(), &tools()).unwrap();
        feed(&mut constraint, tasks).unwrap();
        assert_eq!(constraint.chosen(), Some(&["get_weather".to_string(), "math.factorial".to_string()][..]));
        feed(&mut constraint, calls).unwrap();
        assert!(constraint.is_finished());

        // One call short, the calls swapped, or an answer beside calls: refused.
        let short = r#", "tool_calls": [{"id": "call_001", "name": "get_weather", "args": {"city": "Tokyo"}}]"#;
        let swapped = r#", "tool_calls": [{"id": "call_001", "name": "math.factorial""#;
        let answered = r#", "tool_calls": [{"id": "call_001", "name": "get_weather", "args": {"city": "Tokyo"}}, {"id": "call_002", "name": "math.factorial", "args": {"n": 5}}], "content": "x"#;
        for wrong in [short, swapped, answered] {
            let mut constraint = TasksFirst::new(space.clone(), &tools()).unwrap();
            feed(&mut constraint, tasks).unwrap();
            assert!(feed(&mut constraint, wrong).is_err(), "{wrong}");
        }
    }

    #[test]
    fn tasks_no_tool_does_end_in_an_answer_without_calls() {
        let space = space();
        let mut constraint = TasksFirst::new(space.clone(), &tools()).unwrap();
        feed(&mut constraint, r#"{"tasks":[{"task":"capital of France","tool":"none"}]"#).unwrap();
        assert_eq!(constraint.chosen(), Some(&[][..]));
        feed(&mut constraint, r#","tool_calls":[],"content":"Paris"}"#).unwrap();
        assert!(constraint.is_finished());

        let mut constraint = TasksFirst::new(space, &tools()).unwrap();
        feed(&mut constraint, r#"{"tasks":[{"task":"capital of France","tool":"none"}]"#).unwrap();
        assert!(feed(&mut constraint, r#","tool_calls":[{"#).is_err());
    }

    #[test]
    fn a_task_must_name_an_offered_tool_or_none() {
        let mut constraint = TasksFirst::new(space(), &tools()).unwrap();
        let err = feed(&mut constraint, r#"{"tasks":[{"task":"convert 5 kg","tool":"unit.convert"#).unwrap_err();
        assert!(err.contains("refused"), "{err}");
    }

    #[test]
    fn chosen_tools_skip_none_and_keep_order_and_repeats() {
        let written = br#"{"tasks": [{"task": "a", "tool": "f"}, {"task": "b", "tool": "none"}, {"task": "c", "tool": "f"}]"#;
        assert_eq!(chosen_tools(written).unwrap(), vec!["f".to_string(), "f".to_string()]);
        assert!(chosen_tools(b"{\"tasks\": [").is_err());
    }
}
