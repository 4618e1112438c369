//! llguidance's view of a model's vocabulary, built from our own tokenizer's token bytes
//! (the `toktrie` crate; the `toktrie_hf_tokenizers` adapter needs another `tokenizers`
//! version than ours). Control tokens (`<|im_end|>`, `<|im_start|>`, ...) are marked as
//! special, so no grammar text can produce them; the end of turn is allowed only where the
//! grammar is complete. Built once per model and shared by every decision.

use std::any::Any;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{InferenceCapabilities, TokEnv, TokRxInfo, TokTrie, TokenId, TokenizerEnv};
use llguidance::{Matcher, ParserFactory, TokenParser};

use super::super::generate::ModelHandle;
use super::super::tokenizer::ModelTokenizer;
use super::matcher::GrammarConstraint;
use super::ConstrainError;

/// The text of the token that ends an assistant turn in ChatML.
const END_OF_TURN: &str = "<|im_end|>";

/// A vocabulary ready for grammars: compiles grammars into per-decision constraints.
pub struct TokenSpace {
    factory: ParserFactory,
    /// Grammars compiled before, by their Lark text (the same tools schema, way and form
    /// give the same text): each decision gets a copy of its grammar's fresh parser.
    compiled: Mutex<HashMap<String, TokenParser>>,
    /// Tables over the vocabulary that wrappers compute once (see [`TokenSpace::table`]).
    tables: Mutex<HashMap<&'static str, Arc<dyn Any + Send + Sync>>>,
}

/// Most compiled grammars kept per token space (all are dropped when it is full).
const MAX_COMPILED: usize = 64;

impl std::fmt::Debug for TokenSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSpace").field("vocab_size", &self.vocab_size()).finish()
    }
}

/// Our tokenizer behind llguidance's tokenizer interface: it tokenizes text the grammar
/// forces (canonically, as the model saw such text in training).
struct ModelTokEnv {
    trie: TokTrie,
    tokenizer: ModelTokenizer,
}

impl TokenizerEnv for ModelTokEnv {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<TokenId> {
        match std::str::from_utf8(s).ok().and_then(|text| self.tokenizer.encode(text).ok()) {
            Some(ids) => ids,
            // A cut in the middle of a character: the bytes as the trie's longest tokens.
            None => self.trie.greedy_tokenize(s),
        }
    }
}

impl TokenSpace {
    /// The vocabulary of `tokenizer`; `stop_tokens` are the model's end tokens, of which
    /// `<|im_end|>` (when there) is the one allowed at the end of a grammar.
    pub fn new(tokenizer: &ModelTokenizer, stop_tokens: &[u32]) -> Result<Self, ConstrainError> {
        let eos = tokenizer
            .token_id(END_OF_TURN)
            .filter(|id| stop_tokens.contains(id))
            .or_else(|| stop_tokens.first().copied())
            .ok_or_else(|| ConstrainError::Vocabulary("the model has no stop token to end a constrained answer".into()))?;
        let vocab_size = tokenizer.vocab_size();
        let words: Vec<Vec<u8>> = (0..vocab_size as u32)
            .map(|id| match tokenizer.token_bytes(id) {
                Some(bytes) if tokenizer.is_special(id) => {
                    let mut marked = vec![TokTrie::SPECIAL_TOKEN_MARKER];
                    marked.extend(bytes);
                    marked
                }
                Some(bytes) => bytes,
                None => Vec::new(),
            })
            .collect();
        let info = TokRxInfo::new(vocab_size as u32, eos);
        let trie = TokTrie::from(&info, &words);
        let env: TokEnv = Arc::new(ModelTokEnv { trie, tokenizer: tokenizer.clone() });
        Self::from_env(env)
    }

    /// Over any llguidance token environment (tests use a one-byte-per-token one).
    pub fn from_env(env: TokEnv) -> Result<Self, ConstrainError> {
        // No slices: llguidance's default ones (`new_simple`: sub-tries of the vocabulary for
        // JSON whitespace and string runs, each kept with and without its children) held 47 MB
        // for Qwen's 151k tokens, 8% of the 0.5B model's process, to save 0.3-0.6 ms of mask a
        // token (0.26 -> 0.53 ms prompt_json, 0.55 -> 1.11 ms builtin on the seeds' decision,
        // where a decode step takes 20-25 ms). The masks are the same either way.
        let mut factory = ParserFactory::new(&env, InferenceCapabilities::default(), &[]).map_err(|e| ConstrainError::Vocabulary(e.to_string()))?;
        // Warnings would go to stderr, under the TUI.
        factory.quiet();
        Ok(Self { factory, compiled: Mutex::default(), tables: Mutex::default() })
    }

    /// The shared token space of a loaded model (built on first use, about 0.6 s for a
    /// 150k vocabulary, or already built by [`TokenSpace::warm`] while the model loaded).
    pub fn for_model(model: &ModelHandle) -> Result<Arc<TokenSpace>, ConstrainError> {
        Self::shared(&model.info().path, model.tokenizer(), model.stop_tokens())
    }

    /// Starts building the token space of the model at `path` on a thread of its own, so
    /// that it is ready (or nearly) when the first constrained decision asks for it; called
    /// by the loader once the tokenizer is read, beside the weights being read.
    pub fn warm(path: &std::path::Path, tokenizer: &ModelTokenizer, stop_tokens: &[u32]) {
        let (path, tokenizer, stop_tokens) = (path.to_path_buf(), tokenizer.clone(), stop_tokens.to_vec());
        let _ = std::thread::Builder::new().name("b4-token-space".into()).spawn(move || {
            let _ = Self::shared(&path, &tokenizer, &stop_tokens);
        });
    }

    /// The one token space per (model file, vocabulary size): the first caller builds it
    /// while holding its slot, so a second caller waits for it instead of building it again.
    fn shared(path: &std::path::Path, tokenizer: &ModelTokenizer, stop_tokens: &[u32]) -> Result<Arc<TokenSpace>, ConstrainError> {
        type Slot = Arc<Mutex<Option<Arc<TokenSpace>>>>;
        static SPACES: OnceLock<Mutex<HashMap<(PathBuf, usize), Slot>>> = OnceLock::new();
        fn poisoned<T>(_: T) -> ConstrainError {
            ConstrainError::Vocabulary("token space cache lock poisoned".into())
        }
        let slot = SPACES
            .get_or_init(Default::default)
            .lock()
            .map_err(poisoned)?
            .entry((path.to_path_buf(), tokenizer.vocab_size()))
            .or_default()
            .clone();
        let mut slot = slot.lock().map_err(poisoned)?;
        if let Some(space) = slot.as_ref() {
            return Ok(space.clone());
        }
        let space = Arc::new(TokenSpace::new(tokenizer, stop_tokens)?);
        *slot = Some(space.clone());
        Ok(space)
    }

    pub fn vocab_size(&self) -> usize {
        self.factory.tok_env().tok_trie().vocab_size()
    }

    /// The token allowed at the end of a complete answer.
    pub fn eos(&self) -> u32 {
        self.factory.tok_env().tok_trie().eos_token()
    }

    /// Compiles a Lark grammar (see [`super::lark`]) into a fresh matcher; a grammar
    /// compiled before in this process is copied instead.
    pub fn matcher(&self, lark: &str) -> Result<Matcher, ConstrainError> {
        if let Some(parser) = self.compiled.lock().ok().and_then(|c| c.get(lark).map(TokenParser::deep_clone)) {
            return Ok(Matcher::new(Ok(parser)));
        }
        let parser = self
            .factory
            .create_parser(TopLevelGrammar::from_lark(lark.to_string()))
            .map_err(|e| ConstrainError::Grammar(e.to_string()))?;
        if let Ok(mut compiled) = self.compiled.lock() {
            if compiled.len() >= MAX_COMPILED {
                compiled.clear();
            }
            compiled.insert(lark.to_string(), parser.deep_clone());
        }
        Ok(Matcher::new(Ok(parser)))
    }

    /// The table `name` over this vocabulary, built by `build` on first use and kept (a
    /// token's kind for a wrapper, say: computing it takes a pass over 150k tokens).
    pub fn table<T: Any + Send + Sync>(&self, name: &'static str, build: impl FnOnce(&Self) -> T) -> Arc<T> {
        if let Some(found) = self.tables.lock().ok().and_then(|t| t.get(name).cloned()).and_then(|t| t.downcast::<T>().ok()) {
            return found;
        }
        let table = Arc::new(build(self));
        if let Ok(mut tables) = self.tables.lock() {
            tables.insert(name, table.clone());
        }
        table
    }

    /// How many compiled grammars are kept.
    pub fn compiled_grammars(&self) -> usize {
        self.compiled.lock().map_or(0, |c| c.len())
    }

    /// A constraint for one generation under `lark`.
    pub fn constraint(&self, lark: &str) -> Result<GrammarConstraint, ConstrainError> {
        Ok(GrammarConstraint::new(self.matcher(lark)?, self.vocab_size()))
    }

    /// The bytes of one token (empty for a special token or an id outside the vocabulary).
    pub fn token_bytes(&self, token: u32) -> Vec<u8> {
        let trie = self.factory.tok_env().tok_trie();
        if (token as usize) >= trie.vocab_size() {
            return Vec::new();
        }
        let bytes = trie.token(token);
        if bytes.first() == Some(&TokTrie::SPECIAL_TOKEN_MARKER) {
            return Vec::new();
        }
        bytes.to_vec()
    }

    /// The text of one token without its whitespace (lossy where the token splits a
    /// character): what the choice watchers compare with the text written so far.
    pub fn visible_text(&self, token: u32) -> String {
        String::from_utf8_lossy(&self.token_bytes(token)).chars().filter(|c| !c.is_whitespace()).collect()
    }

    /// The tokens of `text` as the model's tokenizer writes them.
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        self.factory.tok_env().tokenize_bytes(text.as_bytes())
    }

    /// Whether `lark` accepts `text` as a complete answer (tokenized canonically).
    pub fn accepts(&self, lark: &str, text: &str) -> Result<bool, ConstrainError> {
        let mut matcher = self.matcher(lark)?;
        let tokens = self.tokenize(text);
        let matcher_err = |e: anyhow::Error| ConstrainError::Matcher(e.to_string());
        if matcher.validate_tokens(&tokens).map_err(matcher_err)? < tokens.len() {
            return Ok(false);
        }
        matcher.consume_tokens(&tokens).map_err(matcher_err)?;
        matcher.is_accepting().map_err(matcher_err)
    }
}
