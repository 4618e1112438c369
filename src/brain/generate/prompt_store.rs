//! Prompt prefixes that outlive the process. The system message (the prompt and the tools
//! schema, most of a decision's prompt) is the same from one run to the next; its KV cache
//! is saved under the cache folder once and loaded by the next process that sees the same
//! tokens, instead of being prefilled again (seconds on a CPU).
//!
//! One file per (model, pass, exact token ids), named by a hash of them. A file holds a
//! header (what it was made from, checked field by field on load), the keys and values as
//! f32 (a restored cache is the one the prefill computed, so answers do not change), and a
//! SHA-256 of all that. A file that does not check out is removed with one warning and
//! never used. The folder is bounded in size: the least recently used files go first.
//!
//! Off unless a front end turns it on ([`enable`]); `--no-prompt-cache` leaves it off.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::super::model::CacheImage;

const MAGIC: &[u8; 8] = b"B4PROMPT";
/// Raised when the keys and values a prefill computes change (2: the one-row Q8_0 / Q5_0
/// kernels add in the batched ones' order), so a file made by an older build, holding what
/// this build would not compute, is dropped like any stale file.
const VERSION: u32 = 2;
/// The folder's bound by default: some thirty system prompts of the 0.5B model.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// Where prompt caches go, when on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptStore {
    pub dir: PathBuf,
    pub max_bytes: u64,
}

static STORE: Mutex<Option<PromptStore>> = Mutex::new(None);

/// Turns the process's prompt cache on in `store` (or off with `None`).
pub fn enable(store: Option<PromptStore>) {
    if let Ok(mut current) = STORE.lock() {
        *current = store;
    }
}

/// The process's prompt cache, when on.
pub fn current() -> Option<PromptStore> {
    STORE.lock().ok().and_then(|s| s.clone())
}

/// `$B4_PROMPT_CACHE_DIR` when set, else the per-user cache folder `b4-agent/prompts`.
pub fn default_dir() -> PathBuf {
    super::super::fetch::cache_folder("B4_PROMPT_CACHE_DIR", "prompts")
}

impl PromptStore {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir, max_bytes: DEFAULT_MAX_BYTES }
    }

    fn path(&self, model: &str, tokens: &[u32]) -> PathBuf {
        let mut hash = Sha256::new();
        hash.update(model.as_bytes());
        hash.update([0]);
        for t in tokens {
            hash.update(t.to_le_bytes());
        }
        let digest = hash.finalize();
        let name: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.kv"))
    }

    /// Whether a file for these tokens is there (not checked).
    pub fn has(&self, model: &str, tokens: &[u32]) -> bool {
        self.path(model, tokens).is_file()
    }

    /// The cache saved for exactly `tokens` on `model`: `Ok(None)` when there is none,
    /// `Err` (the file removed) when one is there but does not check out.
    pub fn load(&self, model: &str, tokens: &[u32]) -> Result<Option<CacheImage>, String> {
        let path = self.path(model, tokens);
        let (file, len) = match fs::File::open(&path).and_then(|f| Ok((f.metadata()?.len(), f))) {
            Ok((len, file)) => (file, len),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("prompt cache {}: {e}", path.display())),
        };
        match decode(file, len, model, tokens) {
            Ok(image) => {
                // Used: the last to go when the folder is pruned.
                let _ = fs::File::options().append(true).open(&path).and_then(|f| f.set_modified(SystemTime::now()));
                Ok(Some(image))
            }
            Err(reason) => {
                let _ = fs::remove_file(&path);
                Err(format!("prompt cache {} ignored and removed: {reason}", path.display()))
            }
        }
    }

    /// Saves `image`, the cache of `tokens` on `model` (written to a temporary file and
    /// renamed, so a reader never sees half a file), then prunes the folder.
    pub fn save(&self, model: &str, tokens: &[u32], image: &CacheImage) -> Result<(), String> {
        let path = self.path(model, tokens);
        let fail = |e: std::io::Error| format!("prompt cache {}: {e}", path.display());
        fs::create_dir_all(&self.dir).map_err(fail)?;
        let bytes = encode(model, tokens, image)?;
        let temp = path.with_extension(format!("tmp{}", std::process::id()));
        let written = fs::File::create(&temp).and_then(|mut f| f.write_all(&bytes).and_then(|()| f.sync_all()));
        if let Err(e) = written.and_then(|()| fs::rename(&temp, &path)) {
            let _ = fs::remove_file(&temp);
            return Err(fail(e));
        }
        self.prune();
        Ok(())
    }

    /// Removes the least recently used files until the folder fits its bound.
    fn prune(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else { return };
        let mut files: Vec<(SystemTime, u64, PathBuf)> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "kv"))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        files.sort();
        for (_, len, path) in files {
            if total <= self.max_bytes {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(len);
            }
        }
    }
}

/// What a file says it holds; every field must match the request and the data.
#[derive(Serialize, Deserialize, PartialEq)]
struct Header {
    model: String,
    tokens: Vec<u32>,
    layers: usize,
    n_kv_head: usize,
    head_dim: usize,
}

fn encode(model: &str, tokens: &[u32], image: &CacheImage) -> Result<Vec<u8>, String> {
    let header = Header { model: model.to_string(), tokens: tokens.to_vec(), layers: image.layers.len(), n_kv_head: image.n_kv_head, head_dim: image.head_dim };
    if image.len != tokens.len() {
        return Err(format!("a cache of {} positions for {} tokens", image.len, tokens.len()));
    }
    let header = serde_json::to_vec(&header).map_err(|e| e.to_string())?;
    let per_side = image.n_kv_head * image.len * image.head_dim;
    let mut out = Vec::with_capacity(16 + header.len() + image.layers.len() * 2 * per_side * 4 + 32);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(&header);
    for (k, v) in &image.layers {
        if k.len() != per_side || v.len() != per_side {
            return Err("a layer's cache has the wrong size".into());
        }
        for x in k.iter().chain(v) {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    let digest = Sha256::digest(&out);
    out.extend_from_slice(&digest);
    Ok(out)
}

/// Reads a file of `len` bytes as [`encode`] wrote it, hashing as it goes: the keys and
/// values go straight from the file into each layer's vectors, so the cache is held once
/// while it is read (not as the file's bytes beside it), and none of it is returned unless
/// the whole file's checksum matches.
fn decode(file: impl Read, len: u64, model: &str, tokens: &[u32]) -> Result<CacheImage, String> {
    let truncated = |e: std::io::Error| if e.kind() == std::io::ErrorKind::UnexpectedEof { "truncated".to_string() } else { e.to_string() };
    let body_len = len.checked_sub(32).ok_or("truncated")?;
    let mut body = Hashed { inner: std::io::BufReader::with_capacity(1 << 16, file), hash: Sha256::new() };
    let mut start = [0u8; 16];
    body.read_exact(&mut start).map_err(truncated)?;
    let rest = start.strip_prefix(MAGIC.as_slice()).ok_or("not a prompt cache file")?;
    let word = |at: usize| u32::from_le_bytes([rest[at], rest[at + 1], rest[at + 2], rest[at + 3]]);
    let version = word(0);
    if version != VERSION {
        return Err(format!("version {version}, this build reads {VERSION}"));
    }
    let header_len = word(4) as u64;
    if 16 + header_len > body_len {
        return Err("truncated header".into());
    }
    let mut header_bytes = vec![0u8; header_len as usize];
    body.read_exact(&mut header_bytes).map_err(truncated)?;
    let header: Header = serde_json::from_slice(&header_bytes).map_err(|e| format!("header: {e}"))?;
    if header.model != model {
        return Err(format!("made for another model ({})", header.model));
    }
    if header.tokens != tokens {
        return Err("made for other tokens".into());
    }
    // Checked: the header is not yet known to be sound (the checksum comes last).
    let per_side = header.n_kv_head.checked_mul(tokens.len()).and_then(|x| x.checked_mul(header.head_dim)).filter(|&x| x > 0).ok_or("an empty or oversized cache")?;
    let data_len = body_len - 16 - header_len;
    let expected = (header.layers as u64).checked_mul(2 * per_side as u64 * 4).ok_or("an oversized cache")?;
    if data_len != expected {
        return Err(format!("{data_len} bytes of data where the header says {expected}"));
    }
    let mut chunk = vec![0u8; (1 << 16).min(per_side * 4)];
    let mut side = |body: &mut Hashed<_>| -> Result<Vec<f32>, String> {
        let mut floats = Vec::with_capacity(per_side);
        while floats.len() < per_side {
            let bytes = &mut chunk[..((per_side - floats.len()) * 4).min(1 << 16)];
            body.read_exact(bytes).map_err(truncated)?;
            floats.extend(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
        }
        Ok(floats)
    };
    let mut layers = Vec::new();
    for _ in 0..header.layers {
        layers.push((side(&mut body)?, side(&mut body)?));
    }
    let computed = body.hash.finalize();
    let mut digest = [0u8; 32];
    body.inner.read_exact(&mut digest).map_err(truncated)?;
    if computed.as_slice() != digest {
        return Err("checksum mismatch (truncated or corrupt)".into());
    }
    Ok(CacheImage { n_kv_head: header.n_kv_head, head_dim: header.head_dim, len: tokens.len(), layers })
}

/// A reader that hashes what it reads.
struct Hashed<R> {
    inner: R,
    hash: Sha256,
}

impl<R: Read> Read for Hashed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }
}

/// How a model file is told apart from another: the SHA-256 its verified download stamp
/// records while the stamp still matches the file, else its path, size and modification
/// time. With the pass that computes the cache (`info`), so the CPU pass and candle's ops
/// never share one.
pub fn model_identity(path: &Path, pass: &str) -> String {
    let meta = fs::metadata(path).ok();
    let size = meta.as_ref().map_or(0, |m| m.len());
    let mtime = meta
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let file_stamp = format!("size={size} mtime_ns={mtime}");
    let mut stamp_path = path.as_os_str().to_owned();
    stamp_path.push(".sha256");
    if let Ok(stamp) = fs::read_to_string(PathBuf::from(stamp_path)) {
        let mut lines = stamp.lines();
        if let (Some(first), Some(second)) = (lines.next(), lines.next()) {
            if second.trim() == file_stamp {
                if let Some(sha) = first.split_whitespace().next() {
                    return format!("sha256:{sha} {pass}");
                }
            }
        }
    }
    format!("{} {file_stamp} {pass}", path.display())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(len: usize, seed: f32) -> CacheImage {
        let side = |l: usize, s: usize| (0..2 * len * 3).map(|i| seed + (l * 1000 + s * 100 + i) as f32 * 0.5).collect::<Vec<f32>>();
        CacheImage { n_kv_head: 2, head_dim: 3, len, layers: (0..2).map(|l| (side(l, 0), side(l, 1))).collect() }
    }

    #[test]
    fn a_saved_cache_loads_back_exactly_and_only_for_its_model_and_tokens() {
        let dir = tempfile::tempdir().unwrap();
        let store = PromptStore::new(dir.path().join("prompts"));
        let tokens = [5u32, 6, 7, 8];
        assert_eq!(store.load("m", &tokens), Ok(None));
        store.save("m", &tokens, &image(4, 1.0)).unwrap();
        assert!(store.has("m", &tokens));
        assert_eq!(store.load("m", &tokens), Ok(Some(image(4, 1.0))));
        assert_eq!(store.load("other model", &tokens), Ok(None));
        assert_eq!(store.load("m", &tokens[..3]), Ok(None));
        // Nothing but the file is left behind.
        let names: Vec<_> = fs::read_dir(&store.dir).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn a_corrupt_or_truncated_file_is_refused_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = PromptStore::new(dir.path().to_path_buf());
        let tokens = [1u32, 2, 3];
        for damage in ["flip", "truncate", "empty", "other tokens", "no heads", "a layer short"] {
            store.save("m", &tokens, &image(3, 0.0)).unwrap();
            let path = store.path("m", &tokens);
            let mut bytes = fs::read(&path).unwrap();
            match damage {
                "flip" => {
                    let at = bytes.len() / 2;
                    bytes[at] ^= 0x40;
                }
                "truncate" => bytes.truncate(bytes.len() - 7),
                "empty" => bytes.clear(),
                "no heads" => {
                    // Checks out, but claims a million layers of nothing.
                    let empty = CacheImage { n_kv_head: 0, head_dim: 3, len: 3, layers: vec![(Vec::new(), Vec::new()); 1_000_000] };
                    bytes = encode("m", &tokens, &empty).unwrap();
                }
                "a layer short" => {
                    // The last values gone, the checksum kept: less data than the header says.
                    let digest = bytes.split_off(bytes.len() - 32);
                    bytes.truncate(bytes.len() - 32);
                    bytes.extend_from_slice(&digest);
                }
                _ => {
                    // A valid file for other tokens, under this name.
                    let other = encode("m", &[9, 9, 9], &image(3, 0.0)).unwrap();
                    bytes = other;
                }
            }
            fs::write(&path, &bytes).unwrap();
            let err = store.load("m", &tokens).unwrap_err();
            assert!(err.contains("ignored and removed"), "{damage}: {err}");
            assert!(!path.exists(), "{damage}");
            assert_eq!(store.load("m", &tokens), Ok(None), "{damage}");
        }
    }

    #[test]
    fn the_folder_keeps_to_its_bound_dropping_the_least_recently_used() {
        let dir = tempfile::tempdir().unwrap();
        let one = encode("m", &[1, 2], &image(2, 0.0)).unwrap().len() as u64;
        let store = PromptStore { dir: dir.path().to_path_buf(), max_bytes: 2 * one };
        let old = SystemTime::now() - std::time::Duration::from_secs(100);
        store.save("m", &[1, 2], &image(2, 0.0)).unwrap();
        store.save("m", &[3, 4], &image(2, 0.0)).unwrap();
        for tokens in [[1u32, 2], [3, 4]] {
            fs::File::options().append(true).open(store.path("m", &tokens)).unwrap().set_modified(old).unwrap();
        }
        // [1, 2] used again: [3, 4] is now the least recently used.
        assert!(store.load("m", &[1, 2]).unwrap().is_some());
        store.save("m", &[5, 6], &image(2, 0.0)).unwrap();
        assert!(store.has("m", &[1, 2]) && store.has("m", &[5, 6]));
        assert!(!store.has("m", &[3, 4]));
    }

    #[test]
    fn a_model_is_known_by_its_verified_hash_while_the_stamp_matches() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("m.gguf");
        fs::write(&model, b"weights").unwrap();
        let unstamped = model_identity(&model, "cpu");
        assert!(unstamped.contains("m.gguf") && unstamped.ends_with(" cpu"), "{unstamped}");
        let meta = fs::metadata(&model).unwrap();
        let nanos = meta.modified().unwrap().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos();
        fs::write(dir.path().join("m.gguf.sha256"), format!("abc123  m.gguf\nsize=7 mtime_ns={nanos}\n")).unwrap();
        assert_eq!(model_identity(&model, "cpu"), "sha256:abc123 cpu");
        assert_ne!(model_identity(&model, "cpu"), model_identity(&model, "candle"));
        // The file changed since it was verified: the stamp no longer speaks for it.
        fs::write(&model, b"other weights").unwrap();
        assert!(!model_identity(&model, "cpu").starts_with("sha256:"));
    }
}
