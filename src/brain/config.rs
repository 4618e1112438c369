//! `configs/model.yaml`: the default `model:` profile, named `models:` profiles, the
//! tool-calling way and runtime settings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::protocol::{Decoding, Strategy, ToolCalling};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error(transparent)]
    Read(#[from] crate::input::InputError),
    #[error("{file}: invalid model config: {source}")]
    Yaml { file: String, source: serde_yaml::Error },
    #[error("unknown model_name '{name}'. Available: {available}")]
    UnknownProfile { name: String, available: String },
    #[error("{file}: invalid model config: profile '{profile}': {field} must be a finite number")]
    NotFinite { file: String, profile: String, field: &'static str },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    #[default]
    Candle,
    Mock,
    /// A model served behind the OpenAI-compatible chat API (vLLM, SGLang, llama.cpp's
    /// server, Ollama): [`super::served`].
    #[serde(rename = "openai")]
    OpenAi,
}

/// Which OpenAI-compatible server a `backend: openai` profile talks to: the chat API is
/// the same, but each takes a constraint its own way (see [`super::served::wire`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    /// Only what the OpenAI API itself defines: a JSON schema as `response_format`.
    #[default]
    Generic,
    /// llama.cpp's own `llama-server`: a JSON schema as `json_schema`.
    LlamaCpp,
    /// llama-cpp-python's server: a JSON schema as `response_format: json_object`.
    LlamaCppPython,
    /// vLLM: our own Lark grammar (llguidance) as `structured_outputs.grammar`, every form.
    Vllm,
    /// SGLang: a JSON schema as `response_format`.
    Sglang,
    /// Ollama: a JSON schema as `response_format`.
    Ollama,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Device {
    #[default]
    Cpu,
    Cuda,
    Metal,
    Auto,
}

/// One model profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Profile {
    /// The profile's name; filled in from the `models:` key.
    pub name: String,
    pub display_name: String,
    pub backend: Backend,
    pub model_name_or_path: String,
    /// Explicit tokenizer.json; otherwise next to the model or built from GGUF metadata.
    pub tokenizer: Option<String>,
    /// The pinned download that provides `model_name_or_path` (`b4 models fetch`).
    pub fetch: Option<String>,
    /// Weights type, for the model cache key (`q4_k_m`, `f32`, `bf16`, ...).
    pub dtype: String,
    pub device: Device,
    pub max_new_tokens: usize,
    pub max_input_tokens: usize,
    pub temperature: f64,
    pub do_sample: bool,
    pub top_p: f64,
    pub seed: u64,
    pub decoding: Decoding,
    /// How a fresh request's decision is asked (prompt_json): see [`Strategy`].
    pub strategy: Strategy,
    /// Added to the logits of "no call" where a constrained prompt_json decision chooses
    /// between answering and calling (0: the model's own preference).
    pub no_call_bias: f32,
    /// The same for a fresh builtin decision, where the model chooses between plain text
    /// and opening a call in its own format.
    pub builtin_no_call_bias: f32,
    /// Added to another call where a constrained decision has just closed one and could
    /// end its calls (both ways of passing tools): small models asked for two or three
    /// things often call for the first alone (0: the model's own preference).
    pub more_calls_bias: f32,
    /// Added to closing an object where a constrained decision could go on to another key
    /// (an optional parameter): small models fill in values nobody asked for.
    pub omit_optional_bias: f32,
    /// Added to `true` where a constrained decision writes a boolean value: small models
    /// write `false` for a flag the request asks for in other words.
    pub true_bias: f32,
    /// How much of the content-free prior over the offered tools' names a constrained
    /// decision divides out where it writes a call's name (`brain::name_prior`; 1: all of
    /// it, 0: none): small models take the first plausible function listed.
    pub name_calibration: f32,
    /// An optional argument whose value the conversation never writes (or that states
    /// nothing: `""`, `[]`) is left out of a decision's calls (`brain::faithful`).
    pub omit_unstated_optional: bool,
    /// A call that fills a required argument with a number (or a run of five figures) the
    /// conversation never writes is dropped; with no call left and no results to answer
    /// from, the question is asked again without tools (`brain::made_up`).
    pub drop_made_up_calls: bool,
    /// A decision that makes calls, none of which computes the one calculation the request
    /// asks for (arithmetic it writes, or `15% of 240`), gets that call added for the tool
    /// that takes an expression (`brain::faithful`).
    pub add_wanted_expression: bool,
    /// An optional enum argument a call leaves out is added when an English request names
    /// exactly one of its choices, not the default, as a word (`brain::faithful`).
    pub add_named_choices: bool,
    /// An enum argument whose choice the request does not name gives way to the one other
    /// choice it names, in English or Chinese, that no other argument holds
    /// ([`super::choice_names`]).
    pub name_choices: bool,
    /// A boolean argument the request asks for or against in so many words, in English or
    /// Chinese ("现在营业的", "matching case exactly", "don't overwrite"), is written as asked
    /// ([`super::named_flags`]).
    pub name_flags: bool,
    /// One call of a tool for each choice of a required enum parameter that a fresh request
    /// names in a list ("换成人民币、日元和欧元"), where the calls agree on the rest
    /// ([`super::choice_names::fan_out`]).
    pub fan_out_choices: bool,
    /// The calls of a fresh request whose action (delete, lock, convert, ...) none of their
    /// tools does are dropped, and the question answered without tools
    /// ([`super::unfit_action`]).
    pub drop_unfit_actions: bool,
    /// In an English request, a call the model wrote after its first, of a tool no earlier
    /// call used, that does nothing the request asks for (its tool's name is not a word of
    /// the request, and it holds no value the request writes that the earlier calls do not)
    /// is dropped ([`super::extra_call::unasked`]).
    pub drop_unasked_tools: bool,
    /// A builtin decision that calls every offered tool (three or more) once, in the order
    /// offered, is made again in the JSON envelope ([`super::list_echo`]).
    pub redo_list_echo: bool,
    /// Each optional argument (a string or number) a call leaves out is asked of the model
    /// on its own, and added where the conversation writes the value as it is
    /// ([`super::stated_optional`]).
    pub add_stated_optional: bool,
    /// Added to the answer's logits, in place of `no_call_bias` and `builtin_no_call_bias`,
    /// when the latest user message gives what a tool takes: a file path for a path
    /// parameter (what the file holds only a tool can tell), arithmetic for an expression
    /// parameter. Unset: those biases stay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_given_bias: Option<f32>,
    /// A new question after a finished turn is asked as a fresh request with the earlier
    /// turns written into it (`brain::follow_up`).
    pub fresh_follow_up: bool,
    /// A latest message that only thanks or acknowledges ("好的，谢谢你！") is asked with no
    /// tools and a note saying what it is (`brain::courtesy`): the 0.5B echoed it back.
    pub courtesy_replies: bool,
    /// A fresh answer that only says the user's message back ("你好呀！" for "你好呀！") is
    /// asked for again with no tools and a note that the message wants a reply of the
    /// model's own (`brain::echo`).
    pub reanswer_echoes: bool,
    /// A free string argument the request names by the parameter's noun ("the web
    /// deployment", "my Travel deck") is put in where the call holds a longer neighbour
    /// (`web-03`) or left an optional one out (`brain::noun_values`).
    pub noun_values: bool,
    /// After tool results, an answer is written again from a prompt of the question and
    /// its results alone (`brain::synthesis`).
    pub answer_from_results: bool,
    /// After tool results, a prompt_json decision chooses between another call and the
    /// answer first (calls first, the choice watched and `no_call_bias` added to the
    /// answer, a reminder asking whether work remains) instead of writing the answer first.
    pub next_call_after_results: bool,
    /// After tool results, before an answer, the request is asked afresh with the calls
    /// made and their results written into it; a new call whose values come from the
    /// conversation is made instead of the answer (`brain::next_step`).
    pub next_step_check: bool,
    /// Most tokens the decoder checks in one batch after each token it picks: the tokens
    /// the grammar forces, or those that followed the same words earlier in the prompt or
    /// the answer (`generate::lookup`). Only tokens the model picks anyway are kept, so
    /// the output is the same; 0 decodes one token per step.
    pub draft_tokens: usize,
    /// Lets a model whose chat template has a thinking switch (`enable_thinking`, Qwen3 /
    /// Qwen3.5) think before it answers. Off: the template closes the thought at once.
    /// A thought goes to the raw output, never into `content`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub thinking: bool,
    /// Mock backend only: how long each decision takes, in milliseconds (cancellable), so
    /// cancelling and interrupting can be tried and tested without a model.
    #[serde(skip_serializing_if = "is_zero")]
    pub mock_delay_ms: u64,
    /// `backend: openai`: the server's API root, e.g. `http://127.0.0.1:8080/v1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// `backend: openai`: the model name the server serves (an id of its `/v1/models`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `backend: openai`: the name of the environment variable that holds the API key (the
    /// key itself never goes into a file, a log or a report).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// `backend: openai`: which server it is, for how a constraint is sent.
    #[serde(skip_serializing_if = "is_default")]
    pub server: ServerKind,
    /// `backend: openai`: most seconds to open a connection.
    #[serde(skip_serializing_if = "is_default_connect")]
    pub connect_timeout_s: u64,
    /// `backend: openai`: most seconds one request may take, streaming included.
    #[serde(skip_serializing_if = "is_default_request")]
    pub request_timeout_s: u64,
    /// `backend: openai`: how many times a 429 or 5xx answer is retried (with backoff)
    /// before the decision fails.
    #[serde(skip_serializing_if = "is_default_retries")]
    pub retries: u32,
}

const CONNECT_TIMEOUT_S: u64 = 10;
const REQUEST_TIMEOUT_S: u64 = 300;
const RETRIES: u32 = 2;

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

fn is_default_connect(value: &u64) -> bool {
    *value == CONNECT_TIMEOUT_S
}

fn is_default_request(value: &u64) -> bool {
    *value == REQUEST_TIMEOUT_S
}

fn is_default_retries(value: &u32) -> bool {
    *value == RETRIES
}

/// Draft tokens by default: a batch of 8 runs the CPU kernels' 8-row path (on the 0.5B,
/// 69 ms for 8 tokens against 18 ms for one).
pub const DRAFT_TOKENS: usize = 7;

fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl Default for Profile {
    fn default() -> Self {
        Self {
            name: String::new(),
            display_name: String::new(),
            backend: Backend::Candle,
            model_name_or_path: String::new(),
            tokenizer: None,
            fetch: None,
            dtype: "q4_k_m".into(),
            device: Device::Cpu,
            max_new_tokens: 512,
            max_input_tokens: 4096,
            temperature: 0.0,
            do_sample: false,
            top_p: 1.0,
            seed: 42,
            decoding: Decoding::Free,
            strategy: Strategy::default(),
            no_call_bias: 0.0,
            builtin_no_call_bias: 0.0,
            more_calls_bias: 0.0,
            omit_optional_bias: 0.0,
            true_bias: 0.0,
            name_calibration: 0.0,
            omit_unstated_optional: false,
            drop_made_up_calls: false,
            add_wanted_expression: false,
            add_named_choices: false,
            name_choices: false,
            name_flags: false,
            fan_out_choices: false,
            drop_unfit_actions: false,
            drop_unasked_tools: false,
            redo_list_echo: false,
            add_stated_optional: false,
            input_given_bias: None,
            fresh_follow_up: false,
            courtesy_replies: false,
            reanswer_echoes: false,
            noun_values: false,
            answer_from_results: false,
            next_call_after_results: false,
            next_step_check: false,
            draft_tokens: DRAFT_TOKENS,
            thinking: false,
            mock_delay_ms: 0,
            base_url: None,
            model: None,
            api_key_env: None,
            server: ServerKind::Generic,
            connect_timeout_s: CONNECT_TIMEOUT_S,
            request_timeout_s: REQUEST_TIMEOUT_S,
            retries: RETRIES,
        }
    }
}

impl Profile {
    pub fn label(&self) -> &str {
        if self.display_name.is_empty() {
            &self.name
        } else {
            &self.display_name
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exclusivity {
    /// One retry with a stronger reminder, then content wins.
    #[default]
    RetryThenContent,
    /// Keep content, drop the calls, warn (the seeds' choice).
    ContentWins,
    /// Keep the calls, drop the content.
    CallsWin,
    /// The decision fails.
    Error,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RuntimeConfig {
    pub max_turns: usize,
    pub exclusivity: Exclusivity,
    pub tool_timeout_secs: u64,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self { max_turns: 6, exclusivity: Exclusivity::RetryThenContent, tool_timeout_secs: 20 }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolCallingConfig {
    pub mode: ToolCalling,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// The default profile.
    pub model: Profile,
    pub models: BTreeMap<String, Profile>,
    pub tool_calling: ToolCallingConfig,
    pub runtime: RuntimeConfig,
    /// Where the file was read from; relative model paths resolve against its parent.
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

impl Profile {
    /// The first logit bias that is not a finite number (`.nan`, `.inf`): added to logits,
    /// it would leave the decoder nothing to choose by.
    fn non_finite_bias(&self) -> Option<&'static str> {
        [
            ("no_call_bias", Some(self.no_call_bias)),
            ("builtin_no_call_bias", Some(self.builtin_no_call_bias)),
            ("more_calls_bias", Some(self.more_calls_bias)),
            ("omit_optional_bias", Some(self.omit_optional_bias)),
            ("true_bias", Some(self.true_bias)),
            ("name_calibration", Some(self.name_calibration)),
            ("input_given_bias", self.input_given_bias),
        ]
        .into_iter()
        .find(|(_, value)| value.is_some_and(|v| !v.is_finite()))
        .map(|(field, _)| field)
    }
}

impl ModelConfig {
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let file = path.display().to_string();
        let text = crate::input::read_text(path, crate::input::MODEL_CONFIG)?;
        let mut config: ModelConfig = serde_yaml::from_str(&text)
            .map_err(|source| ConfigError::Yaml { file: file.clone(), source })?;
        for (name, profile) in config.models.iter_mut() {
            profile.name = name.clone();
        }
        if config.model.name.is_empty() {
            config.model.name = "default".into();
        }
        for profile in std::iter::once(&config.model).chain(config.models.values()) {
            if let Some(field) = profile.non_finite_bias() {
                return Err(ConfigError::NotFinite { file, profile: profile.name.clone(), field });
            }
        }
        config.source = Some(path.to_path_buf());
        Ok(config)
    }

    /// The named profile, or the default `model:` section when `name` is `None`.
    pub fn profile(&self, name: Option<&str>) -> Result<Profile, ConfigError> {
        match name {
            None => Ok(self.model.clone()),
            Some(name) => self.models.get(name).cloned().ok_or_else(|| ConfigError::UnknownProfile {
                name: name.to_string(),
                available: self.profile_names().join(", "),
            }),
        }
    }

    pub fn profile_names(&self) -> Vec<String> {
        self.models.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_config_has_its_profiles_and_a_default() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/model.yaml");
        let config = ModelConfig::load(&path).unwrap();
        assert_eq!(config.profile_names(), vec!["mock", "qwen-0.5b", "qwen-1.5b", "qwen3.5-0.8b", "qwen3.5-4b", "server-llama-cpp"]);
        assert_eq!(config.profile(Some("qwen3.5-0.8b")).unwrap().fetch, None);
        assert_eq!(config.profile(Some("server-llama-cpp")).unwrap().backend, Backend::OpenAi);
        assert_eq!(config.profile(None).unwrap().name, "qwen-0.5b");
        assert_eq!(config.profile(Some("mock")).unwrap().backend, Backend::Mock);
        assert_eq!(config.runtime.max_turns, 6);
    }

    #[test]
    fn unknown_profile_lists_the_available_ones() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/model.yaml");
        let config = ModelConfig::load(&path).unwrap();
        let err = config.profile(Some("gpt-9")).unwrap_err().to_string();
        assert_eq!(err, "unknown model_name 'gpt-9'. Available: mock, qwen-0.5b, qwen-1.5b, qwen3.5-0.8b, qwen3.5-4b, server-llama-cpp");
    }

    /// `text` loaded as a `model.yaml` file of its own.
    fn load_text(text: &str) -> Result<ModelConfig, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.yaml");
        std::fs::write(&path, text).unwrap();
        ModelConfig::load(&path)
    }

    #[test]
    fn unknown_keys_are_errors_naming_the_file() {
        let err = load_text("model:\n  max_new_tokenz: 3\n").unwrap_err().to_string();
        assert!(err.contains("model.yaml") && err.contains("max_new_tokenz"), "{err}");
    }

    #[test]
    fn a_bias_that_is_no_finite_number_is_an_error_naming_it() {
        let err = load_text("models:\n  small:\n    more_calls_bias: .nan\n").unwrap_err().to_string();
        assert!(err.contains("model.yaml") && err.contains("'small'") && err.contains("more_calls_bias must be a finite number"), "{err}");
        assert!(load_text("model:\n  no_call_bias: .inf\n").unwrap_err().to_string().contains("no_call_bias must be a finite number"));
        assert!(load_text("model:\n  more_calls_bias: 30\n").is_ok());
    }
}
