//! The shared vocabulary: messages as the seeds wrote them, tool calls, plans, and the one
//! event type that flows from the engine to whatever shows it (CLI, TUI, bench).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Arguments of a tool call: always a JSON object.
pub type Args = Map<String, Value>;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    #[serde(default)]
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub args: Args,
}

/// `{"role":"assistant","content":"...","tool_calls":[...]}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AiMessage {
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
}

impl AiMessage {
    pub fn answer(content: impl Into<String>) -> Self {
        Self { content: content.into(), tool_calls: Vec::new() }
    }

    pub fn calls(tool_calls: Vec<ToolCall>) -> Self {
        Self { content: String::new(), tool_calls }
    }

    /// Gives every call without an id the next free `call_NNN` id.
    pub fn number_calls(&mut self) {
        for (i, call) in self.tool_calls.iter_mut().enumerate() {
            if call.id.trim().is_empty() {
                call.id = format!("call_{:03}", i + 1);
            }
        }
    }

    /// The JSON form written to `ai_message.json`, with `"role":"assistant"`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(Message::Assistant(self.clone())).unwrap_or(Value::Null)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    Success,
    Error,
}

/// `{"role":"tool","tool_call_id":..,"name":..,"status":..,"content":"<JSON text>"}`; the
/// content is the JSON text of `{status, output}` or `{status, error}` so that the seeds'
/// way of reading a result (`status`, `output.content`) works.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolMessage {
    pub tool_call_id: String,
    pub name: String,
    pub status: ToolStatus,
    pub content: String,
}

impl ToolMessage {
    pub fn success(call: &ToolCall, output: Value) -> Self {
        let body = serde_json::json!({"status": "success", "output": output});
        Self {
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            status: ToolStatus::Success,
            content: body.to_string(),
        }
    }

    pub fn error(call: &ToolCall, error: impl Into<String>) -> Self {
        let body = serde_json::json!({"status": "error", "error": error.into()});
        Self {
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            status: ToolStatus::Error,
            content: body.to_string(),
        }
    }

    /// The parsed `{status, output|error}` body; `None` when the content is not JSON.
    pub fn body(&self) -> Option<Value> {
        serde_json::from_str(&self.content).ok()
    }

    /// `output.content` of a successful result, when there is one.
    pub fn output_text(&self) -> Option<String> {
        let body = self.body()?;
        body.get("output")?.get("content")?.as_str().map(str::to_string)
    }

    /// The error text of a failed result.
    pub fn error_text(&self) -> Option<String> {
        let body = self.body()?;
        match body.get("error")? {
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    System { content: String },
    User { content: String },
    Assistant(AiMessage),
    Tool(ToolMessage),
}

impl Message {
    pub fn system(content: impl Into<String>) -> Self {
        Message::System { content: content.into() }
    }

    pub fn user(content: impl Into<String>) -> Self {
        Message::User { content: content.into() }
    }

    pub fn role(&self) -> &'static str {
        match self {
            Message::System { .. } => "system",
            Message::User { .. } => "user",
            Message::Assistant(_) => "assistant",
            Message::Tool(_) => "tool",
        }
    }

    /// The text a person reads: content, or for tool calls their JSON.
    pub fn text(&self) -> String {
        match self {
            Message::System { content } | Message::User { content } => content.clone(),
            Message::Assistant(ai) if ai.tool_calls.is_empty() => ai.content.clone(),
            Message::Assistant(ai) => serde_json::to_string(&ai.tool_calls).unwrap_or_default(),
            Message::Tool(tm) => tm.content.clone(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MessagesError {
    #[error(transparent)]
    Read(#[from] crate::input::InputError),
    #[error("{file}: not valid JSON: {source}")]
    Json { file: String, source: serde_json::Error },
    #[error("{file}: expected a JSON array of messages, found {found}")]
    NotArray { file: String, found: &'static str },
    #[error("{file}: message {index}: {reason}")]
    Element { file: String, index: usize, reason: String },
}

pub fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads a messages file: a JSON array of valid messages, or one error naming the file
/// and the first bad element.
pub fn load_messages(path: &Path) -> Result<Vec<Message>, MessagesError> {
    let file = path.display().to_string();
    let text = crate::input::read_text(path, crate::input::MESSAGES)?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|source| MessagesError::Json { file: file.clone(), source })?;
    messages_from_value(&file, value)
}

/// Turns a JSON array into messages, naming `origin` and the first bad element on error.
pub fn messages_from_value(origin: &str, value: Value) -> Result<Vec<Message>, MessagesError> {
    let Value::Array(items) = value else {
        return Err(MessagesError::NotArray { file: origin.to_string(), found: json_kind(&value) });
    };
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            check_message_shape(&item)
                .and_then(|()| serde_json::from_value(item).map_err(|e| e.to_string()))
                .map_err(|reason| MessagesError::Element { file: origin.to_string(), index, reason })
        })
        .collect()
}

fn check_message_shape(item: &Value) -> Result<(), String> {
    let Value::Object(obj) = item else {
        return Err(format!("expected an object, found {}", json_kind(item)));
    };
    match obj.get("role").and_then(Value::as_str) {
        None => Err("missing \"role\"".into()),
        Some("system" | "user" | "assistant" | "tool") => Ok(()),
        Some(other) => Err(format!("unknown role {other:?} (system, user, assistant, tool)")),
    }
}

/// One step of a plan in the seeds' shape `{step, description, tool_call}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanStep {
    pub step: usize,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub tool_call: Option<ToolCall>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    #[serde(default)]
    pub reasoning: String,
    #[serde(default)]
    pub plan: Vec<PlanStep>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepState {
    Pending,
    Running,
    Done,
    Failed,
}

/// How the tools schema reaches the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum ToolCalling {
    /// The seeds' prompt injection: schema in the system message, JSON envelope out.
    #[default]
    PromptJson,
    /// The model's own chat template `tools` branch and native call format.
    Builtin,
}

impl ToolCalling {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCalling::PromptJson => "prompt_json",
            ToolCalling::Builtin => "builtin",
        }
    }

    pub fn toggled(self) -> Self {
        match self {
            ToolCalling::PromptJson => ToolCalling::Builtin,
            ToolCalling::Builtin => ToolCalling::PromptJson,
        }
    }
}

/// How the runtime drives a conversation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum AgentMode {
    /// Decide, run tools, decide again until a final answer.
    #[default]
    React,
    /// Plan first, then run the steps.
    PlanExecute,
}

impl AgentMode {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentMode::React => "react",
            AgentMode::PlanExecute => "plan_execute",
        }
    }

    pub fn toggled(self) -> Self {
        match self {
            AgentMode::React => AgentMode::PlanExecute,
            AgentMode::PlanExecute => AgentMode::React,
        }
    }
}

/// How the next token is chosen (beside [`ToolCalling`], the other way a decision is made).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Decoding {
    /// The model picks any token.
    #[default]
    Free,
    /// Tokens are masked so the output can only be a well-formed decision.
    Constrained,
}

impl Decoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Decoding::Free => "free",
            Decoding::Constrained => "constrained",
        }
    }

    pub fn toggled(self) -> Self {
        match self {
            Decoding::Free => Decoding::Constrained,
            Decoding::Constrained => Decoding::Free,
        }
    }
}

/// How a fresh request's decision is asked of the model under prompt_json (the decision
/// strategy; `b4 bench --strategy` compares them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Strategy {
    /// The seeds' envelope, calls first: `{"tool_calls": [...], "content": ""}`.
    #[default]
    CallsFirst,
    /// The request's tasks first, each with the tool that does it or `none`; then exactly
    /// one call per task with a tool, the tool named by its task (or the answer when no
    /// task has one).
    TasksFirst,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::CallsFirst => "calls_first",
            Strategy::TasksFirst => "tasks_first",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionStatus {
    /// The output parsed into a valid decision.
    #[default]
    Success,
    /// The output could not be parsed or broke a rule (see the report's `error`); the
    /// runtime runs none of its calls and stops.
    Invalid,
}

/// Everything about how one decision was made, produced once by the brain and read by
/// every consumer: the TUI, `b4 chat --json`, `b4 decide`'s files and the bench records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecisionReport {
    /// The profile that decided.
    pub profile: String,
    pub phase: Phase,
    /// The way tools were passed (`prompt_json` or `builtin`).
    pub tool_calling: ToolCalling,
    /// How tokens were chosen; `None` when no model decoded (the mock brain). Constrained
    /// decoding whose grammar could not be built is reported as free, with a warning.
    pub decoding: Option<Decoding>,
    /// Which parser recognised the output (`strict_json`, `hermes`, `mock`, ...).
    pub format: Option<String>,
    pub status: DecisionStatus,
    /// Why the decision is invalid.
    pub error: Option<String>,
    /// Generations it took (a retry with a stronger reminder makes two).
    pub attempts: usize,
    /// `<think>...</think>` text, kept apart from the answer.
    pub reasoning: Option<String>,
    pub stats: DecisionStats,
    /// What was repaired or dropped on the way.
    pub warnings: Vec<String>,
    /// Where the model chose between answering and calling (constrained prompt_json): the
    /// answer's best logit minus the call's, before the profile's `no_call_bias`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_call_margin: Option<f64>,
    /// Each choice after a call closed (constrained, in order): another call's best logit
    /// minus the end's, before the profile's `more_calls_bias`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_call_margins: Vec<f64>,
    /// Each boolean value a constrained decision chose, with its parameter: `true`'s best
    /// logit minus `false`'s, before the profile's `true_bias`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bool_margins: Vec<(String, f64)>,
}

impl DecisionReport {
    /// A report of a valid decision with nothing else to say yet.
    pub fn new(profile: &str, phase: Phase, tool_calling: ToolCalling, decoding: Option<Decoding>) -> Self {
        Self {
            profile: profile.to_string(),
            phase,
            tool_calling,
            decoding,
            format: None,
            status: DecisionStatus::Success,
            error: None,
            attempts: 1,
            reasoning: None,
            stats: DecisionStats::default(),
            warnings: Vec::new(),
            no_call_margin: None,
            more_call_margins: Vec::new(),
            bool_margins: Vec::new(),
        }
    }

    pub fn valid(&self) -> bool {
        self.status == DecisionStatus::Success
    }
}

/// What a decision streams while it is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream<'a> {
    /// `done` of the prompt's `total` tokens are in the cache; `reused` came from before.
    Prefill { done: usize, total: usize, reused: usize },
    /// A clean piece of decoded text.
    Text(&'a str),
}

/// A stage of loading a model profile, as its progress reports name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadStage {
    /// Hashing a pinned model file whose checksum stamp is missing or stale.
    Verifying,
    /// Building the tokenizer (from `tokenizer.json` or the GGUF metadata).
    Tokenizer,
    /// Reading the weights into memory (or onto the device).
    Weights,
}

impl LoadStage {
    pub fn as_str(self) -> &'static str {
        match self {
            LoadStage::Verifying => "verifying file",
            LoadStage::Tokenizer => "tokenizer",
            LoadStage::Weights => "reading weights",
        }
    }
}

/// How far one stage of a load has come: `done` of `total` bytes (`total` 0: the stage
/// has no measure, only a name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadProgress {
    pub stage: LoadStage,
    pub done: u64,
    pub total: u64,
}

impl LoadProgress {
    /// Whole percent done, rounded down (100 only when all is done); `None` when the stage
    /// has no measure.
    pub fn percent(&self) -> Option<u64> {
        (self.total > 0).then(|| (self.done.min(self.total) as u128 * 100 / self.total as u128) as u64)
    }
}

/// What one decision is asked to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// A ReAct decision: final answer or tool calls.
    React,
    /// plan_execute, first decision: a plan.
    Plan,
    /// plan_execute, after steps ran: continue with tool calls or finish.
    Step,
}

/// Token counts and speeds of one decision.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionStats {
    pub prompt_tokens: usize,
    /// Prompt tokens whose KV entries were reused from the previous decision.
    pub reused_tokens: usize,
    pub generated_tokens: usize,
    pub prefill_ms: f64,
    pub decode_ms: f64,
    pub prefill_tok_s: f64,
    pub decode_tok_s: f64,
    pub latency_ms: f64,
    /// Constrained decoding: time spent computing token masks and advancing the grammar
    /// during decoding (part of `decode_ms`).
    #[serde(default)]
    pub mask_ms: f64,
    /// Constrained decoding: time to compile the answer grammar for this decision (the
    /// first on a model also builds the model's token space, about half a second). Made
    /// beside the prefill where the decision allows: see `grammar_wait_ms`.
    #[serde(default)]
    pub grammar_ms: f64,
    /// Constrained decoding: of `grammar_ms`, the part the decoder waited for after the
    /// prompt was read, before its first token (part of `latency_ms`).
    #[serde(default)]
    pub grammar_wait_ms: f64,
    /// Constrained decoding: generated tokens the grammar forced, run in one batch with
    /// the token before them instead of one step each (part of `generated_tokens`).
    #[serde(default)]
    pub fast_forwarded: usize,
    /// Prompt tokens whose KV entries were read from the prompt cache on disk (part of
    /// `reused_tokens`).
    #[serde(default)]
    pub prompt_cache_tokens: usize,
    /// A served model: milliseconds from sending the request to the first piece of text
    /// (network, queueing and the server's prefill); 0 in process, where `prefill_ms` says it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ttft_ms: f64,
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}

impl DecisionStats {
    /// Whether a served model made the decision (it reports a time to first token).
    pub fn served(&self) -> bool {
        self.ttft_ms > 0.0
    }

    /// The prompt's token count as shown: `?` for a server that reported none.
    pub fn prompt_shown(&self) -> String {
        if self.served() && self.prompt_tokens == 0 {
            "?".into()
        } else {
            self.prompt_tokens.to_string()
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The brain gave a final answer.
    FinalAnswer,
    /// `max_turns` decisions were made without a final answer.
    MaxTurns,
    /// The brain asked for a call it had already made with the same arguments.
    RepeatedCall,
    /// The user cancelled.
    Cancelled,
    /// The brain failed.
    BrainError,
    /// The brain's decision was invalid (unparseable, or against the exclusivity policy):
    /// none of its calls ran.
    InvalidDecision,
}

impl StopReason {
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::FinalAnswer => "final answer",
            StopReason::MaxTurns => "stopped: max_turns reached without a final answer",
            StopReason::RepeatedCall => "stopped: the same tool call was repeated with the same arguments",
            StopReason::Cancelled => "stopped: cancelled",
            StopReason::BrainError => "stopped: the brain failed",
            StopReason::InvalidDecision => "stopped: the decision was invalid, so none of its calls ran",
        }
    }
}

/// What the engine tells the screen. The CLI prints these, the TUI renders them, `--json`
/// writes one a line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A conversation started on this question.
    Started { question: String, mode: AgentMode, profile: String },
    /// Memory notes put into the context.
    MemoryLoaded { notes: Vec<String> },
    /// A message was appended to the transcript.
    MessageAppended { message: Message },
    /// A decision is about to be made.
    TurnStarted { turn: usize, phase: Phase, tool_calling: ToolCalling },
    /// One decoded piece of model output.
    Token { text: String },
    /// The brain answered: the message, the raw model text, and how it was made.
    Decided { turn: usize, ai: AiMessage, raw: String, report: DecisionReport },
    /// A decision's prompt is being read: `done` of `total` tokens are in the cache
    /// (`reused` of them came from the previous decision).
    Prefill { done: usize, total: usize, reused: usize },
    PlanCreated { plan: Plan },
    StepState { index: usize, state: StepState },
    ToolStarted { call: ToolCall },
    ToolFinished { call: ToolCall, result: ToolMessage, duration_ms: f64 },
    /// Step mode: the runtime waits for the user before `what`; `calls` are the tool
    /// calls about to run (empty before a decision).
    Paused {
        what: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        calls: Vec<ToolCall>,
    },
    FinalAnswer { content: String },
    Finished { reason: StopReason },
    Error { message: String },
    /// A model profile is being loaded (the first use of a profile).
    ProfileLoading { name: String },
    /// How far loading it has come (sent while it loads, a few times a second at most).
    ProfileProgress { name: String, progress: LoadProgress },
    ProfileReady { name: String, load_ms: f64 },
    /// The settings the next decision will use.
    Settings(Settings),
}

/// What the screen can change between (and, for step mode, during) conversations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    pub profile: String,
    pub mode: AgentMode,
    pub tool_calling: ToolCalling,
    pub step_mode: bool,
    /// Free or constrained decoding for the next decision.
    #[serde(default)]
    pub decoding: Decoding,
    /// How a fresh request's decision is asked under prompt_json.
    #[serde(default)]
    pub strategy: Strategy,
    /// Whether prompt prefixes are saved to and read from the prompt cache on disk (one
    /// setting for the whole process: `--no-prompt-cache` starts it off).
    #[serde(default)]
    pub prompt_cache: bool,
}

/// What the screen asks of the engine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// Start a conversation turn with this question (keeps the transcript).
    Ask { question: String },
    SetToolCalling(ToolCalling),
    SetMode(AgentMode),
    SetProfile(String),
    SetStepMode(bool),
    SetDecoding(Decoding),
    /// Turn the prompt cache on disk on or off.
    SetPromptCache(bool),
    /// Step mode: go on past the current pause.
    Continue,
    /// Stop the running generation (within one token) and the conversation.
    Cancel,
    /// Forget the transcript.
    Reset,
    Quit,
}
