//! llguidance's view of a model's vocabulary, built from our own tokenizer's token bytes
//! (the `toktrie` crate; the `toktrie_hf_tokenizers` adapter needs another `tokenizers`
//! version than ours). Control tokens (`<|im_end|>`, `<|im_start|>`, ...) are marked as
//! special, so no grammar text can produce them; the end of turn is allowed only where the
//! grammar is complete. Built once per model and shared by every decision.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{TokEnv, TokRxInfo, TokTrie, TokenId, TokenizerEnv};
use llguidance::{Matcher, ParserFactory};

use super::super::generate::ModelHandle;
use super::super::tokenizer::ModelTokenizer;
use super::matcher::GrammarConstraint;
use super::ConstrainError;

/// The text of the token that ends an assistant turn in ChatML.
const END_OF_TURN: &str = "<|im_end|>";

/// A vocabulary ready for grammars: compiles grammars into per-decision constraints.
pub struct TokenSpace {
    factory: ParserFactory,
}

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
        let mut factory = ParserFactory::new_simple(&env).map_err(|e| ConstrainError::Vocabulary(e.to_string()))?;
        // Warnings would go to stderr, under the TUI.
        factory.quiet();
        Ok(Self { factory })
    }

    /// The shared token space of a loaded model (built on first use, about a second for a
    /// 150k vocabulary).
    pub fn for_model(model: &ModelHandle) -> Result<Arc<TokenSpace>, ConstrainError> {
        type Spaces = Mutex<HashMap<(PathBuf, usize), Arc<TokenSpace>>>;
        static SPACES: OnceLock<Spaces> = OnceLock::new();
        let key = (model.info().path.clone(), model.tokenizer().vocab_size());
        let mut spaces = SPACES
            .get_or_init(Spaces::default)
            .lock()
            .map_err(|_| ConstrainError::Vocabulary("token space cache lock poisoned".into()))?;
        if let Some(space) = spaces.get(&key) {
            return Ok(space.clone());
        }
        let space = Arc::new(TokenSpace::new(model.tokenizer(), model.stop_tokens())?);
        spaces.insert(key, space.clone());
        Ok(space)
    }

    pub fn vocab_size(&self) -> usize {
        self.factory.tok_env().tok_trie().vocab_size()
    }

    /// The token allowed at the end of a complete answer.
    pub fn eos(&self) -> u32 {
        self.factory.tok_env().tok_trie().eos_token()
    }

    /// Compiles a Lark grammar (see [`super::lark`]) into a fresh matcher.
    pub fn matcher(&self, lark: &str) -> Result<Matcher, ConstrainError> {
        let parser = self
            .factory
            .create_parser(TopLevelGrammar::from_lark(lark.to_string()))
            .map_err(|e| ConstrainError::Grammar(e.to_string()))?;
        Ok(Matcher::new(Ok(parser)))
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
