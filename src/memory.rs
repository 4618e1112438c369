//! B5, memory: Markdown notes in `<workspace>/memory/`.
//!
//! - `global.md` always goes into the context; other notes are chosen by relevance to the
//!   question (ASCII words and CJK bigrams) within a size budget.
//! - After a conversation, a dated entry is appended to `history.md` under an exclusive
//!   lock, by writing a whole new file next to it and renaming it over the old one, so a
//!   crash never leaves half a file and concurrent writers never lose entries.
//!
//! Memory lives in the workspace, where the user keeps it with their files, but it is not
//! the tools': the workspace refuses every skill write under `memory/` (see
//! `skills::workspace`). Memory itself opens the folder and every note without following
//! symbolic links and reads only regular files, each through the folder's handle: a
//! planted link or FIFO is one clear warning and is skipped, never followed, so nothing
//! from outside is copied in and no write lands outside. The history lock is held on the
//! folder itself, which a tool cannot replace (a `.lock` file could be swapped for a new
//! one while another writer holds the old).

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use chrono::{DateTime, Local};

use crate::text::is_cjk;

/// The memory folder's name in the workspace.
pub const MEMORY_DIR: &str = "memory";
/// The note that always goes into the context.
pub const GLOBAL_NOTE: &str = "global.md";
/// The conversation log; never put into the context.
pub const HISTORY_FILE: &str = "history.md";
/// Notes larger than this are refused rather than read whole into a prompt.
const MAX_NOTE_BYTES: u64 = 1024 * 1024;
/// A history larger than this is not rewritten (each append copies it whole).
const MAX_HISTORY_BYTES: u64 = 64 * 1024 * 1024;
/// Temp files of a history rewrite: `.history.<pid>.<n>.tmp`.
const TEMP_PREFIX: &str = ".history.";
const TEMP_SUFFIX: &str = ".tmp";
/// First line of a new history file.
const HISTORY_TITLE: &str = "# Conversation history";
const TIMESTAMP_FORMAT: &str = "%Y-%m-%d %H:%M:%S %:z";
const NO_TOOLS: &str = "(none)";

#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("{file}: cannot read: {source}")]
    Read { file: PathBuf, source: io::Error },
    #[error("{file}: cannot write: {source}")]
    Write { file: PathBuf, source: io::Error },
    #[error("{file}: cannot lock: {source}")]
    Lock { file: PathBuf, source: io::Error },
    #[error("{file}: not valid UTF-8 text")]
    NotText { file: PathBuf },
    #[error("{file}: {bytes} bytes is over the {limit}-byte limit for a note")]
    TooLarge { file: PathBuf, bytes: u64, limit: u64 },
    #[error("{file}: no such note")]
    NotFound { file: PathBuf },
    #[error("{file}: refused: {reason}")]
    BadName { file: PathBuf, reason: &'static str },
    #[error("{file}: line {line}: {reason}")]
    Parse { file: PathBuf, line: usize, reason: String },
    /// A link, FIFO or device where a note or the folder should be: never followed.
    #[error("{file}: {reason}; not followed, left alone")]
    Unsafe { file: PathBuf, reason: &'static str },
}

/// The memory directory of one workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Memory {
    dir: PathBuf,
}

/// What goes into the system message, and which notes it holds (global first).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryContext {
    pub text: String,
    pub notes: Vec<String>,
    /// Notes skipped because they are not plain files (links, FIFOs), one line each.
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoteInfo {
    pub name: String,
    pub bytes: u64,
    pub modified: Option<DateTime<Local>>,
}

/// One finished conversation in `history.md`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryEntry {
    pub question: String,
    pub tools_used: Vec<String>,
    pub answer: String,
    pub at: DateTime<Local>,
}

impl Memory {
    /// Opening never fails: a missing directory is an empty memory.
    pub fn open(dir: impl Into<PathBuf>) -> Memory {
        Memory { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `global.md` (when present) and the notes most relevant to `question` that fit in
    /// `budget_chars` characters of rendered text.
    pub fn context_for(&self, question: &str, budget_chars: usize) -> Result<MemoryContext, MemoryError> {
        let mut context = MemoryContext::default();
        let mut used = 0;
        let Some(dir) = self.open_dir()? else { return Ok(context) };
        clean_stale_temps(&dir, false);
        let (names, skipped) = note_names(&dir, &self.dir)?;
        context.warnings.extend(skipped);
        let read = |name: &str, warnings: &mut Vec<String>| match read_note(&dir, &self.dir.join(name), MAX_NOTE_BYTES) {
            Err(MemoryError::Unsafe { file, reason }) => {
                warnings.push(MemoryError::Unsafe { file, reason }.to_string());
                Ok(None)
            }
            other => other.map(Some),
        };

        if names.iter().any(|n| n == GLOBAL_NOTE) {
            let body = read(GLOBAL_NOTE, &mut context.warnings)?.unwrap_or_default();
            if !body.trim().is_empty() {
                // global.md is always included; if it alone exceeds the budget it is cut.
                let section = truncate_chars(&render_section(GLOBAL_NOTE, &body), budget_chars);
                used += section.chars().count();
                context.text.push_str(&section);
                context.notes.push(GLOBAL_NOTE.to_string());
            }
        }

        let query = terms(question);
        if query.is_empty() {
            return Ok(context);
        }
        let mut scored = Vec::new();
        for name in names.iter().filter(|n| is_selectable(n)) {
            let body = read(name, &mut context.warnings)?.unwrap_or_default();
            if body.trim().is_empty() {
                continue;
            }
            let mut note_terms = terms(&body);
            note_terms.extend(terms(name.trim_end_matches(".md")));
            let score = relevance(&query, &note_terms);
            if score > 0.0 {
                scored.push((score, name.clone(), body));
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));

        for (_, name, body) in scored {
            let section = render_section(&name, &body);
            let len = section.chars().count();
            if used + len <= budget_chars {
                used += len;
                context.text.push_str(&section);
                context.notes.push(name);
            }
        }
        Ok(context)
    }

    /// Appends one dated entry to `history.md`. Holds an exclusive lock on the folder
    /// while it reads the old file, writes old + new to a synced temp file and renames it
    /// into place; temp files that a killed writer left are removed first. A history that
    /// is a link or not a regular file is refused, not followed or replaced.
    pub fn append_history(&self, entry: &HistoryEntry) -> Result<(), MemoryError> {
        fs::create_dir_all(&self.dir).map_err(|source| MemoryError::Write { file: self.dir.clone(), source })?;
        let dir = self.open_dir()?.ok_or_else(|| MemoryError::Write {
            file: self.dir.clone(),
            source: io::Error::new(io::ErrorKind::NotFound, "the memory folder vanished"),
        })?;
        let _lock = DirLock::exclusive(&dir).map_err(|source| MemoryError::Lock { file: self.dir.clone(), source })?;
        clean_stale_temps(&dir, true);

        let path = self.dir.join(HISTORY_FILE);
        let mut text = match read_note(&dir, &path, MAX_HISTORY_BYTES) {
            Ok(text) => text,
            Err(MemoryError::NotFound { .. }) => format!("{HISTORY_TITLE}\n"),
            Err(err) => return Err(err),
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&render_entry(entry));

        let write_err = |source| MemoryError::Write { file: path.clone(), source };
        let temp = TempName::create(&dir).map_err(write_err)?;
        let mut file = temp.file.try_clone().map_err(write_err)?;
        file.write_all(text.as_bytes()).map_err(write_err)?;
        file.sync_all().map_err(write_err)?;
        dir.rename(&temp.name, &dir, HISTORY_FILE).map_err(write_err)?;
        temp.persisted();
        // Makes the rename itself durable.
        sync_dir(&dir).map_err(|source| MemoryError::Write { file: self.dir.clone(), source })?;
        Ok(())
    }

    /// Every entry of `history.md`, oldest first; no file is no entries.
    pub fn history(&self) -> Result<Vec<HistoryEntry>, MemoryError> {
        let Some(dir) = self.open_dir()? else { return Ok(Vec::new()) };
        let path = self.dir.join(HISTORY_FILE);
        match read_note(&dir, &path, MAX_HISTORY_BYTES) {
            Ok(text) => parse_history(&text).map_err(|(line, reason)| MemoryError::Parse { file: path, line, reason }),
            Err(MemoryError::NotFound { .. }) => Ok(Vec::new()),
            Err(err) => Err(err),
        }
    }

    /// The folder, opened without following a link (`None` when it does not exist).
    fn open_dir(&self) -> Result<Option<cap_std::fs::Dir>, MemoryError> {
        let opened = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&self.dir);
        match opened {
            Ok(file) => Ok(Some(cap_std::fs::Dir::from_std_file(file))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
                Err(MemoryError::Unsafe { file: self.dir.clone(), reason: "the memory folder is a symbolic link" })
            }
            // With O_DIRECTORY, Linux reports a link as "not a directory".
            Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
                let link = fs::symlink_metadata(&self.dir).is_ok_and(|meta| meta.file_type().is_symlink());
                let reason =
                    if link { "the memory folder is a symbolic link" } else { "the memory folder is not a directory" };
                Err(MemoryError::Unsafe { file: self.dir.clone(), reason })
            }
            Err(source) => Err(MemoryError::Read { file: self.dir.clone(), source }),
        }
    }

    /// Every `*.md` file in the memory directory: `global.md` first, then by name.
    pub fn list(&self) -> Result<Vec<NoteInfo>, MemoryError> {
        let Some(dir) = self.open_dir()? else { return Ok(Vec::new()) };
        note_names(&dir, &self.dir)?
            .0
            .into_iter()
            .map(|name| {
                let file = self.dir.join(&name);
                let meta = dir.symlink_metadata(&name).map_err(|source| MemoryError::Read { file, source })?;
                let modified = meta.modified().ok().map(|t| DateTime::<Local>::from(t.into_std()));
                Ok(NoteInfo { name, bytes: meta.len(), modified })
            })
            .collect()
    }

    /// The text of one note. `name` is a file name in the memory directory (`.md` may be
    /// left off); paths, `..`, hidden files, links and special files are refused.
    pub fn show(&self, name: &str) -> Result<String, MemoryError> {
        let name = checked_name(&self.dir, name)?;
        let file = self.dir.join(&name);
        let Some(dir) = self.open_dir()? else { return Err(MemoryError::NotFound { file }) };
        match read_note(&dir, &file, MAX_NOTE_BYTES) {
            Err(MemoryError::Unsafe { reason, .. }) => Err(MemoryError::BadName { file, reason }),
            other => other,
        }
    }
}

/// Names of the regular `*.md` files directly in the folder (global first), and one
/// warning for each `*.md` entry that is a link or a special file.
fn note_names(dir: &cap_std::fs::Dir, shown_dir: &Path) -> Result<(Vec<String>, Vec<String>), MemoryError> {
    let entries = dir.entries().map_err(|source| MemoryError::Read { file: shown_dir.to_path_buf(), source })?;
    let mut names = Vec::new();
    let mut warnings = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| MemoryError::Read { file: shown_dir.to_path_buf(), source })?;
        let Ok(name) = entry.file_name().into_string() else { continue };
        if name.starts_with('.') || !name.ends_with(".md") {
            continue;
        }
        match entry.file_type() {
            Ok(kind) if kind.is_file() => names.push(name),
            Ok(kind) if kind.is_dir() => {}
            // A link or FIFO named like a note was planted: say so, never follow it.
            // The history never enters the context; its own reader warns about it.
            Ok(_) if name == HISTORY_FILE => {}
            Ok(kind) => {
                let reason = if kind.is_symlink() { "a symbolic link" } else { "not a regular file" };
                warnings.push(format!("{}: {reason}; not followed, skipped", shown_dir.join(&name).display()));
            }
            Err(_) => {}
        }
    }
    names.sort_by(|a, b| (a != GLOBAL_NOTE).cmp(&(b != GLOBAL_NOTE)).then_with(|| a.cmp(b)));
    Ok((names, warnings))
}

/// Reads one file of the folder by name, without following a link or blocking on a FIFO:
/// only a regular file of at most `limit` bytes of UTF-8 is read.
fn read_note(dir: &cap_std::fs::Dir, file: &Path, limit: u64) -> Result<String, MemoryError> {
    use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
    use cap_std::fs::OpenOptionsExt as _;
    let name = file.file_name().unwrap_or(OsStr::new(""));
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).follow(FollowSymlinks::No);
    let opened = match dir.open_with(name, &options) {
        Ok(opened) => opened.into_std(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(MemoryError::NotFound { file: file.to_path_buf() }),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(MemoryError::Unsafe { file: file.to_path_buf(), reason: "a symbolic link" })
        }
        Err(source) => return Err(MemoryError::Read { file: file.to_path_buf(), source }),
    };
    let meta = opened.metadata().map_err(|source| MemoryError::Read { file: file.to_path_buf(), source })?;
    if !meta.is_file() {
        return Err(MemoryError::Unsafe { file: file.to_path_buf(), reason: "not a regular file" });
    }
    if meta.len() > limit {
        return Err(MemoryError::TooLarge { file: file.to_path_buf(), bytes: meta.len(), limit });
    }
    let mut bytes = Vec::new();
    opened
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| MemoryError::Read { file: file.to_path_buf(), source })?;
    if bytes.len() as u64 > limit {
        return Err(MemoryError::TooLarge { file: file.to_path_buf(), bytes: bytes.len() as u64, limit });
    }
    String::from_utf8(bytes).map_err(|_| MemoryError::NotText { file: file.to_path_buf() })
}

/// An exclusive `flock` on the memory folder itself, released on drop.
struct DirLock<'a>(&'a cap_std::fs::Dir);

impl<'a> DirLock<'a> {
    fn exclusive(dir: &'a cap_std::fs::Dir) -> io::Result<DirLock<'a>> {
        // A blocking lock is always taken once `take` returns.
        Self::take(dir, libc::LOCK_EX)?.ok_or_else(|| io::Error::other("the lock was not taken"))
    }

    /// `None` when another process holds it.
    fn try_exclusive(dir: &'a cap_std::fs::Dir) -> io::Result<Option<DirLock<'a>>> {
        Self::take(dir, libc::LOCK_EX | libc::LOCK_NB)
    }

    fn take(dir: &'a cap_std::fs::Dir, operation: libc::c_int) -> io::Result<Option<DirLock<'a>>> {
        loop {
            // SAFETY: flock on a directory descriptor we hold open.
            if unsafe { libc::flock(dir.as_raw_fd(), operation) } == 0 {
                return Ok(Some(DirLock(dir)));
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EWOULDBLOCK) => return Ok(None),
                _ => return Err(err),
            }
        }
    }
}

impl Drop for DirLock<'_> {
    fn drop(&mut self) {
        // SAFETY: unlocking the descriptor locked in `take`.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Removes the temp files of history rewrites that never finished (a killed writer's).
/// Only a lock holder writes them, so under the lock every one is stale; without it
/// (`locked` false) the lock is tried and the cleaning skipped when someone is writing.
fn clean_stale_temps(dir: &cap_std::fs::Dir, locked: bool) {
    let _lock = if locked {
        None
    } else {
        match DirLock::try_exclusive(dir) {
            Ok(Some(lock)) => Some(lock),
            _ => return,
        }
    };
    let Ok(entries) = dir.entries() else { return };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if text.starts_with(TEMP_PREFIX) && text.ends_with(TEMP_SUFFIX) {
            let _ = dir.remove_file(&name);
        }
    }
}

/// A named temp file in the folder, removed on drop unless persisted.
struct TempName<'a> {
    dir: &'a cap_std::fs::Dir,
    name: String,
    file: File,
    keep: std::cell::Cell<bool>,
}

impl<'a> TempName<'a> {
    fn create(dir: &'a cap_std::fs::Dir) -> io::Result<TempName<'a>> {
        use cap_std::fs::OpenOptionsExt as _;
        let mut options = cap_std::fs::OpenOptions::new();
        options.write(true).create_new(true).mode(0o644);
        let mut attempt = 0u32;
        loop {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or_default();
            let name = format!("{TEMP_PREFIX}{}.{nanos}.{attempt}{TEMP_SUFFIX}", std::process::id());
            match dir.open_with(&name, &options) {
                Ok(file) => return Ok(TempName { dir, name, file: file.into_std(), keep: false.into() }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
                Err(e) => return Err(e),
            }
        }
    }

    fn persisted(&self) {
        self.keep.set(true);
    }
}

impl Drop for TempName<'_> {
    fn drop(&mut self) {
        if !self.keep.get() {
            let _ = self.dir.remove_file(&self.name);
        }
    }
}

/// Notes that compete for the context: not global (always in) and not the history.
fn is_selectable(name: &str) -> bool {
    name != GLOBAL_NOTE && name != HISTORY_FILE
}

/// A plain note file name in the memory directory, `.md` added when missing.
fn checked_name(dir: &Path, name: &str) -> Result<String, MemoryError> {
    let file = dir.join(name);
    let refuse = |reason| Err(MemoryError::BadName { file: file.clone(), reason });
    let trimmed = name.trim();
    if trimmed.is_empty() {
        return refuse("empty note name");
    }
    if Path::new(trimmed).is_absolute() || trimmed.starts_with('/') || trimmed.starts_with('\\') {
        return refuse("absolute paths are not notes; give a name in the memory directory");
    }
    if trimmed.contains('/') || trimmed.contains('\\') {
        return refuse("notes are files directly in the memory directory, not paths or subdirectories");
    }
    let mut components = Path::new(trimmed).components();
    if !matches!((components.next(), components.next()), (Some(Component::Normal(_)), None)) {
        return refuse("not a plain file name");
    }
    if trimmed.starts_with('.') {
        return refuse("hidden files are not notes");
    }
    if trimmed.ends_with(".md") {
        Ok(trimmed.to_string())
    } else {
        Ok(format!("{trimmed}.md"))
    }
}

fn render_section(name: &str, body: &str) -> String {
    format!("## Memory: {name}\n{}\n\n", body.trim())
}

/// The first `max` characters of `text` (never splitting a character), ending in `…`
/// when cut.
fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

/// English filler words that would make every note look relevant.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "could", "do", "does", "for", "from", "how", "in",
    "is", "it", "me", "my", "of", "on", "or", "please", "the", "this", "that", "to", "was", "what", "which",
    "who", "why", "with", "you", "your",
];

/// Chinese function characters; a bigram containing one says little about the topic.
const STOP_CHARS: &[char] = &[
    '的', '了', '是', '在', '和', '与', '及', '吗', '呢', '吧', '啊', '请', '帮', '我', '你', '他', '她', '它', '这', '那',
    '么', '个',
];

/// The terms relevance is measured on: lowercased ASCII words (2+ characters, no filler
/// words) and CJK character bigrams (a lone CJK character counts as itself).
fn terms(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut word = String::new();
    let mut cjk_run: Vec<char> = Vec::new();
    let flush_word = |word: &mut String, out: &mut BTreeSet<String>| {
        if word.len() >= 2 && !STOP_WORDS.contains(&word.as_str()) {
            out.insert(std::mem::take(word));
        }
        word.clear();
    };
    let flush_cjk = |run: &mut Vec<char>, out: &mut BTreeSet<String>| {
        match run.as_slice() {
            [single] if !STOP_CHARS.contains(single) => {
                out.insert(single.to_string());
            }
            chars => {
                for pair in chars.windows(2) {
                    if !pair.iter().any(|c| STOP_CHARS.contains(c)) {
                        out.insert(pair.iter().collect());
                    }
                }
            }
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            flush_cjk(&mut cjk_run, &mut out);
            word.push(c.to_ascii_lowercase());
        } else if is_cjk(c) {
            flush_word(&mut word, &mut out);
            cjk_run.push(c);
        } else {
            flush_word(&mut word, &mut out);
            flush_cjk(&mut cjk_run, &mut out);
        }
    }
    flush_word(&mut word, &mut out);
    flush_cjk(&mut cjk_run, &mut out);
    out
}

/// Shared terms over the geometric mean of both sizes (cosine of the term sets), so a
/// long note does not win just by containing many words.
fn relevance(query: &BTreeSet<String>, note: &BTreeSet<String>) -> f64 {
    if query.is_empty() || note.is_empty() {
        return 0.0;
    }
    let shared = query.intersection(note).count() as f64;
    shared / ((query.len() as f64) * (note.len() as f64)).sqrt()
}

/// ```text
/// ## 2026-07-13 22:00:00 +08:00
///
/// **Question**
///
/// > the question, every line quoted
///
/// **Tools used:** file_reader, calculator
///
/// **Answer**
///
/// > the answer, every line quoted
/// ```
/// Quoting every line keeps answers that contain `## ` headings from breaking entries.
fn render_entry(entry: &HistoryEntry) -> String {
    let tools = if entry.tools_used.is_empty() { NO_TOOLS.to_string() } else { entry.tools_used.join(", ") };
    format!(
        "## {}\n\n**Question**\n\n{}\n**Tools used:** {}\n\n**Answer**\n\n{}",
        entry.at.format(TIMESTAMP_FORMAT),
        quote(&entry.question),
        tools,
        quote(&entry.answer),
    )
}

fn quote(text: &str) -> String {
    let mut out = String::new();
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            out.push_str(">\n");
        } else {
            out.push_str("> ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Reads the entries `render_entry` writes; an error names the 1-based line.
fn parse_history(text: &str) -> Result<Vec<HistoryEntry>, (usize, String)> {
    #[derive(PartialEq)]
    enum Part {
        Start,
        Question,
        Answer,
    }
    struct Draft {
        line: usize,
        at: DateTime<Local>,
        question: Vec<String>,
        tools: Option<Vec<String>>,
        answer: Vec<String>,
        part: Part,
    }
    fn finish(draft: Draft) -> Result<HistoryEntry, (usize, String)> {
        let tools_used = draft.tools.ok_or((draft.line, "entry has no \"**Tools used:**\" line".to_string()))?;
        if draft.part != Part::Answer {
            return Err((draft.line, "entry has no \"**Answer**\" section".to_string()));
        }
        Ok(HistoryEntry {
            question: draft.question.join("\n"),
            tools_used,
            answer: draft.answer.join("\n"),
            at: draft.at,
        })
    }

    let mut entries = Vec::new();
    let mut draft: Option<Draft> = None;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        if let Some(stamp) = line.strip_prefix("## ") {
            if let Some(done) = draft.take() {
                entries.push(finish(done)?);
            }
            let at = DateTime::parse_from_str(stamp.trim(), TIMESTAMP_FORMAT)
                .map_err(|e| (number, format!("bad entry date {stamp:?}: {e}")))?
                .with_timezone(&Local);
            draft = Some(Draft { line: number, at, question: Vec::new(), tools: None, answer: Vec::new(), part: Part::Start });
            continue;
        }
        let Some(d) = draft.as_mut() else { continue };
        if line == "**Question**" {
            d.part = Part::Question;
        } else if line == "**Answer**" {
            d.part = Part::Answer;
        } else if let Some(list) = line.strip_prefix("**Tools used:**") {
            let list = list.trim();
            d.tools = Some(if list == NO_TOOLS || list.is_empty() {
                Vec::new()
            } else {
                list.split(',').map(|t| t.trim().to_string()).collect()
            });
        } else if let Some(quoted) = line.strip_prefix('>') {
            let quoted = quoted.strip_prefix(' ').unwrap_or(quoted).to_string();
            match d.part {
                Part::Question => d.question.push(quoted),
                Part::Answer => d.answer.push(quoted),
                Part::Start => return Err((number, "quoted text before \"**Question**\"".to_string())),
            }
        } else if !line.trim().is_empty() {
            return Err((number, format!("unexpected line {line:?}")));
        }
    }
    if let Some(done) = draft.take() {
        entries.push(finish(done)?);
    }
    Ok(entries)
}

/// Makes a rename in the folder durable.
fn sync_dir(dir: &cap_std::fs::Dir) -> io::Result<()> {
    // SAFETY: fsync on a directory descriptor we hold open.
    if unsafe { libc::fsync(dir.as_raw_fd()) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use std::sync::Arc;

    fn write(dir: &Path, name: &str, text: &str) {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join(name), text).unwrap();
    }

    fn at(h: u32, m: u32, s: u32) -> DateTime<Local> {
        Local.with_ymd_and_hms(2026, 7, 13, h, m, s).single().unwrap()
    }

    /// A memory with a global note and three topical notes, English and Chinese.
    fn sample_memory() -> (tempfile::TempDir, Memory) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        write(&dir, "global.md", "I am b4, a local agent.");
        write(&dir, "cooking.md", "Pasta recipes: boil water, add salt, cook the spaghetti for nine minutes.");
        write(&dir, "rust_build.md", "Rust build notes: cargo check before commit; the target dir is shared.");
        write(&dir, "表格分析.md", "表格分析：用 table_analyzer 统计 CSV 文件的列、均值和分组。");
        write(&dir, "history.md", "# Conversation history\n\nRust cargo pasta 表格 表格分析\n");
        (tmp, Memory::open(dir))
    }

    #[test]
    fn english_question_chooses_the_relevant_note_after_global() {
        let (_tmp, memory) = sample_memory();
        let ctx = memory.context_for("How do I run cargo check on the rust build?", 10_000).unwrap();
        assert_eq!(ctx.notes, vec!["global.md".to_string(), "rust_build.md".to_string()]);
        assert_eq!(
            ctx.text,
            "## Memory: global.md\nI am b4, a local agent.\n\n\
             ## Memory: rust_build.md\nRust build notes: cargo check before commit; the target dir is shared.\n\n"
        );
    }

    #[test]
    fn chinese_question_chooses_the_relevant_note() {
        let (_tmp, memory) = sample_memory();
        let ctx = memory.context_for("请帮我做一下表格分析，统计均值", 10_000).unwrap();
        assert_eq!(ctx.notes, vec!["global.md".to_string(), "表格分析.md".to_string()]);
        assert!(ctx.text.contains("## Memory: 表格分析.md\n表格分析：用 table_analyzer"));
    }

    #[test]
    fn unrelated_question_gets_only_global_and_history_is_never_chosen() {
        let (_tmp, memory) = sample_memory();
        let ctx = memory.context_for("法国的首都是哪里？", 10_000).unwrap();
        assert_eq!(ctx.notes, vec!["global.md".to_string()]);
        // history.md mentions these words but is never a context note.
        let ctx = memory.context_for("pasta 表格", 10_000).unwrap();
        assert!(!ctx.notes.contains(&"history.md".to_string()));
        assert!(ctx.notes.contains(&"cooking.md".to_string()));
    }

    #[test]
    fn more_shared_terms_rank_higher_and_ties_go_by_name() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        write(&dir, "b_one.md", "alpha beta");
        write(&dir, "a_one.md", "alpha beta");
        write(&dir, "c_two.md", "alpha gamma delta");
        let memory = Memory::open(&dir);
        let ctx = memory.context_for("alpha gamma", 1000).unwrap();
        // No global note: the context starts with the best note.
        assert_eq!(ctx.notes, vec!["c_two.md", "a_one.md", "b_one.md"]);
    }

    #[test]
    fn budget_is_respected_and_skips_notes_that_do_not_fit() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        write(&dir, "global.md", "global rules");
        write(&dir, "agent_big.md", &"agent tools memory ".repeat(40));
        write(&dir, "agent_small.md", "agent notes");
        let memory = Memory::open(&dir);
        let global_len = render_section("global.md", "global rules").chars().count();
        let small_len = render_section("agent_small.md", "agent notes").chars().count();
        let budget = global_len + small_len + 10;
        let ctx = memory.context_for("agent tools memory", budget).unwrap();
        // agent_big ranks first on relevance but does not fit; agent_small does.
        assert_eq!(ctx.notes, vec!["global.md", "agent_small.md"]);
        assert!(ctx.text.chars().count() <= budget);
    }

    #[test]
    fn global_is_always_first_and_cut_to_the_budget() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        write(&dir, "global.md", &"全局记忆 ".repeat(100));
        write(&dir, "aaa.md", "全局记忆");
        let memory = Memory::open(&dir);
        let ctx = memory.context_for("全局记忆", 50).unwrap();
        assert_eq!(ctx.notes, vec!["global.md"]);
        assert_eq!(ctx.text.chars().count(), 50);
        assert!(ctx.text.starts_with("## Memory: global.md\n全局记忆"));
        assert!(ctx.text.ends_with('…'));
    }

    #[test]
    fn missing_memory_dir_is_empty_not_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let memory = Memory::open(tmp.path().join("no_such_memory"));
        assert_eq!(memory.context_for("anything", 1000).unwrap(), MemoryContext::default());
        assert_eq!(memory.list().unwrap(), Vec::new());
        assert_eq!(memory.history().unwrap(), Vec::new());
        assert!(matches!(memory.show("global"), Err(MemoryError::NotFound { .. })));
    }

    #[test]
    fn non_utf8_note_is_an_error_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("global.md"), [0xff, 0xfe, 0x00]).unwrap();
        let err = Memory::open(&dir).context_for("x", 100).unwrap_err();
        assert!(matches!(err, MemoryError::NotText { .. }));
        assert!(err.to_string().contains("global.md"), "{err}");
    }

    #[test]
    fn history_entry_format_is_dated_markdown() {
        let tmp = tempfile::tempdir().unwrap();
        let memory = Memory::open(tmp.path().join("memory"));
        let entry = HistoryEntry {
            question: "计算 3.14 * 5 - 2.5".into(),
            tools_used: vec!["calculator".into()],
            answer: "结果是 13.2\n\n## not a heading".into(),
            at: at(22, 0, 5),
        };
        memory.append_history(&entry).unwrap();
        let stamp = entry.at.format("%Y-%m-%d %H:%M:%S %:z").to_string();
        let text = fs::read_to_string(tmp.path().join("memory/history.md")).unwrap();
        assert_eq!(
            text,
            format!(
                "# Conversation history\n\n## {stamp}\n\n**Question**\n\n> 计算 3.14 * 5 - 2.5\n\n\
                 **Tools used:** calculator\n\n**Answer**\n\n> 结果是 13.2\n>\n> ## not a heading\n"
            )
        );
        let second = HistoryEntry { question: "hi".into(), tools_used: vec![], answer: "hello".into(), at: at(22, 1, 0) };
        memory.append_history(&second).unwrap();
        assert_eq!(memory.history().unwrap(), vec![entry, second]);
        // The history file is listed but the lock and temp files are not.
        let names: Vec<String> = memory.list().unwrap().into_iter().map(|n| n.name).collect();
        assert_eq!(names, vec!["history.md"]);
    }

    #[test]
    fn concurrent_appends_lose_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let memory = Arc::new(Memory::open(tmp.path().join("memory")));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let memory = Arc::clone(&memory);
                std::thread::spawn(move || {
                    for i in 0..20 {
                        let entry = HistoryEntry {
                            question: format!("thread {t} question {i}"),
                            tools_used: vec!["file_reader".into(), "calculator".into()],
                            answer: format!("答案 {t}-{i}\nsecond line"),
                            at: Local::now(),
                        };
                        memory.append_history(&entry).unwrap();
                    }
                })
            })
            .collect();
        for handle in threads {
            handle.join().unwrap();
        }
        let entries = memory.history().unwrap();
        assert_eq!(entries.len(), 160);
        let mut seen: Vec<String> = entries.iter().map(|e| e.question.clone()).collect();
        seen.sort();
        let mut expected: Vec<String> =
            (0..8).flat_map(|t| (0..20).map(move |i| format!("thread {t} question {i}"))).collect();
        expected.sort();
        assert_eq!(seen, expected);
        assert!(entries.iter().all(|e| e.tools_used == ["file_reader", "calculator"]));
        // Each thread's own entries stay in the order it wrote them.
        for t in 0..8 {
            let mine: Vec<&str> = entries
                .iter()
                .filter(|e| e.question.starts_with(&format!("thread {t} ")))
                .map(|e| e.answer.as_str())
                .collect();
            let want: Vec<String> = (0..20).map(|i| format!("答案 {t}-{i}\nsecond line")).collect();
            assert_eq!(mine, want);
        }
        // No temp files are left behind.
        let leftovers: Vec<_> = fs::read_dir(memory.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert_eq!(leftovers, Vec::<String>::new());
    }

    #[test]
    fn leftover_temp_file_from_a_crash_changes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        // A writer that died before its rename leaves only a hidden temp file behind.
        write(&dir, ".history.abc123.tmp", "## half an entr");
        let memory = Memory::open(&dir);
        assert_eq!(memory.list().unwrap(), Vec::new());
        assert_eq!(memory.history().unwrap(), Vec::new());
        let entry = HistoryEntry { question: "q".into(), tools_used: vec![], answer: "a".into(), at: at(9, 0, 0) };
        memory.append_history(&entry).unwrap();
        assert_eq!(memory.history().unwrap(), vec![entry]);
    }

    #[test]
    fn corrupted_history_is_a_parse_error_with_its_line() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("memory");
        write(&dir, "history.md", "# Conversation history\n\n## yesterday-ish\n");
        let err = Memory::open(&dir).history().unwrap_err();
        assert!(matches!(err, MemoryError::Parse { line: 3, .. }), "{err}");
        assert!(err.to_string().contains("history.md"), "{err}");
    }

    #[test]
    fn list_reports_notes_global_first() {
        let (_tmp, memory) = sample_memory();
        let list = memory.list().unwrap();
        let names: Vec<&str> = list.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, vec!["global.md", "cooking.md", "history.md", "rust_build.md", "表格分析.md"]);
        assert_eq!(list[0].bytes, "I am b4, a local agent.".len() as u64);
        assert!(list.iter().all(|n| n.modified.is_some()));
    }

    #[test]
    fn show_reads_notes_with_or_without_extension() {
        let (_tmp, memory) = sample_memory();
        assert_eq!(memory.show("global.md").unwrap(), "I am b4, a local agent.");
        assert_eq!(memory.show("global").unwrap(), "I am b4, a local agent.");
        assert!(memory.show("表格分析").unwrap().starts_with("表格分析："));
        let err = memory.show("nothing").unwrap_err();
        assert!(matches!(err, MemoryError::NotFound { .. }));
        assert!(err.to_string().contains("nothing.md"), "{err}");
    }

    #[test]
    fn show_refuses_escapes() {
        let (tmp, memory) = sample_memory();
        write(tmp.path(), "secret.md", "outside");
        write(&memory.dir().join("sub"), "inner.md", "nested");
        fs::create_dir_all(memory.dir().join("folder.md")).unwrap();
        for name in ["../secret.md", "../secret", "/etc/passwd", "sub/inner.md", "sub\\inner.md", "folder.md", "..", ".", ".lock", ""] {
            let err = memory.show(name).unwrap_err();
            assert!(matches!(err, MemoryError::BadName { .. }), "{name:?}: {err}");
            assert!(err.to_string().contains("refused"), "{err}");
        }
        let abs = tmp.path().join("secret.md");
        assert!(matches!(memory.show(abs.to_str().unwrap()), Err(MemoryError::BadName { .. })));
    }

    #[cfg(unix)]
    #[test]
    fn show_refuses_links_that_leave_the_memory_dir() {
        let (tmp, memory) = sample_memory();
        write(tmp.path(), "secret.md", "outside");
        std::os::unix::fs::symlink(tmp.path().join("secret.md"), memory.dir().join("leak.md")).unwrap();
        let err = memory.show("leak").unwrap_err();
        assert!(matches!(err, MemoryError::BadName { .. }), "{err}");
        assert!(err.to_string().contains("leak.md"), "{err}");
    }

    #[test]
    fn terms_are_words_and_cjk_bigrams() {
        let want: BTreeSet<String> =
            ["agent", "calc", "读取", "取本", "本地", "地文", "文件", "好"].into_iter().map(String::from).collect();
        // "the" and "a" are filler, "的" breaks no run but forms no bigram, "好" stands alone.
        assert_eq!(terms("The Agent 读取本地文件, a calc! 好"), want);
        assert_eq!(terms("我的"), BTreeSet::new());
    }
}
