//! Builds what the chat template renders: the conversation as Hugging Face chat messages
//! (`{"role","content"}`), with the seeds' prompt injected for the chosen way of passing
//! tools and the phase.
//!
//! - `prompt_json` (React): the seeds' envelope rules (schema A / schema B, "zero, one, or
//!   multiple tool_calls"), earlier decisions as their envelope JSON, and after the last
//!   ToolMessages a user reminder that counts them.
//! - `builtin` (React): the messages as they are; the tools go to the template's `tools`
//!   variable and the model answers in its native format. Nothing is injected (only the
//!   exclusivity reminder, when the caller retries with it).
//! - `plan_execute`: `Phase::Plan` the seeds' plan prompt, `Phase::Step` the envelope
//!   prompt plus a reminder that the steps' results are in. Both use the envelope style
//!   whatever the way; `builtin` keeps the template's own tools block in front of them.
//!
//! The texts that ask for a format (rules, reminders) live with their format in
//! [`super::format`]; [`Ask::target`] says which format a decision asks for.
//!
//! Where the template lists tools in the system turn, builtin ReAct decisions and every
//! plan_execute decision of either way start with the same [`SystemPrefix`] (the
//! conversation's system message and the tool list, as the template writes them) and put
//! their own rules after it: a plan's step decisions, and F2 between them, reuse the
//! prompt read so far. prompt_json's ReAct decisions keep the seeds' prompt, measured
//! better (see `build`). Every reminder is a message of its own at the end, so consecutive
//! decisions and bench cases share the longest possible token prefix.

mod prefix;

use serde_json::{json, Map, Value};

pub use prefix::{system_prefix, SystemPrefix};

use super::format::{envelope, native, plan, Ask, Target};
use crate::protocol::{Message, Phase, Strategy, ToolCall, ToolCalling, ToolMessage};

/// Which extra reminder ends the prompt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reminder {
    #[default]
    None,
    /// For the one retry after the model sent content and tool calls together.
    Exclusive,
}

/// What the chat template gets.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptInput {
    /// Hugging Face chat messages.
    pub messages: Vec<Value>,
    /// The template's `tools` variable: `Some` only for `builtin` (ReAct, or every phase
    /// when there is no system prefix).
    pub tools: Option<Vec<Value>>,
}

/// Builds the prompt messages (and template tools) for one decision. With the model's
/// [`SystemPrefix`] plan_execute's decisions (and builtin's, through the template) start
/// from the same system text (the tools as the template lists them) and add their rules
/// after it; without one (no template, or one that does not list tools in the system
/// turn), and for prompt_json's ReAct decisions, each keeps its own system prompt.
pub fn build(
    messages: &[Message],
    tools: &[Value],
    ask: Ask,
    strategy: Strategy,
    reminder: Reminder,
    prefix: Option<&SystemPrefix>,
) -> PromptInput {
    let builtin = ask.way == ToolCalling::Builtin;
    let done = trailing_tool_messages(messages);
    let target = ask.target(done > 0);
    // prompt_json's ReAct decisions keep the seeds' prompt (rules, then the tools): after
    // the prefix the 0.5B stopped after the first of several calls (dev parallel 20 -> 8 of 33).
    let prefix = prefix.filter(|_| ask.phase != Phase::React);
    let mut template_tools = None;
    let mut out = match prefix {
        _ if matches!(target, Target::Native(_)) => {
            template_tools = Some(tools.to_vec());
            native_messages(messages)
        }
        Some(prefix) => {
            // builtin keeps the template's call-format lines; prompt_json asks for its envelope instead.
            let head = if builtin { prefix.whole() } else { prefix.shared.clone() };
            let rules = rules(target, tools, &[], Listed::Above, strategy);
            envelope_messages(messages, &format!("{head}\n\n{rules}"), OwnSystem::InPrefix)
        }
        None => {
            // builtin's template lists the tools itself; listing them again costs prefill time.
            let (listed, place): (&[Value], Listed) = if builtin {
                template_tools = Some(tools.to_vec());
                (&[], Listed::ByTemplate)
            } else {
                (tools, Listed::Below)
            };
            envelope_messages(messages, &rules(target, tools, listed, place, strategy), OwnSystem::After)
        }
    };

    if done > 0 {
        let done_reminder = match target {
            Target::Native(_) => Some(native::done_reminder(messages)),
            Target::Envelope(_) if ask.phase == Phase::Step => Some(envelope::steps_done_reminder(done)),
            Target::Envelope(_) if ask.next_call => Some(envelope::tools_done_continue_reminder(done)),
            Target::Envelope(_) => Some(envelope::tools_done_reminder(done)),
            Target::Plan => None,
        };
        out.extend(done_reminder.map(user));
    }
    if reminder == Reminder::Exclusive {
        out.push(user(target.exclusive_reminder().to_string()));
    }
    PromptInput { messages: out, tools: template_tools }
}

/// Our system rules for a JSON target (a native one has none of ours: the template's own).
fn rules(target: Target, tools: &[Value], listed: &[Value], place: Listed, strategy: Strategy) -> String {
    match target {
        Target::Plan => plan::system(tools, listed, place),
        Target::Envelope(_) | Target::Native(_) => envelope::system(tools, listed, place, strategy),
    }
}

/// Where the prompt lists the tools, which the rules refer to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listed {
    /// In our system prompt, after the rules.
    Below,
    /// In the system prefix, before the rules.
    Above,
    /// By the template, out of our sight.
    ByTemplate,
}

/// Where the conversation's own system message goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OwnSystem {
    /// After our system prompt, in the same message.
    After,
    /// Already in the system prefix.
    InPrefix,
}

pub(crate) fn use_only(place: Listed) -> &'static str {
    match place {
        Listed::ByTemplate => "Use only the given tools, with their parameter names.",
        Listed::Below => "Use only the tools listed below, with their parameter names.",
        Listed::Above => "Use only the tools listed above, with their parameter names.",
    }
}

pub(crate) fn push_tool_list(text: &mut String, listed: &[Value]) {
    if listed.is_empty() {
        return;
    }
    text.push_str("\nAvailable tools:");
    for tool in listed {
        // The `{"type":"function","function":...}` wrapper says nothing to the model.
        let shown = tool.get("function").filter(|f| f.is_object()).unwrap_or(tool);
        text.push('\n');
        text.push_str(&shown.to_string());
    }
}

/// The calls shown in schema B: the seeds' two calls when those tools exist, otherwise
/// up to two of the given tools with placeholder arguments (an example naming a tool the
/// model does not have invites calls to it). A schema that does not read shows none (the
/// decision reports it).
pub(crate) fn example_calls(tools: &[Value]) -> Vec<ToolCall> {
    use crate::tools::spec::{find, ToolSpec};
    let specs = ToolSpec::parse_all(tools).unwrap_or_default();
    if find(&specs, "file_reader").is_some() && find(&specs, "calculator").is_some() {
        return vec![
            example_call(1, "file_reader", json!({"path": "docs/agent_intro.txt", "max_chars": 2000})),
            example_call(2, "calculator", json!({"expression": "2+2"})),
        ];
    }
    specs.iter().take(2).enumerate().map(|(i, tool)| example_call(i + 1, &tool.name, Value::Object(tool.placeholder_args()))).collect()
}

fn example_call(n: usize, name: &str, args: Value) -> ToolCall {
    let args = match args {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    ToolCall { id: format!("call_{n:03}"), name: name.to_string(), args }
}

/// The conversation in envelope style: one system message (ours, then the user's own),
/// decisions as their envelope JSON text, tool results as tool messages.
fn envelope_messages(messages: &[Message], system: &str, own_system: OwnSystem) -> Vec<Value> {
    let (own, rest) = match messages.split_first() {
        Some((Message::System { content }, rest)) => (Some(content.as_str()), rest),
        _ => (None, messages),
    };
    let merged = match own.map(str::trim).filter(|s| !s.is_empty()) {
        Some(own) if own_system == OwnSystem::After => format!("{system}\n\n{own}"),
        _ => system.to_string(),
    };
    let mut out = vec![json!({"role": "system", "content": merged})];
    out.extend(rest.iter().map(|message| match message {
        Message::Assistant(ai) => json!({"role": "assistant", "content": envelope::envelope_text(ai)}),
        other => plain_message(other),
    }));
    out
}

/// The conversation as the model's own template expects it.
fn native_messages(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .map(|message| match message {
            Message::Assistant(ai) if !ai.tool_calls.is_empty() => {
                let calls: Vec<Value> = ai
                    .tool_calls
                    .iter()
                    .map(|c| json!({"type": "function", "function": {"name": c.name, "arguments": c.args}}))
                    .collect();
                json!({"role": "assistant", "content": ai.content, "tool_calls": calls})
            }
            other => plain_message(other),
        })
        .collect()
}

fn plain_message(message: &Message) -> Value {
    match message {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::User { content } => json!({"role": "user", "content": content}),
        Message::Assistant(ai) => json!({"role": "assistant", "content": ai.content}),
        Message::Tool(ToolMessage { name, content, .. }) => {
            json!({"role": "tool", "name": name, "content": content})
        }
    }
}

fn user(content: String) -> Value {
    json!({"role": "user", "content": content})
}

/// How many tool results end the conversation.
fn trailing_tool_messages(messages: &[Message]) -> usize {
    messages.iter().rev().take_while(|m| matches!(m, Message::Tool(_))).count()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::brain::format::envelope::{ARGS_RULE, DECIDE_RULE};
    use crate::brain::format::NativeStyle;
    use crate::protocol::AiMessage;

    fn ask(phase: Phase, way: ToolCalling) -> Ask {
        Ask { phase, way, style: NativeStyle::Hermes, next_call: false }
    }

    fn tools() -> Vec<Value> {
        serde_json::from_str(include_str!("../../tests/fixtures/outputs/tools.json")).unwrap()
    }

    fn call(id: &str, name: &str, args: Value) -> ToolCall {
        let Value::Object(args) = args else { panic!("args must be an object") };
        ToolCall { id: id.into(), name: name.into(), args }
    }

    /// A question, a decision with two calls, and their two results.
    fn after_two_calls() -> Vec<Message> {
        let read = call("call_001", "file_reader", json!({"path": "docs/agent_intro.txt"}));
        let calc = call("call_002", "calculator", json!({"expression": "3.14 * 5"}));
        vec![
            Message::user("读文件并计算 3.14 * 5"),
            Message::Assistant(AiMessage::calls(vec![read.clone(), calc.clone()])),
            Message::Tool(ToolMessage::success(&read, json!({"content": "Agent 系统"}))),
            Message::Tool(ToolMessage::success(&calc, json!({"content": "15.7"}))),
        ]
    }

    const FILE_READER: &str = r#"{"name":"file_reader","description":"Read a local text file.","parameters":{"type":"object","properties":{"path":{"type":"string"},"max_chars":{"type":"integer"}},"required":["path"]}}"#;
    const CALCULATOR: &str = r#"{"name":"calculator","description":"Evaluate an arithmetic expression.","parameters":{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}}"#;

    fn seeds_envelope_prompt() -> String {
        format!(
            "You are a local tool agent. Answer ONLY with one JSON object and nothing else.\n\
Valid schema A (final answer, no tools needed):\n\
{{\"content\":\"final answer text\",\"tool_calls\":[]}}\n\
Valid schema B (call one or more tools, content must be empty):\n\
{{\"content\":\"\",\"tool_calls\":[{{\"id\":\"call_001\",\"name\":\"file_reader\",\"args\":{{\"path\":\"docs/agent_intro.txt\",\"max_chars\":2000}}}}]}}\n\
You may include zero, one, or multiple tool_calls in the array: one call for each task the request names, and no others. {DECIDE_RULE}{ARGS_RULE}Use only the tools listed below, with their parameter names.\n\
Available tools:\n{FILE_READER}\n{CALCULATOR}"
        )
    }

    #[test]
    fn prompt_json_injects_the_seeds_prompt_merged_with_the_users_system_message() {
        let messages = vec![Message::system("记住：用户叫小王。"), Message::user("阅读 docs/agent_intro.txt")];
        let built = build(&messages, &tools()[..2], ask(Phase::React, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::None, None);
        assert_eq!(
            built,
            PromptInput {
                messages: vec![
                    json!({"role": "system", "content": format!("{}\n\n记住：用户叫小王。", seeds_envelope_prompt())}),
                    json!({"role": "user", "content": "阅读 docs/agent_intro.txt"}),
                ],
                tools: None,
            }
        );
    }

    #[test]
    fn prompt_json_renders_decisions_as_envelopes_and_counts_the_tool_results() {
        let built = build(&after_two_calls(), &tools()[..2], ask(Phase::React, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::None, None);
        assert_eq!(
            built,
            PromptInput {
                messages: vec![
                    json!({"role": "system", "content": seeds_envelope_prompt()}),
                    json!({"role": "user", "content": "读文件并计算 3.14 * 5"}),
                    json!({"role": "assistant", "content": r#"{"content":"","tool_calls":[{"id":"call_001","name":"file_reader","args":{"path":"docs/agent_intro.txt"}},{"id":"call_002","name":"calculator","args":{"expression":"3.14 * 5"}}]}"#}),
                    json!({"role": "tool", "name": "file_reader", "content": r#"{"status":"success","output":{"content":"Agent 系统"}}"#}),
                    json!({"role": "tool", "name": "calculator", "content": r#"{"status":"success","output":{"content":"15.7"}}"#}),
                    json!({"role": "user", "content": "Answer ONLY with one JSON object (schema A or schema B). The last 2 ToolMessage(s) contain tool results. If they provide the requested information, answer with schema A now and set \"tool_calls\" to exactly []. Do not repeat the completed tool calls."}),
                ],
                tools: None,
            }
        );
    }

    #[test]
    fn with_next_call_the_reminder_after_results_asks_whether_work_remains() {
        let continuing = Ask { next_call: true, ..ask(Phase::React, ToolCalling::PromptJson) };
        let built = build(&after_two_calls(), &tools()[..2], continuing, Strategy::CallsFirst, Reminder::None, None);
        let plain = build(&after_two_calls(), &tools()[..2], ask(Phase::React, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::None, None);
        // Everything but the last message is the same prompt.
        assert_eq!(built.messages[..built.messages.len() - 1], plain.messages[..plain.messages.len() - 1]);
        let last = built.messages.last().unwrap()["content"].as_str().unwrap();
        assert!(last.contains("The last 2 ToolMessage(s) contain tool results.") && last.contains("still needs another tool call"), "{last}");
    }

    #[test]
    fn the_exclusive_retry_only_appends_a_message() {
        let first = build(&after_two_calls(), &tools(), ask(Phase::React, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::None, None);
        let retry = build(&after_two_calls(), &tools(), ask(Phase::React, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::Exclusive, None);
        // The retry extends the first prompt, so the model reuses all of it.
        let mut expected = first.messages.clone();
        expected.push(json!({"role": "user", "content": "content and tool_calls are exclusive: either schema A (final answer text and \"tool_calls\":[]) or schema B (\"content\":\"\" and tool calls), never both. Answer again with ONLY one JSON object."}));
        assert_eq!(retry, PromptInput { messages: expected, tools: None });
    }

    #[test]
    fn builtin_passes_messages_as_they_are_and_tools_to_the_template() {
        let mut messages = vec![Message::system("You are helpful.")];
        messages.extend(after_two_calls());
        let built = build(&messages, &tools(), ask(Phase::React, ToolCalling::Builtin), Strategy::CallsFirst, Reminder::None, None);
        assert_eq!(
            built,
            PromptInput {
                messages: vec![
                    json!({"role": "system", "content": "You are helpful."}),
                    json!({"role": "user", "content": "读文件并计算 3.14 * 5"}),
                    json!({"role": "assistant", "content": "", "tool_calls": [
                        {"type": "function", "function": {"name": "file_reader", "arguments": {"path": "docs/agent_intro.txt"}}},
                        {"type": "function", "function": {"name": "calculator", "arguments": {"expression": "3.14 * 5"}}},
                    ]}),
                    json!({"role": "tool", "name": "file_reader", "content": r#"{"status":"success","output":{"content":"Agent 系统"}}"#}),
                    json!({"role": "tool", "name": "calculator", "content": r#"{"status":"success","output":{"content":"15.7"}}"#}),
                    json!({"role": "user", "content": "工具已经返回了结果。请根据这些结果，用文字直接回答（不要再调用工具）：读文件并计算 3.14 * 5"}),
                ],
                tools: Some(tools()),
            }
        );
        let retry = build(&messages, &tools(), ask(Phase::React, ToolCalling::Builtin), Strategy::CallsFirst, Reminder::Exclusive, None);
        assert_eq!(
            retry.messages.last(),
            Some(&json!({"role": "user", "content": "content and tool calls are exclusive: either answer with the final answer text alone, or call tools with no other text, never both. Answer again."}))
        );
        assert_eq!(retry.messages.len(), built.messages.len() + 1);
    }

    #[test]
    fn plan_phase_uses_the_plan_prompt() {
        let messages = vec![Message::user("总结文档并计算 3.14 * 5")];
        let built = build(&messages, &tools()[..2], ask(Phase::Plan, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::None, None);
        let plan_prompt = format!(
            "You are a local tool agent. First make a plan. Answer ONLY with one JSON object and nothing else:\n\
{{\"reasoning\":\"why these steps\",\"plan\":[{{\"step\":1,\"description\":\"Read the document\",\"tool_call\":{{\"name\":\"file_reader\",\"args\":{{\"path\":\"docs/agent_intro.txt\",\"max_chars\":2000}}}}}},{{\"step\":2,\"description\":\"Compute the expression\",\"tool_call\":{{\"name\":\"calculator\",\"args\":{{\"expression\":\"2+2\"}}}}}}]}}\n\
One step per tool call, in the order they should run. If no tool is needed, answer with {{\"content\":\"final answer text\",\"tool_calls\":[]}} instead. Use only the tools listed below, with their parameter names.\n\
Available tools:\n{FILE_READER}\n{CALCULATOR}"
        );
        assert_eq!(
            built,
            PromptInput {
                messages: vec![
                    json!({"role": "system", "content": plan_prompt}),
                    json!({"role": "user", "content": "总结文档并计算 3.14 * 5"}),
                ],
                tools: None,
            }
        );
    }

    #[test]
    fn builtin_plan_leaves_the_tool_list_to_the_template() {
        let messages = vec![Message::user("总结文档")];
        let built = build(&messages, &tools(), ask(Phase::Plan, ToolCalling::Builtin), Strategy::CallsFirst, Reminder::None, None);
        let system = built.messages.first().and_then(|m| m["content"].as_str()).unwrap();
        assert!(system.starts_with("You are a local tool agent. First make a plan."), "{system}");
        assert!(system.ends_with("Use only the given tools, with their parameter names."), "{system}");
        assert!(!system.contains("Available tools"), "{system}");
        assert_eq!(built.tools, Some(tools()));
    }

    #[test]
    fn step_phase_shares_the_react_system_prompt_and_asks_to_continue_or_finish() {
        for way in [ToolCalling::PromptJson, ToolCalling::Builtin] {
            let step = build(&after_two_calls(), &tools(), ask(Phase::Step, way), Strategy::CallsFirst, Reminder::None, None);
            let react_prompt = build(&after_two_calls()[..1], &tools(), ask(Phase::React, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::None, None);
            if way == ToolCalling::PromptJson {
                assert_eq!(step.messages.first(), react_prompt.messages.first());
            }
            assert_eq!(
                step.messages.last(),
                Some(&json!({"role": "user", "content": "Answer ONLY with one JSON object (schema A or schema B). The last 2 ToolMessage(s) contain the results of the plan steps done so far. If work remains, call the tools for it with schema B; if the task is done, answer with schema A and set \"tool_calls\" to exactly []. Do not repeat the completed tool calls."}))
            );
            // Envelope style whatever the way: the decision is its JSON text.
            assert_eq!(
                step.messages.get(2).and_then(|m| m["content"].as_str()).map(|c| c.starts_with("{\"content\":\"\",\"tool_calls\":[")),
                Some(true)
            );
        }
    }

    #[test]
    fn the_schema_b_example_only_names_tools_the_model_has() {
        let search = tools().into_iter().filter(|t| t["function"]["name"] == "local_file_search").collect::<Vec<_>>();
        let built = build(&[Message::user("搜索 Agent")], &search, ask(Phase::React, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::None, None);
        let system = built.messages.first().and_then(|m| m["content"].as_str()).unwrap();
        assert!(
            system.contains(r#"{"content":"","tool_calls":[{"id":"call_001","name":"local_file_search","args":{"query":"..."}}]}"#),
            "{system}"
        );
        assert!(!system.contains("file_reader"), "{system}");

        let none = build(&[Message::user("你好")], &[], ask(Phase::React, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::None, None);
        assert_eq!(
            none.messages.first(),
            Some(&json!({"role": "system", "content": "You are a local tool agent. Answer ONLY with one JSON object and nothing else.\nValid schema A (final answer, no tools needed):\n{\"content\":\"final answer text\",\"tool_calls\":[]}\nNo tools are available: always answer with schema A."}))
        );
    }

    #[test]
    fn no_reminder_when_the_conversation_does_not_end_with_tool_results() {
        let mut messages = after_two_calls();
        messages.push(Message::Assistant(AiMessage::answer("Agent 系统；15.7")));
        messages.push(Message::user("谢谢"));
        let built = build(&messages, &tools(), ask(Phase::React, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::None, None);
        assert_eq!(built.messages.last(), Some(&json!({"role": "user", "content": "谢谢"})));
        assert_eq!(
            built.messages.get(5),
            Some(&json!({"role": "assistant", "content": r#"{"content":"Agent 系统；15.7","tool_calls":[]}"#}))
        );
    }

    /// Every way and phase, rendered by Qwen2.5's template with the system prefix.
    fn rendered_with_prefix(messages: &[Message], phase: Phase, way: ToolCalling) -> String {
        let template = prefix::qwen25();
        let system = system_prefix(&template, messages, &tools()).unwrap();
        let input = build(messages, &tools(), ask(phase, way), Strategy::CallsFirst, Reminder::None, Some(&system));
        template.render(&input.messages, input.tools.as_deref(), true).unwrap()
    }

    #[test]
    fn with_a_system_prefix_every_way_and_phase_but_prompt_json_react_shares_the_tool_list() {
        let template = prefix::qwen25();
        let question = vec![Message::system("记住：用户叫小王。"), Message::user("读文件并计算 3.14 * 5")];
        let mut after = after_two_calls();
        after.insert(0, Message::system("记住：用户叫小王。"));
        let system = system_prefix(&template, &question, &tools()).unwrap();
        let shared = format!("<|im_start|>system\n{}", system.shared);

        let mut prompts = Vec::new();
        for way in [ToolCalling::PromptJson, ToolCalling::Builtin] {
            prompts.push((way, Phase::React, rendered_with_prefix(&question, Phase::React, way)));
            prompts.push((way, Phase::Plan, rendered_with_prefix(&question, Phase::Plan, way)));
            prompts.push((way, Phase::Step, rendered_with_prefix(&after, Phase::Step, way)));
        }
        for (way, phase, prompt) in &prompts {
            let react_json = *way == ToolCalling::PromptJson && *phase == Phase::React;
            assert_eq!(prompt.starts_with(&shared), !react_json, "{way:?} {phase:?}:\n{prompt}");
            // The user's own system message is in the prompt once, not repeated after the rules.
            assert_eq!(prompt.matches("记住：用户叫小王。").count(), 1, "{way:?} {phase:?}:\n{prompt}");
        }
        // prompt_json's ReAct decision is the seeds' prompt, prefix or not.
        let plain = build(&question, &tools(), ask(Phase::React, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::None, None);
        assert_eq!(prompts[0].2, template.render(&plain.messages, None, true).unwrap());
        // prompt_json's plan asks for its plan right after the list, not for the template's <tool_call> lines.
        let plan_json = &prompts[1].2;
        assert!(plan_json.contains("</tools>\n\nYou are a local tool agent. First make a plan."), "{plan_json}");
        assert!(plan_json.contains("Use only the tools listed above") && !plan_json.contains("<tool_call>"), "{plan_json}");
        // builtin ReAct is the template's own rendering, untouched.
        let native = template.render(&native_messages(&question), Some(&tools()), true).unwrap();
        assert_eq!(prompts[3].2, native);
        // plan_execute under builtin keeps the template's call-format lines, then its rules.
        let (plan_builtin, step_builtin) = (&prompts[4].2, &prompts[5].2);
        assert!(plan_builtin.contains("</tool_call>\n\nYou are a local tool agent. First make a plan."), "{plan_builtin}");
        assert!(step_builtin.starts_with(&format!("<|im_start|>system\n{}\n\nYou are a local tool agent. Answer ONLY", system.whole())));
        assert_eq!(prompts[5].2.matches("\"name\": \"file_reader\", \"description\"").count(), 1, "tools listed once");
    }

    #[test]
    fn the_rules_after_the_prefix_are_the_rules_without_it() {
        let template = prefix::qwen25();
        let question = [Message::user("阅读 docs/agent_intro.txt")];
        let system = system_prefix(&template, &question, &tools()[..2]).unwrap();
        let built = build(&question, &tools()[..2], ask(Phase::Step, ToolCalling::PromptJson), Strategy::CallsFirst, Reminder::None, Some(&system));
        let content = built.messages[0]["content"].as_str().unwrap();
        let rules = seeds_envelope_prompt().replace("listed below", "listed above");
        let rules = &rules[..rules.find("\nAvailable tools:").unwrap()];
        assert_eq!(content, format!("{}\n\n{rules}", system.shared));
        assert_eq!(built.tools, None);
    }
}
