//! The workspace every file access of a skill is confined to.
//!
//! Every access goes through one handle on the root directory, opened when the workspace
//! is made (cap-std: `openat2(RESOLVE_BENEATH)` where the kernel has it, else a walk that
//! resolves one component at a time and never follows a link out of the root). A path is
//! never checked and then opened again by name, so a file or directory swapped for a
//! symbolic link in the middle of a call cannot lead outside. Paths are first normalized
//! lexically, so `../x` is refused with a clear message even when `x` does not exist.
//!
//! Writes go to an unnamed temp file in the target directory (`O_TMPFILE`; a named
//! `.b4-write-*` file where the filesystem has no unnamed ones, removed on every error
//! path) that is then linked or renamed into place: a reader never sees half a file, a
//! failed write never damages an existing one, and a killed process leaves nothing.
//!
//! The memory folder (`memory/`, B5) is not the skills' to change: no write lands in it,
//! however the path is spelled (`./memory`, `x/../memory`, a link to it, another case of
//! its name on a case-insensitive disk). Skills may read the notes, as the user may.

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io::{self, Read, Write};
use std::ops::ControlFlow;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cap_fs_ext::{DirExt, FollowSymlinks, MetadataExt, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};

use super::SkillError;
use crate::memory::MEMORY_DIR;

/// Text files larger than this are not read whole.
pub const MAX_TEXT_BYTES: u64 = 2 * 1024 * 1024;

/// How much of a file is inspected for NUL bytes to call it binary.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

/// Longer paths are refused before they reach the disk (the kernel's own limit).
const MAX_PATH_BYTES: usize = 4096;

/// How much of a user's path an error repeats.
const SHOWN_PATH_CHARS: usize = 200;

/// How deep a walk descends; each level holds a directory handle open.
pub const MAX_WALK_DEPTH: usize = 128;

/// Prefix of the named temp files used where unnamed ones are not available.
const TEMP_PREFIX: &str = ".b4-write-";

#[derive(Clone)]
pub struct Workspace {
    /// The root directory, canonicalized; for showing paths only: access goes through `dir`.
    pub root: PathBuf,
    dir: Arc<Dir>,
    /// When the current tool call must stop (see [`Workspace::check_deadline`]).
    deadline: Option<Instant>,
}

impl fmt::Debug for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workspace").field("root", &self.root).field("deadline", &self.deadline).finish()
    }
}

/// A text file read through the workspace.
#[derive(Clone, Debug, PartialEq)]
pub struct TextFile {
    /// Absolute path (the root joined with the normalized relative path).
    pub path: PathBuf,
    /// The path relative to the workspace root, with forward slashes.
    pub shown: String,
    /// The text, without a leading UTF-8 byte order mark.
    pub text: String,
}

/// A regular file met by [`Workspace::walk_files`]; read it through its directory's handle.
pub struct WalkedFile<'a> {
    /// The path relative to the workspace root, with forward slashes.
    pub shown: String,
    /// The file's own name, for matching.
    pub name: String,
    dir: &'a Dir,
    os_name: OsString,
}

impl WalkedFile<'_> {
    /// The file's text (see [`Workspace::read_text`] for what is refused). The file is
    /// opened by name in its directory without following a link, so swapping it for one
    /// after the walk listed it reads nothing from elsewhere.
    pub fn read_text(&self, max_bytes: u64) -> Result<String, SkillError> {
        let file = open_for_read(self.dir, Path::new(&self.os_name), FollowSymlinks::No)
            .map_err(|err| read_error(&self.shown, &err))?;
        read_text_from(file, &self.shown, max_bytes)
    }
}

/// What a walk saw besides the files it handed over.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WalkSummary {
    /// The walked directory relative to the root (`.` for the root).
    pub shown: String,
    /// Directories not entered because they lie deeper than [`MAX_WALK_DEPTH`].
    pub too_deep: usize,
}

impl Workspace {
    /// A workspace rooted at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Workspace, SkillError> {
        let given = root.as_ref();
        let cannot_open =
            |err: &io::Error| SkillError::new(format!("workspace '{}' cannot be opened: {}", given.display(), io_reason(err)));
        let root = fs::canonicalize(given).map_err(|err| cannot_open(&err))?;
        if !root.is_dir() {
            return Err(SkillError::new(format!("workspace '{}' is not a directory", given.display())));
        }
        let dir = Dir::open_ambient_dir(&root, cap_std::ambient_authority()).map_err(|err| cannot_open(&err))?;
        Ok(Workspace { root, dir: Arc::new(dir), deadline: None })
    }

    /// The same workspace for one tool call that must stop at `deadline`: the tool layer
    /// gives each call one, so a timed-out call's thread stops working instead of running
    /// on in the background.
    pub fn with_deadline(&self, deadline: Instant) -> Workspace {
        Workspace { deadline: Some(deadline), ..self.clone() }
    }

    /// An error once the call's deadline has passed. Skills call it in every loop whose
    /// length depends on the input (rows, files, lines), so a timeout stops the work
    /// within milliseconds; workspace reads and walks call it themselves.
    pub fn check_deadline(&self) -> Result<(), SkillError> {
        match self.deadline {
            Some(deadline) if Instant::now() >= deadline => {
                Err(SkillError::new("stopped: the call ran past its time limit"))
            }
            _ => Ok(()),
        }
    }

    /// Reads a text file inside the workspace. Refused: paths outside it (also through a
    /// link), directories, anything that is not a regular file (a FIFO never blocks the
    /// call), files over [`MAX_TEXT_BYTES`], binary files (NUL bytes in the first 8 KiB)
    /// and invalid UTF-8. A leading UTF-8 byte order mark is removed.
    pub fn read_text(&self, user_path: &str) -> Result<TextFile, SkillError> {
        self.check_deadline()?;
        let rel = self.relative(user_path)?;
        let shown = shown_relative(&rel);
        let file = self
            .in_root(&rel, |path| open_for_read(&self.dir, path, FollowSymlinks::Yes))
            .map_err(|err| access_error(user_path, &err, "access"))?;
        let text = read_text_from(file, &shown, MAX_TEXT_BYTES)?;
        Ok(TextFile { path: self.root.join(&rel), shown, text })
    }

    /// Writes `contents` to `user_path` atomically, creating missing parent directories
    /// inside the workspace. Refuses to replace an existing file unless `overwrite` (and
    /// then replaces the directory entry: a link there is replaced, never written through),
    /// and refuses anything under the memory folder. Returns the absolute path written.
    pub fn write_text(&self, user_path: &str, contents: &str, overwrite: bool) -> Result<PathBuf, SkillError> {
        self.check_deadline()?;
        let rel = self.relative(user_path)?;
        let (Some(name), Some(parent_rel)) = (rel.file_name(), rel.parent()) else {
            return Err(SkillError::new(format!(
                "'{}' is the workspace directory; give a file name to write",
                short(user_path)
            )));
        };
        let name = name.to_os_string();
        let write_error = |err: &io::Error| access_error(user_path, err, "write");
        self.refuse_memory_path(&rel, user_path)?;
        // A link among the parents may lead into the memory folder: checked on the deepest
        // parent that exists, before any directory is created below it.
        self.refuse_memory_ancestor(parent_rel, user_path)?;
        let open_parent = || self.in_root(parent_rel, |path| self.dir.open_dir(path));
        let parent = match open_parent() {
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                self.in_root(parent_rel, |path| self.dir.create_dir_all(path)).map_err(|err| write_error(&err))?;
                open_parent()
            }
            opened => opened,
        }
        .map_err(|err| write_error(&err))?;
        // What was opened is what counts, whatever moved since the checks above.
        self.refuse_memory_dir(&parent, user_path)?;
        match parent.symlink_metadata(&name) {
            Ok(meta) if meta.is_dir() => {
                return Err(SkillError::new(format!(
                    "'{}' is a directory; give a file name to write",
                    short(user_path)
                )))
            }
            Ok(_) if !overwrite => return Err(already_exists(user_path)),
            Ok(_) => {}
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(write_error(&err)),
        }
        let mut temp = TempFile::create(&parent).map_err(|err| write_error(&err))?;
        temp.file.write_all(contents.as_bytes()).map_err(|err| write_error(&err))?;
        temp.file.sync_all().map_err(|err| write_error(&err))?;
        match temp.persist(&name, overwrite) {
            Ok(()) => {}
            // Someone created the file between our check and the link.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => return Err(already_exists(user_path)),
            Err(err) => return Err(write_error(&err)),
        }
        // The new directory entry survives a crash too; a failure here loses nothing.
        let _ = sync_dir(&parent);
        Ok(self.root.join(&rel))
    }

    /// Visits the regular files under `user_dir` in sorted path order (the order of
    /// sorting their whole paths), leaving out what `skip(name, is_dir)` says and never
    /// following a link: each directory is opened through its parent's handle without
    /// following links, so a walk cannot leave the workspace, and paths longer than the
    /// kernel's limit are still walked. `visit` may stop the walk early.
    pub fn walk_files(
        &self,
        user_dir: &str,
        skip: &dyn Fn(&str, bool) -> bool,
        visit: &mut dyn FnMut(&WalkedFile<'_>) -> Result<ControlFlow<()>, SkillError>,
    ) -> Result<WalkSummary, SkillError> {
        self.check_deadline()?;
        let rel = self.relative(user_dir)?;
        let start = self.in_root(&rel, |path| self.dir.open_dir(path)).map_err(|err| match err.raw_os_error() {
            Some(libc::ENOTDIR) => SkillError::new(format!("'{}' is not a directory", short(user_dir))),
            _ => access_error(user_dir, &err, "access"),
        })?;
        let mut summary = WalkSummary { shown: shown_relative(&rel), too_deep: 0 };
        let prefix = if rel.as_os_str().is_empty() { String::new() } else { format!("{}/", summary.shown) };
        let _stopped_early = self.walk_dir(&start, &prefix, 0, skip, visit, &mut summary)?;
        Ok(summary)
    }

    fn walk_dir(
        &self,
        dir: &Dir,
        prefix: &str,
        depth: usize,
        skip: &dyn Fn(&str, bool) -> bool,
        visit: &mut dyn FnMut(&WalkedFile<'_>) -> Result<ControlFlow<()>, SkillError>,
        summary: &mut WalkSummary,
    ) -> Result<ControlFlow<()>, SkillError> {
        self.check_deadline()?;
        // An unreadable directory is left out, as one the user cannot list.
        let Ok(entries) = dir.entries() else { return Ok(ControlFlow::Continue(())) };
        let mut entries: Vec<_> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_type().ok().map(|kind| (entry.file_name(), kind)))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (os_name, kind) in entries {
            self.check_deadline()?;
            let name = os_name.to_string_lossy().into_owned();
            // Links and special files are not followed or read: only real files and dirs.
            if kind.is_dir() {
                if skip(&name, true) {
                    continue;
                }
                if depth + 1 >= MAX_WALK_DEPTH {
                    summary.too_deep += 1;
                    continue;
                }
                // Swapped for a link since it was listed: the open fails and it is skipped.
                let Ok(sub) = dir.open_dir_nofollow(&os_name) else { continue };
                let flow = self.walk_dir(&sub, &format!("{prefix}{name}/"), depth + 1, skip, visit, summary)?;
                if flow.is_break() {
                    return Ok(flow);
                }
            } else if kind.is_file() && !skip(&name, false) {
                let file = WalkedFile { shown: format!("{prefix}{name}"), name, dir, os_name };
                if visit(&file)?.is_break() {
                    return Ok(ControlFlow::Break(()));
                }
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// `path` relative to the root with forward slashes (`.` for the root itself); paths
    /// outside the root are shown as given.
    pub fn shown(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) => shown_relative(rel),
            Err(_) => path.display().to_string(),
        }
    }

    /// The user's path as a path relative to the root, `.` and `..` removed without
    /// touching the disk (empty for the root itself). Relative paths start at the root;
    /// absolute ones must lie inside it.
    fn relative(&self, user_path: &str) -> Result<PathBuf, SkillError> {
        let trimmed = user_path.trim();
        if trimmed.is_empty() {
            return Err(SkillError::new("path is empty; give a path inside the workspace"));
        }
        if trimmed.contains('\0') {
            return Err(SkillError::new("path contains a NUL character"));
        }
        if trimmed.len() > MAX_PATH_BYTES {
            return Err(SkillError::new(format!(
                "path '{}' is too long ({} bytes; the limit is {MAX_PATH_BYTES})",
                short(trimmed),
                trimmed.len()
            )));
        }
        let given = Path::new(trimmed);
        let joined = if given.is_absolute() { given.to_path_buf() } else { self.root.join(given) };
        let mut normalized = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::Prefix(_) | Component::RootDir | Component::Normal(_) => normalized.push(component),
                Component::CurDir => {}
                Component::ParentDir => {
                    normalized.pop();
                }
            }
        }
        normalized.strip_prefix(&self.root).map(Path::to_path_buf).map_err(|_| outside(user_path))
    }

    /// Runs `op` on the relative path; when that path escapes through a link, retries it
    /// once on the link's resolved target if that lies inside the root. cap-std refuses
    /// every absolute link (it cannot know where the root is), but a link to
    /// `/abs/workspace/docs/a.txt` inside the workspace is the user's own; the retry still
    /// goes through the handle, so a swap in between cannot lead outside.
    fn in_root<T>(&self, rel: &Path, op: impl Fn(&Path) -> io::Result<T>) -> io::Result<T> {
        match op(&dot_if_empty(rel)) {
            Err(err) if is_escape(&err) => {
                let real = fs::canonicalize(self.root.join(rel)).ok();
                match real.as_deref().and_then(|real| real.strip_prefix(&self.root).ok()) {
                    Some(inside) => op(&dot_if_empty(inside)),
                    None => Err(err),
                }
            }
            other => other,
        }
    }

    /// Refuses a relative path whose first component is the memory folder.
    fn refuse_memory_path(&self, rel: &Path, user_path: &str) -> Result<(), SkillError> {
        match rel.components().next() {
            Some(Component::Normal(first)) if first == MEMORY_DIR => Err(memory_refused(user_path)),
            _ => Ok(()),
        }
    }

    /// Refuses a parent path whose deepest existing directory resolves into the memory
    /// folder (through links inside the workspace).
    fn refuse_memory_ancestor(&self, parent_rel: &Path, user_path: &str) -> Result<(), SkillError> {
        let mut probe = parent_rel.to_path_buf();
        loop {
            match self.in_root(&probe, |path| self.dir.canonicalize(path)) {
                Ok(real) => return self.refuse_memory_path(&real, user_path),
                Err(err) if err.kind() == io::ErrorKind::NotFound && probe.pop() => {}
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(err) => return Err(access_error(user_path, &err, "write")),
            }
        }
    }

    /// Refuses a directory that is the memory folder itself, by identity (device and
    /// inode), whatever name led to it.
    fn refuse_memory_dir(&self, dir: &Dir, user_path: &str) -> Result<(), SkillError> {
        let Ok(memory) = self.dir.symlink_metadata(MEMORY_DIR) else { return Ok(()) };
        let opened = dir.dir_metadata().map_err(|err| access_error(user_path, &err, "write"))?;
        if memory.is_dir() && memory.dev() == opened.dev() && memory.ino() == opened.ino() {
            return Err(memory_refused(user_path));
        }
        Ok(())
    }
}

/// An unnamed temp file in a directory, or a named one where the filesystem has no
/// unnamed ones; the named one is removed unless persisted.
struct TempFile<'a> {
    dir: &'a Dir,
    file: fs::File,
    name: Option<OsString>,
}

impl<'a> TempFile<'a> {
    fn create(dir: &'a Dir) -> io::Result<TempFile<'a>> {
        #[cfg(target_os = "linux")]
        if Path::new("/proc/self/fd").is_dir() {
            use std::os::fd::{AsRawFd, FromRawFd};
            // SAFETY: openat on a directory fd we hold, with a NUL-terminated path; the
            // returned fd is owned by the File from here on.
            let fd = unsafe {
                libc::openat(dir.as_raw_fd(), c".".as_ptr(), libc::O_TMPFILE | libc::O_WRONLY | libc::O_CLOEXEC, 0o644)
            };
            if fd >= 0 {
                // SAFETY: `fd` is a fresh, valid descriptor nobody else owns.
                let file = unsafe { fs::File::from_raw_fd(fd) };
                return Ok(TempFile { dir, file, name: None });
            }
            let err = io::Error::last_os_error();
            // Not supported by this filesystem: fall back to a named temp file.
            if !matches!(err.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL | libc::ENOENT)) {
                return Err(err);
            }
        }
        let (name, file) = Self::create_named(dir)?;
        Ok(TempFile { dir, file, name: Some(name) })
    }

    fn create_named(dir: &Dir) -> io::Result<(OsString, fs::File)> {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true).mode(0o644);
        let mut last = io::Error::other("no temp file name was free");
        for attempt in 0..16u32 {
            let name = OsString::from(temp_name(attempt));
            match dir.open_with(&name, &options) {
                Ok(file) => return Ok((name, file.into_std())),
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last = err,
                Err(err) => return Err(err),
            }
        }
        Err(last)
    }

    /// Gives the temp file the name `name`: a new link when it must not replace a file
    /// (atomic: fails if the name exists), a rename over it otherwise.
    fn persist(mut self, name: &OsString, overwrite: bool) -> io::Result<()> {
        match self.name.take() {
            Some(temp) => {
                let result = if overwrite {
                    self.dir.rename(&temp, self.dir, name)
                } else {
                    let linked = self.dir.hard_link(&temp, self.dir, name);
                    let _ = self.dir.remove_file(&temp);
                    linked
                };
                if result.is_err() {
                    let _ = self.dir.remove_file(&temp);
                }
                result
            }
            None => self.link_unnamed(name, overwrite),
        }
    }

    #[cfg(target_os = "linux")]
    fn link_unnamed(&self, name: &OsString, overwrite: bool) -> io::Result<()> {
        use std::ffi::CString;
        use std::os::fd::AsRawFd;
        use std::os::unix::ffi::OsStrExt;
        let source = CString::new(format!("/proc/self/fd/{}", self.file.as_raw_fd())).map_err(io::Error::other)?;
        let link = |target: &OsString| -> io::Result<()> {
            let target = CString::new(target.as_bytes()).map_err(io::Error::other)?;
            // SAFETY: both paths are NUL-terminated; the fds are ours and open.
            let rc = unsafe {
                libc::linkat(libc::AT_FDCWD, source.as_ptr(), self.dir.as_raw_fd(), target.as_ptr(), libc::AT_SYMLINK_FOLLOW)
            };
            if rc == 0 {
                Ok(())
            } else {
                Err(io::Error::last_os_error())
            }
        };
        if !overwrite {
            return link(name);
        }
        // No "link over" exists: link under a temp name, then rename that over the target.
        let mut attempt = 0;
        let temp = loop {
            let temp = OsString::from(temp_name(attempt));
            match link(&temp) {
                Ok(()) => break temp,
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
                Err(err) => return Err(err),
            }
        };
        let renamed = self.dir.rename(&temp, self.dir, name);
        if renamed.is_err() {
            let _ = self.dir.remove_file(&temp);
        }
        renamed
    }

    #[cfg(not(target_os = "linux"))]
    fn link_unnamed(&self, _name: &OsString, _overwrite: bool) -> io::Result<()> {
        Err(io::Error::other("unnamed temp files exist only on Linux"))
    }
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            let _ = self.dir.remove_file(&name);
        }
    }
}

fn temp_name(attempt: u32) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    format!("{TEMP_PREFIX}{}-{nanos:09}-{attempt}", std::process::id())
}

fn sync_dir(dir: &Dir) -> io::Result<()> {
    dir.open(".")?.sync_all()
}

/// Opens a file for reading without blocking (a FIFO opens at once and is then refused
/// as not a regular file).
fn open_for_read(dir: &Dir, path: &Path, follow: FollowSymlinks) -> io::Result<fs::File> {
    let mut options = OpenOptions::new();
    options.read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).follow(follow);
    dir.open_with(path, &options).map(cap_std::fs::File::into_std)
}

/// Reads a whole text file from an open handle, refusing what is not one (see
/// [`Workspace::read_text`]). `shown` names the file in errors.
fn read_text_from(file: fs::File, shown: &str, max_bytes: u64) -> Result<String, SkillError> {
    let meta = file.metadata().map_err(|err| read_error(shown, &err))?;
    if meta.is_dir() {
        return Err(SkillError::new(format!("'{}' is a directory, not a file", short(shown))));
    }
    if !meta.is_file() {
        return Err(SkillError::new(format!("'{}' is not a regular file", short(shown))));
    }
    if meta.len() > max_bytes {
        return Err(too_large(shown, meta.len(), max_bytes));
    }
    // The file may grow after the size check: never read more than the limit allows.
    let mut bytes = Vec::new();
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(|err| read_error(shown, &err))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(shown, bytes.len() as u64, max_bytes));
    }
    let sniff = bytes.get(..BINARY_SNIFF_BYTES).unwrap_or(&bytes);
    if sniff.contains(&0) {
        return Err(SkillError::new(format!(
            "'{}' looks like a binary file (it contains NUL bytes); only text files can be read",
            short(shown)
        )));
    }
    let text = String::from_utf8(bytes).map_err(|err| {
        SkillError::new(format!(
            "'{}' is not valid UTF-8 text (bad byte at offset {})",
            short(shown),
            err.utf8_error().valid_up_to()
        ))
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

fn dot_if_empty(rel: &Path) -> PathBuf {
    if rel.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        rel.to_path_buf()
    }
}

fn shown_relative(rel: &Path) -> String {
    if rel.as_os_str().is_empty() {
        return ".".to_string();
    }
    rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

/// A user's path cut to a readable length for an error line (the middle replaced by `…`).
pub fn short(path: &str) -> String {
    crate::text::elide_middle(path, SHOWN_PATH_CHARS)
}

/// cap-std's error for a path that would resolve outside the root.
fn is_escape(err: &io::Error) -> bool {
    err.kind() == io::ErrorKind::PermissionDenied && err.to_string().contains("outside of the filesystem")
}

/// An error of opening or creating `user_path`; `verb` is `access` or `write`.
fn access_error(user_path: &str, err: &io::Error, verb: &str) -> SkillError {
    let shown = short(user_path);
    if is_escape(err) {
        return SkillError::new(format!(
            "path '{shown}' leads outside the workspace through a symbolic link; {verb} refused"
        ));
    }
    match (err.kind(), err.raw_os_error()) {
        (io::ErrorKind::NotFound, _) if verb == "access" => {
            SkillError::new(format!("'{shown}' does not exist in the workspace"))
        }
        (_, Some(libc::ENOTDIR)) if verb == "write" => {
            SkillError::new(format!("cannot write '{shown}': a parent is not a directory"))
        }
        (_, Some(libc::ELOOP)) => SkillError::new(format!("'{shown}' is a symbolic link that was not followed")),
        _ => SkillError::new(format!("cannot {verb} '{shown}': {}", io_reason(err))),
    }
}

fn read_error(shown: &str, err: &io::Error) -> SkillError {
    match err.raw_os_error() {
        Some(libc::ELOOP) => SkillError::new(format!("'{}' is a symbolic link that was not followed", short(shown))),
        _ if err.kind() == io::ErrorKind::NotFound => SkillError::new(format!("'{}' does not exist", short(shown))),
        _ => SkillError::new(format!("cannot read '{}': {}", short(shown), io_reason(err))),
    }
}

fn outside(user_path: &str) -> SkillError {
    SkillError::new(format!(
        "path '{}' is outside the workspace; use a path inside it (relative paths start at the workspace root)",
        short(user_path)
    ))
}

fn memory_refused(user_path: &str) -> SkillError {
    SkillError::new(format!(
        "'{}' is in the memory folder ({MEMORY_DIR}/), which tools may read but never change; write somewhere else",
        short(user_path)
    ))
}

fn already_exists(user_path: &str) -> SkillError {
    SkillError::new(format!(
        "'{}' already exists; not overwriting it (set overwrite to true to replace it)",
        short(user_path)
    ))
}

fn too_large(shown: &str, len: u64, max_bytes: u64) -> SkillError {
    SkillError::new(format!(
        "'{}' is too large ({} KiB; the limit is {} KiB)",
        short(shown),
        len.div_ceil(1024),
        max_bytes / 1024
    ))
}

/// The OS error without its code: "Permission denied", not "Permission denied (os error 13)".
pub fn io_reason(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(cut) => text.get(..cut).unwrap_or(&text).to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    struct Setup {
        _outer: tempfile::TempDir,
        outside: PathBuf,
        ws: Workspace,
    }

    /// `outer/ws` is the workspace with `docs/a.txt` and `memory/global.md`;
    /// `outer/secret.txt` lies outside it.
    fn setup() -> Setup {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ws");
        fs::create_dir_all(root.join("docs")).unwrap();
        fs::create_dir_all(root.join("memory")).unwrap();
        fs::write(root.join("docs/a.txt"), "hello 你好\n").unwrap();
        fs::write(root.join("memory/global.md"), "be brief\n").unwrap();
        let outside = outer.path().join("secret.txt");
        fs::write(&outside, "secret").unwrap();
        let ws = Workspace::new(&root).unwrap();
        Setup { _outer: outer, outside, ws }
    }

    fn err<T: std::fmt::Debug>(r: Result<T, SkillError>) -> String {
        r.unwrap_err().0
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn new_needs_an_existing_directory() {
        let s = setup();
        assert!(err(Workspace::new(s.ws.root.join("nope"))).contains("cannot be opened"));
        assert!(err(Workspace::new(s.ws.root.join("docs/a.txt"))).contains("is not a directory"));
    }

    #[test]
    fn relative_and_absolute_paths_inside_read() {
        let s = setup();
        let expected = s.ws.root.join("docs/a.txt");
        for path in ["docs/a.txt", "./docs/../docs/a.txt", expected.to_str().unwrap()] {
            let file = s.ws.read_text(path).unwrap();
            assert_eq!((file.path, file.shown.as_str()), (expected.clone(), "docs/a.txt"), "{path}");
        }
        assert_eq!(s.ws.shown(&expected), "docs/a.txt");
        assert_eq!(s.ws.shown(&s.ws.root), ".");
    }

    #[test]
    fn escapes_are_refused_with_the_path_named() {
        let s = setup();
        for path in ["../secret.txt", "../nope.txt", "docs/../../secret.txt", s.outside.to_str().unwrap(), "/etc/passwd"]
        {
            let e = err(s.ws.read_text(path));
            assert!(e.contains(&format!("path '{path}' is outside the workspace")), "{path}: {e}");
            let e = err(s.ws.write_text(path, "x", true));
            assert!(e.contains("is outside the workspace"), "{path}: {e}");
        }
        assert_eq!(fs::read_to_string(&s.outside).unwrap(), "secret");
    }

    #[test]
    fn symlinks_leaving_the_root_are_refused_and_inner_ones_work() {
        let s = setup();
        symlink(&s.outside, s.ws.root.join("leak.txt")).unwrap();
        symlink(s.outside.parent().unwrap(), s.ws.root.join("outdir")).unwrap();
        // Absolute and relative links that stay inside are the user's own.
        symlink(s.ws.root.join("docs/a.txt"), s.ws.root.join("inner.txt")).unwrap();
        symlink("docs/a.txt", s.ws.root.join("rel.txt")).unwrap();
        symlink(s.ws.root.join("docs"), s.ws.root.join("docs_link")).unwrap();
        assert_eq!(
            err(s.ws.read_text("leak.txt")),
            "path 'leak.txt' leads outside the workspace through a symbolic link; access refused"
        );
        assert!(err(s.ws.read_text("outdir/secret.txt")).contains("symbolic link; access refused"));
        assert_eq!(
            err(s.ws.write_text("outdir/new.txt", "x", false)),
            "path 'outdir/new.txt' leads outside the workspace through a symbolic link; write refused"
        );
        assert!(!s.outside.parent().unwrap().join("new.txt").exists());
        for inner in ["inner.txt", "rel.txt", "docs_link/a.txt"] {
            assert_eq!(s.ws.read_text(inner).unwrap().text, "hello 你好\n", "{inner}");
        }
        s.ws.write_text("docs_link/b.txt", "b", false).unwrap();
        assert_eq!(fs::read_to_string(s.ws.root.join("docs/b.txt")).unwrap(), "b");
    }

    #[test]
    fn overwriting_a_planted_link_replaces_the_link_not_its_target() {
        let s = setup();
        symlink(&s.outside, s.ws.root.join("docs/out.txt")).unwrap();
        assert!(err(s.ws.write_text("docs/out.txt", "x", false)).contains("already exists"));
        s.ws.write_text("docs/out.txt", "mine", true).unwrap();
        assert_eq!(fs::read_to_string(&s.outside).unwrap(), "secret");
        assert_eq!(fs::read_to_string(s.ws.root.join("docs/out.txt")).unwrap(), "mine");
        assert!(!fs::symlink_metadata(s.ws.root.join("docs/out.txt")).unwrap().file_type().is_symlink());
    }

    #[test]
    fn the_memory_folder_is_never_written_however_it_is_spelled() {
        let s = setup();
        let root = &s.ws.root;
        symlink(root.join("memory"), root.join("notes")).unwrap();
        symlink("memory", root.join("mem_rel")).unwrap();
        let absolute = root.join("memory/history.md");
        for path in [
            "memory/history.md",
            "memory/global.md",
            "memory/zz_injected.md",
            "./memory/new.md",
            "docs/../memory/x.md",
            "memory//sub/deeper/x.md",
            absolute.to_str().unwrap(),
            "notes/global.md",
            "notes/new.md",
            "mem_rel/new.md",
        ] {
            let e = err(s.ws.write_text(path, "pwned", true));
            assert!(e.contains("is in the memory folder (memory/), which tools may read but never change"), "{path}: {e}");
        }
        assert_eq!(names(&root.join("memory")), ["global.md"]);
        assert_eq!(fs::read_to_string(root.join("memory/global.md")).unwrap(), "be brief\n");
        // Reading stays allowed, as for the user.
        assert_eq!(s.ws.read_text("memory/global.md").unwrap().text, "be brief\n");
    }

    #[test]
    fn missing_empty_and_long_paths_are_clear_errors() {
        let s = setup();
        assert_eq!(err(s.ws.read_text("docs/nope.txt")), "'docs/nope.txt' does not exist in the workspace");
        assert_eq!(err(s.ws.read_text("  ")), "path is empty; give a path inside the workspace");
        assert_eq!(err(s.ws.read_text("a\0b")), "path contains a NUL character");
        let long = "x/".repeat(50_000);
        let e = err(s.ws.read_text(&long));
        assert!(e.starts_with("path 'x/x/") && e.contains('…') && e.ends_with("(100000 bytes; the limit is 4096)"), "{e}");
        assert!(e.chars().count() < 300, "{e}");
    }

    #[test]
    fn read_text_refuses_what_is_not_text() {
        let s = setup();
        let root = &s.ws.root;
        fs::write(root.join("bin.dat"), b"PK\x03\x04\x00\x00data").unwrap();
        fs::write(root.join("latin1.txt"), b"caf\xe9").unwrap();
        fs::write(root.join("big.txt"), vec![b'a'; MAX_TEXT_BYTES as usize + 1]).unwrap();
        fs::write(root.join("bom.txt"), "\u{feff}名字,值\n").unwrap();
        assert_eq!(
            err(s.ws.read_text("bin.dat")),
            "'bin.dat' looks like a binary file (it contains NUL bytes); only text files can be read"
        );
        assert_eq!(err(s.ws.read_text("latin1.txt")), "'latin1.txt' is not valid UTF-8 text (bad byte at offset 3)");
        assert_eq!(err(s.ws.read_text("big.txt")), "'big.txt' is too large (2049 KiB; the limit is 2048 KiB)");
        assert_eq!(err(s.ws.read_text("docs")), "'docs' is a directory, not a file");
        assert_eq!(err(s.ws.read_text("nope.txt")), "'nope.txt' does not exist in the workspace");
        assert_eq!(
            s.ws.read_text("bom.txt").unwrap(),
            TextFile { path: root.join("bom.txt"), shown: "bom.txt".into(), text: "名字,值\n".into() }
        );
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let s = setup();
        let fifo = s.ws.root.join("pipe.txt");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
        assert_eq!(err(s.ws.read_text("pipe.txt")), "'pipe.txt' is not a regular file");
    }

    #[test]
    fn write_creates_parents_and_never_overwrites_unless_asked() {
        let s = setup();
        let path = s.ws.write_text("out/new/表.csv", "a,b\n", false).unwrap();
        assert_eq!(path, s.ws.root.join("out/new/表.csv"));
        assert_eq!(fs::read_to_string(&path).unwrap(), "a,b\n");
        assert_eq!(
            err(s.ws.write_text("out/new/表.csv", "changed", false)),
            "'out/new/表.csv' already exists; not overwriting it (set overwrite to true to replace it)"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "a,b\n");
        s.ws.write_text("out/new/表.csv", "changed", true).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "changed");
        assert_eq!(err(s.ws.write_text("docs", "x", true)), "'docs' is a directory; give a file name to write");
        assert_eq!(err(s.ws.write_text(".", "x", true)), "'.' is the workspace directory; give a file name to write");
        assert!(err(s.ws.write_text("docs/a.txt/x", "x", true)).contains("cannot write 'docs/a.txt/x'"));
        // No temp files are left behind, and the file is an ordinary user file.
        assert_eq!(names(&s.ws.root.join("out/new")), ["表.csv"]);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o600, 0o600);
    }

    #[test]
    fn the_named_temp_fallback_leaves_nothing_behind() {
        let s = setup();
        let dir = Dir::open_ambient_dir(s.ws.root.join("docs"), cap_std::ambient_authority()).unwrap();
        let (name, _file) = TempFile::create_named(&dir).unwrap();
        let mut temp = TempFile { dir: &dir, file: _file, name: Some(name) };
        temp.file.write_all(b"fallback").unwrap();
        // Refused (the name exists): the temp file is removed.
        assert_eq!(temp.persist(&OsString::from("a.txt"), false).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        let (name, file) = TempFile::create_named(&dir).unwrap();
        let mut temp = TempFile { dir: &dir, file, name: Some(name) };
        temp.file.write_all(b"fallback").unwrap();
        temp.persist(&OsString::from("b.txt"), false).unwrap();
        let (name, file) = TempFile::create_named(&dir).unwrap();
        drop(TempFile { dir: &dir, file, name: Some(name) });
        assert_eq!(names(&s.ws.root.join("docs")), ["a.txt", "b.txt"]);
        assert_eq!(fs::read_to_string(s.ws.root.join("docs/b.txt")).unwrap(), "fallback");
    }

    #[test]
    fn walks_visit_files_in_path_order_without_following_links() {
        let s = setup();
        let root = &s.ws.root;
        for path in ["docs/b/z.txt", "docs/b-c.txt", "docs/c/a.txt", ".hidden/x.txt"] {
            fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            fs::write(root.join(path), "x").unwrap();
        }
        symlink(s.outside.parent().unwrap(), root.join("docs/up")).unwrap();
        symlink(&s.outside, root.join("docs/leak.txt")).unwrap();
        let mut seen = Vec::new();
        let skip = |name: &str, _dir: bool| name.starts_with('.');
        let summary = s
            .ws
            .walk_files(".", &skip, &mut |file| {
                seen.push(format!("{}={}", file.shown, file.read_text(100).unwrap()));
                Ok(ControlFlow::Continue(()))
            })
            .unwrap();
        let mut sorted = seen.clone();
        sorted.sort_by(|a, b| Path::new(a.split('=').next().unwrap()).cmp(Path::new(b.split('=').next().unwrap())));
        assert_eq!(seen, sorted);
        assert_eq!(
            seen,
            ["docs/a.txt=hello 你好\n", "docs/b/z.txt=x", "docs/b-c.txt=x", "docs/c/a.txt=x", "memory/global.md=be brief\n"]
        );
        assert_eq!(summary, WalkSummary { shown: ".".into(), too_deep: 0 });
        assert_eq!(err(s.ws.walk_files("docs/a.txt", &skip, &mut |_| Ok(ControlFlow::Continue(())))), "'docs/a.txt' is not a directory");
    }

    #[test]
    fn deep_trees_past_the_path_limit_are_walked_and_too_deep_ones_counted() {
        let s = setup();
        // 100 levels of 60-byte names: 6100 bytes, past the kernel's 4096-byte path limit.
        let mut dir = Dir::open_ambient_dir(&s.ws.root, cap_std::ambient_authority()).unwrap();
        let name = "d".repeat(60);
        for _ in 0..100 {
            dir.create_dir(&name).unwrap();
            dir = dir.open_dir(&name).unwrap();
        }
        dir.write("deep.txt", "needle").unwrap();
        for _ in 0..(MAX_WALK_DEPTH + 5 - 100) {
            dir.create_dir(&name).unwrap();
            dir = dir.open_dir(&name).unwrap();
        }
        let mut found = Vec::new();
        let summary = s
            .ws
            .walk_files(".", &|_, _| false, &mut |file| {
                found.push((file.shown.len(), file.read_text(100).unwrap()));
                Ok(ControlFlow::Continue(()))
            })
            .unwrap();
        assert!(found.iter().any(|(len, text)| *len > 6000 && text == "needle"), "{found:?}");
        assert_eq!(summary.too_deep, 1);
    }

    #[test]
    fn a_passed_deadline_stops_reads_writes_and_walks() {
        let s = setup();
        let late = s.ws.with_deadline(Instant::now());
        let stopped = "stopped: the call ran past its time limit";
        assert_eq!(err(late.read_text("docs/a.txt")), stopped);
        assert_eq!(err(late.write_text("docs/new.txt", "x", false)), stopped);
        assert_eq!(err(late.walk_files(".", &|_, _| false, &mut |_| Ok(ControlFlow::Continue(())))), stopped);
        assert!(!s.ws.root.join("docs/new.txt").exists());
        let early = s.ws.with_deadline(Instant::now() + std::time::Duration::from_secs(60));
        assert!(early.read_text("docs/a.txt").is_ok());
    }
}
