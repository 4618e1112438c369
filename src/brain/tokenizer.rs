//! Text <-> token ids for a model: its `tokenizer.json` when there is one, otherwise a
//! byte-level BPE tokenizer rebuilt from the GGUF metadata (`tokenizer.ggml.*`), the way
//! llama.cpp and transformers read those files: vocabulary and merges, the pre-tokenizer
//! regex named by `tokenizer.ggml.pre`, control tokens (type 3) as special tokens,
//! user-defined tokens (type 4, e.g. `<tool_call>`) as plain added tokens, no BOS.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use candle_core::quantized::gguf_file;
use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::{AddedToken, DecoderWrapper, PreTokenizerWrapper, SplitDelimiterBehavior, Tokenizer};

use super::BrainError;

/// Qwen2 / Qwen2.5 / Qwen3 split (llama.cpp `qwen2`): single digits, letters with one
/// leading non-letter, punctuation runs, newline runs, whitespace.
const QWEN2_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Qwen3.5 split (llama.cpp `qwen35`): Qwen2's, with combining marks inside letter runs.
const QWEN35_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Llama 3 split (llama.cpp `llama-bpe`): like Qwen2 but digits in groups of up to three.
const LLAMA3_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// `tokenizer.ggml.token_type` values (llama.cpp `llama_token_type`).
const TOKEN_TYPE_CONTROL: i64 = 3;
const TOKEN_TYPE_USER_DEFINED: i64 = 4;

fn split_regex_for(pre: &str) -> Option<&'static str> {
    match pre {
        "qwen2" | "deepseek-r1-qwen" => Some(QWEN2_SPLIT),
        "qwen35" => Some(QWEN35_SPLIT),
        "llama3" | "llama-v3" | "llama-bpe" | "smaug-bpe" | "dbrx" => Some(LLAMA3_SPLIT),
        _ => None,
    }
}

/// A model's tokenizer plus what generation needs to know about its tokens.
#[derive(Clone)]
pub struct ModelTokenizer {
    inner: Tokenizer,
    /// Tokens whose text is not part of a normal answer (`<|im_end|>`, `<|endoftext|>`...).
    special: HashSet<u32>,
    /// Added tokens (special or not): their bytes are their text.
    added: HashSet<u32>,
    byte_level: bool,
}

impl std::fmt::Debug for ModelTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelTokenizer")
            .field("vocab_size", &self.vocab_size())
            .field("special", &self.special.len())
            .field("byte_level", &self.byte_level)
            .finish()
    }
}

impl ModelTokenizer {
    /// Reads a Hugging Face `tokenizer.json`.
    pub fn from_file(path: &Path) -> Result<Self, BrainError> {
        let bytes = crate::input::read_bytes(path, crate::input::TOKENIZER)?;
        let inner = Tokenizer::from_bytes(bytes).map_err(|e| BrainError::Tokenizer(format!("{}: {e}", path.display())))?;
        Ok(Self::wrap(inner))
    }

    /// Wraps a ready `tokenizers::Tokenizer`.
    pub fn wrap(inner: Tokenizer) -> Self {
        let added_tokens = inner.get_added_tokens_decoder();
        let special = added_tokens.iter().filter(|(_, token)| token.special).map(|(id, _)| *id).collect();
        let added = added_tokens.keys().copied().collect();
        let byte_level = matches!(inner.get_decoder(), Some(DecoderWrapper::ByteLevel(_)));
        Self { inner, special, added, byte_level }
    }

    /// Rebuilds the tokenizer from GGUF metadata (`tokenizer.ggml.model` must be `gpt2`,
    /// i.e. byte-level BPE; other vocabularies need a `tokenizer.json`).
    pub fn from_gguf(metadata: &HashMap<String, gguf_file::Value>) -> Result<Self, BrainError> {
        let text = |key: &str| -> Result<&String, BrainError> {
            metadata
                .get(key)
                .ok_or_else(|| BrainError::Tokenizer(format!("GGUF metadata has no {key}")))?
                .to_string()
                .map_err(|e| BrainError::Tokenizer(format!("GGUF {key}: {e}")))
        };
        let kind = text("tokenizer.ggml.model")?;
        if kind != "gpt2" {
            return Err(BrainError::Tokenizer(format!(
                "GGUF tokenizer model '{kind}' is not byte-level BPE; put the model's tokenizer.json next to it or set `tokenizer:` in the profile"
            )));
        }
        let pre = text("tokenizer.ggml.pre").map(String::as_str).unwrap_or("default");
        let split = split_regex_for(pre).ok_or_else(|| {
            BrainError::Tokenizer(format!(
                "GGUF pre-tokenizer '{pre}' is not supported (qwen2, qwen35, llama-bpe); put the model's tokenizer.json next to it"
            ))
        })?;
        let tokens = string_array(metadata, "tokenizer.ggml.tokens")?;
        let merges = string_array(metadata, "tokenizer.ggml.merges")?;
        let types = match metadata.get("tokenizer.ggml.token_type") {
            Some(value) => value
                .to_vec()
                .map_err(|e| BrainError::Tokenizer(format!("GGUF tokenizer.ggml.token_type: {e}")))?
                .iter()
                .map(gguf_int)
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        Self::from_bpe_parts(&tokens, &merges, &types, split)
    }

    /// Byte-level BPE from its parts (see [`ModelTokenizer::from_gguf`]).
    pub fn from_bpe_parts(tokens: &[&str], merges: &[&str], types: &[i64], split: &str) -> Result<Self, BrainError> {
        let err = |what: &str, e: &dyn std::fmt::Display| BrainError::Tokenizer(format!("{what}: {e}"));
        let alphabet: HashSet<char> = ByteLevel::alphabet().into_iter().collect();
        let byte_chars = byte_to_char();
        // Tokens are stored in the byte alphabet; one that is not is respelled from its
        // UTF-8 bytes, as transformers does.
        let spelled: Vec<String> = tokens
            .iter()
            .map(|t| {
                if t.chars().all(|c| alphabet.contains(&c)) {
                    (*t).to_string()
                } else {
                    t.bytes().filter_map(|b| byte_chars.get(b as usize).copied()).collect()
                }
            })
            .collect();
        let vocab: Vocab = spelled.iter().enumerate().map(|(id, t)| (t.clone(), id as u32)).collect();
        let merges = merges
            .iter()
            .map(|m| {
                m.split_once(' ')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
                    .ok_or_else(|| BrainError::Tokenizer(format!("GGUF merge without a space: {m:?}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let bpe = BPE::builder()
            .vocab_and_merges(vocab, merges)
            .build()
            .map_err(|e| err("cannot build BPE", &e))?;
        let mut inner = Tokenizer::new(bpe);
        let split = Split::new(SplitPattern::Regex(split.to_string()), SplitDelimiterBehavior::Isolated, false)
            .map_err(|e| err("pre-tokenizer regex", &e))?;
        let pre = Sequence::new(vec![
            PreTokenizerWrapper::Split(split),
            PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, false)),
        ]);
        inner.with_pre_tokenizer(Some(PreTokenizerWrapper::Sequence(pre)));
        inner.with_decoder(Some(DecoderWrapper::ByteLevel(ByteLevelDecoder::default())));

        let typed = |wanted: i64| -> Vec<&str> {
            tokens
                .iter()
                .zip(types.iter().chain(std::iter::repeat(&0)))
                .filter(|(_, ty)| **ty == wanted)
                .map(|(t, _)| *t)
                .collect()
        };
        // A control token spelled outside the byte alphabet is a llama.cpp mislabel; adding
        // it would grow the vocabulary past the model's, so it is skipped (as transformers does).
        let control: Vec<AddedToken> = typed(TOKEN_TYPE_CONTROL)
            .into_iter()
            .filter(|t| t.chars().all(|c| alphabet.contains(&c)))
            .map(|t| AddedToken::from(t.to_string(), true).normalized(false))
            .collect();
        let user: Vec<AddedToken> = typed(TOKEN_TYPE_USER_DEFINED)
            .into_iter()
            .map(|t| AddedToken::from(t.to_string(), false).normalized(false))
            .collect();
        inner.add_special_tokens(control).map_err(|e| err("special tokens", &e))?;
        inner.add_tokens(user).map_err(|e| err("added tokens", &e))?;
        Ok(Self::wrap(inner))
    }

    /// Token ids of `text`; special-token text like `<|im_start|>` becomes its one token.
    /// No BOS is added.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, BrainError> {
        let encoding = self
            .inner
            .encode_fast(text, false)
            .map_err(|e| BrainError::Tokenizer(format!("cannot encode: {e}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// The text of `ids`, special tokens included.
    pub fn decode(&self, ids: &[u32]) -> Result<String, BrainError> {
        self.inner
            .decode(ids, false)
            .map_err(|e| BrainError::Tokenizer(format!("cannot decode: {e}")))
    }

    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    pub fn token_text(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// Number of ids the tokenizer knows, added tokens included.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.special.contains(&id)
    }

    /// The raw bytes a token stands for (a special token: its text), for building a token
    /// trie (constrained decoding). `None` for an unknown id.
    pub fn token_bytes(&self, id: u32) -> Option<Vec<u8>> {
        let token = self.inner.id_to_token(id)?;
        if self.added.contains(&id) {
            return Some(token.into_bytes());
        }
        if self.byte_level {
            let table = char_to_byte();
            return token.chars().map(|c| table.get(&c).copied()).collect();
        }
        // SentencePiece style: `<0x0A>` byte tokens and `▁` for a space.
        if let Some(hex) = token.strip_prefix("<0x").and_then(|t| t.strip_suffix('>')) {
            if let Ok(byte) = u8::from_str_radix(hex, 16) {
                return Some(vec![byte]);
            }
        }
        Some(token.replace('\u{2581}', " ").into_bytes())
    }

    /// The wrapped `tokenizers` tokenizer.
    pub fn inner(&self) -> &Tokenizer {
        &self.inner
    }
}

fn string_array<'a>(metadata: &'a HashMap<String, gguf_file::Value>, key: &str) -> Result<Vec<&'a str>, BrainError> {
    metadata
        .get(key)
        .ok_or_else(|| BrainError::Tokenizer(format!("GGUF metadata has no {key}")))?
        .to_vec()
        .map_err(|e| BrainError::Tokenizer(format!("GGUF {key}: {e}")))?
        .iter()
        .map(|v| v.to_string().map(String::as_str).map_err(|e| BrainError::Tokenizer(format!("GGUF {key}: {e}"))))
        .collect()
}

fn gguf_int(value: &gguf_file::Value) -> Result<i64, BrainError> {
    use gguf_file::Value as V;
    Ok(match value {
        V::I32(v) => i64::from(*v),
        V::U32(v) => i64::from(*v),
        V::I64(v) => *v,
        V::U8(v) => i64::from(*v),
        V::I8(v) => i64::from(*v),
        V::U16(v) => i64::from(*v),
        V::I16(v) => i64::from(*v),
        other => return Err(BrainError::Tokenizer(format!("token type is not an integer: {other:?}"))),
    })
}

/// GPT-2's byte -> printable char table (`bytes_to_unicode`).
fn byte_to_char() -> Vec<char> {
    let printable = |b: u32| (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b);
    let mut next = 256u32;
    (0u32..256)
        .map(|b| {
            let code = if printable(b) {
                b
            } else {
                next += 1;
                next - 1
            };
            char::from_u32(code).unwrap_or('\u{FFFD}')
        })
        .collect()
}

fn char_to_byte() -> &'static HashMap<char, u8> {
    static TABLE: std::sync::OnceLock<HashMap<char, u8>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| byte_to_char().into_iter().enumerate().map(|(b, c)| (c, b as u8)).collect())
}

/// Turns generated ids into text pieces as they arrive, holding back a piece until it
/// decodes cleanly (a CJK character or emoji spans several byte tokens).
#[derive(Debug, Default)]
pub struct DecodeStream {
    tokens: Vec<u32>,
    prefix_offset: usize,
    read_offset: usize,
}

impl DecodeStream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a token; returns the new text once it is whole.
    pub fn push(&mut self, tokenizer: &ModelTokenizer, token: u32) -> Result<Option<String>, BrainError> {
        self.tokens.push(token);
        let window = self.tokens.get(self.prefix_offset..).unwrap_or_default();
        let read = self.tokens.get(self.prefix_offset..self.read_offset).unwrap_or_default();
        let before = tokenizer.decode(read)?;
        let now = tokenizer.decode(window)?;
        if now.len() > before.len() && !now.ends_with('\u{FFFD}') {
            let piece = match now.strip_prefix(before.as_str()) {
                Some(piece) => piece.to_string(),
                None => now.get(before.len()..).map(str::to_string).unwrap_or_default(),
            };
            self.prefix_offset = self.read_offset;
            self.read_offset = self.tokens.len();
            Ok(Some(piece))
        } else {
            Ok(None)
        }
    }

    /// What is still held back (a cut-off multi-byte character at the end).
    pub fn finish(&mut self, tokenizer: &ModelTokenizer) -> Result<Option<String>, BrainError> {
        let read = self.tokens.get(self.prefix_offset..self.read_offset).unwrap_or_default();
        let window = self.tokens.get(self.prefix_offset..).unwrap_or_default();
        let before = tokenizer.decode(read)?;
        let now = tokenizer.decode(window)?;
        self.prefix_offset = self.tokens.len();
        self.read_offset = self.tokens.len();
        let rest = now.strip_prefix(before.as_str()).unwrap_or_default();
        Ok((!rest.is_empty()).then(|| rest.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toy byte-level vocabulary: all 256 byte chars, a few merges, a control token and a
    /// user-defined one.
    fn toy() -> ModelTokenizer {
        let bytes: Vec<String> = byte_to_char().into_iter().map(String::from).collect();
        let mut tokens: Vec<&str> = bytes.iter().map(String::as_str).collect();
        let extra = ["he", "ll", "hell", "hello", "Ġw", "Ġwo", "<|im_end|>", "<tool_call>"];
        tokens.extend(extra);
        let merges = ["h e", "l l", "he ll", "hell o", "Ġ w", "Ġw o"];
        let mut types = vec![1i64; 256 + 6];
        types.extend([3, 4]);
        ModelTokenizer::from_bpe_parts(&tokens, &merges, &types, QWEN2_SPLIT).unwrap()
    }

    #[test]
    fn merges_specials_and_added_tokens() {
        let tok = toy();
        let id = |t: &str| tok.token_id(t).unwrap();
        let ids = tok.encode("hello wo<|im_end|><tool_call>").unwrap();
        assert_eq!(ids, vec![id("hello"), id("Ġwo"), id("<|im_end|>"), id("<tool_call>")]);
        assert!(tok.is_special(id("<|im_end|>")));
        assert!(!tok.is_special(id("<tool_call>")));
        assert_eq!(tok.decode(&ids).unwrap(), "hello wo<|im_end|><tool_call>");
    }

    #[test]
    fn digits_split_one_by_one_and_cjk_round_trips() {
        let tok = toy();
        let text = "42 你好\n\n  x";
        let ids = tok.encode(text).unwrap();
        assert_eq!(tok.decode(&ids).unwrap(), text);
        // "4" and "2" are separate pre-tokens with the Qwen2 split.
        assert_eq!(ids.get(..2), Some(&[tok.token_id("4").unwrap(), tok.token_id("2").unwrap()][..]));
    }

    #[test]
    fn token_bytes_undo_the_byte_alphabet() {
        let tok = toy();
        assert_eq!(tok.token_bytes(tok.token_id("Ġwo").unwrap()), Some(b" wo".to_vec()));
        let first_byte_of_ni = tok.encode("你").unwrap()[0];
        assert_eq!(tok.token_bytes(first_byte_of_ni), Some(vec![0xe4]));
        assert_eq!(tok.token_bytes(tok.token_id("<|im_end|>").unwrap()), Some(b"<|im_end|>".to_vec()));
        assert_eq!(tok.token_bytes(99_999), None);
    }

    #[test]
    fn decode_stream_holds_back_partial_characters() {
        let tok = toy();
        let text = "hi 你好🎉!";
        let ids = tok.encode(text).unwrap();
        let mut stream = DecodeStream::new();
        let mut pieces = Vec::new();
        for id in ids {
            if let Some(piece) = stream.push(&tok, id).unwrap() {
                assert!(!piece.contains('\u{FFFD}'), "{piece:?}");
                pieces.push(piece);
            }
        }
        if let Some(rest) = stream.finish(&tok).unwrap() {
            pieces.push(rest);
        }
        assert_eq!(pieces.concat(), text);
        assert!(pieces.contains(&"你".to_string()) && pieces.contains(&"🎉".to_string()), "{pieces:?}");
    }

    #[test]
    fn unsupported_gguf_vocabularies_are_clear_errors() {
        let mut md = HashMap::new();
        md.insert("tokenizer.ggml.model".to_string(), gguf_file::Value::String("llama".into()));
        let err = ModelTokenizer::from_gguf(&md).unwrap_err().to_string();
        assert!(err.contains("'llama' is not byte-level BPE") && err.contains("tokenizer.json"), "{err}");
    }
}
