//! The workspace root every file access is confined to.
//!
//! Paths from the model are resolved lexically first (so `../x` is refused even when `x`
//! does not exist), then canonicalized (so a symlink that leaves the root is refused too).
//! Writes go to a temp file in the target directory and are renamed into place, so a
//! reader never sees half a file and a failed write never damages an existing one.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use super::SkillError;

/// Text files larger than this are not read whole.
pub const MAX_TEXT_BYTES: u64 = 2 * 1024 * 1024;

/// How much of a file is inspected for NUL bytes to call it binary.
const BINARY_SNIFF_BYTES: usize = 8 * 1024;

#[derive(Clone, Debug)]
pub struct Workspace {
    /// The root directory; [`Workspace::new`] stores it canonicalized.
    pub root: PathBuf,
    /// When the current tool call must stop (see [`Workspace::check_deadline`]).
    deadline: Option<Instant>,
}

/// A text file read through the workspace.
#[derive(Clone, Debug, PartialEq)]
pub struct TextFile {
    /// Canonical absolute path.
    pub path: PathBuf,
    /// The path relative to the workspace root, with forward slashes.
    pub shown: String,
    /// The text, without a leading UTF-8 byte order mark.
    pub text: String,
}

impl Workspace {
    /// A workspace rooted at `root`, which must be an existing directory.
    pub fn new(root: impl AsRef<Path>) -> Result<Workspace, SkillError> {
        let given = root.as_ref();
        let root = fs::canonicalize(given).map_err(|err| {
            SkillError::new(format!("workspace '{}' cannot be opened: {}", given.display(), io_reason(&err)))
        })?;
        if !root.is_dir() {
            return Err(SkillError::new(format!("workspace '{}' is not a directory", given.display())));
        }
        Ok(Workspace { root, deadline: None })
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

    /// Resolves a path that must exist (file or directory) inside the workspace.
    /// Relative paths start at the root; absolute ones must lie inside it.
    pub fn resolve_existing(&self, user_path: &str) -> Result<PathBuf, SkillError> {
        let root = self.canonical_root()?;
        let normalized = Self::normalize(&root, user_path)?;
        match fs::canonicalize(&normalized) {
            Ok(real) if real.starts_with(&root) => Ok(real),
            Ok(_) if normalized.starts_with(&root) => Err(SkillError::new(format!(
                "path '{user_path}' leads outside the workspace through a symbolic link; access refused"
            ))),
            Ok(_) => Err(outside(user_path)),
            Err(_) if !normalized.starts_with(&root) => Err(outside(user_path)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                Err(SkillError::new(format!("'{user_path}' does not exist in the workspace")))
            }
            Err(err) => Err(SkillError::new(format!("cannot access '{user_path}': {}", io_reason(&err)))),
        }
    }

    /// Resolves where a new file may be written: the path must lie inside the root (its
    /// parent directories may not exist yet) and must not name an existing file unless
    /// `overwrite`. Returns the absolute target path; nothing is created.
    pub fn resolve_for_write(&self, user_path: &str, overwrite: bool) -> Result<PathBuf, SkillError> {
        let root = self.canonical_root()?;
        let normalized = Self::normalize(&root, user_path)?;
        if normalized == root {
            return Err(SkillError::new(format!(
                "'{user_path}' is the workspace directory; give a file name to write"
            )));
        }
        let (Some(parent), Some(name)) = (normalized.parent(), normalized.file_name()) else {
            return Err(SkillError::new(format!("'{user_path}' is not a file path")));
        };
        // The deepest directory that already exists decides where we really are; the
        // missing ones below it are plain names and will be created inside it.
        let mut existing = parent.to_path_buf();
        let mut missing = Vec::new();
        let real_dir = loop {
            match fs::canonicalize(&existing) {
                Ok(real) => break real,
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    let Some(last) = existing.file_name() else {
                        return Err(outside(user_path));
                    };
                    missing.push(last.to_os_string());
                    if !existing.pop() {
                        return Err(outside(user_path));
                    }
                }
                Err(err) => {
                    return Err(SkillError::new(format!("cannot access '{user_path}': {}", io_reason(&err))))
                }
            }
        };
        if !real_dir.starts_with(&root) {
            return Err(if normalized.starts_with(&root) {
                SkillError::new(format!(
                    "path '{user_path}' leads outside the workspace through a symbolic link; write refused"
                ))
            } else {
                outside(user_path)
            });
        }
        if !real_dir.is_dir() {
            return Err(SkillError::new(format!("cannot write '{user_path}': a parent is not a directory")));
        }
        let mut target = real_dir;
        target.extend(missing.iter().rev());
        target.push(name);
        match fs::symlink_metadata(&target) {
            Ok(meta) if meta.is_dir() => {
                Err(SkillError::new(format!("'{user_path}' is a directory; give a file name to write")))
            }
            Ok(_) if !overwrite => Err(already_exists(user_path)),
            Ok(_) => Ok(target),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(target),
            Err(err) => Err(SkillError::new(format!("cannot access '{user_path}': {}", io_reason(&err)))),
        }
    }

    /// Writes `contents` to `user_path` atomically (temp file in the same directory, then
    /// rename), creating missing parent directories inside the workspace. Refuses to
    /// replace an existing file unless `overwrite`. Returns the absolute path written.
    pub fn write_text(
        &self,
        user_path: &str,
        contents: &str,
        overwrite: bool,
    ) -> Result<PathBuf, SkillError> {
        let target = self.resolve_for_write(user_path, overwrite)?;
        let Some(dir) = target.parent() else {
            return Err(SkillError::new(format!("'{user_path}' is not a file path")));
        };
        let write_error =
            |err: &io::Error| SkillError::new(format!("cannot write '{user_path}': {}", io_reason(err)));
        fs::create_dir_all(dir).map_err(|e| write_error(&e))?;
        let mut temp =
            tempfile::Builder::new().prefix(".b4-write-").tempfile_in(dir).map_err(|e| write_error(&e))?;
        temp.write_all(contents.as_bytes()).map_err(|e| write_error(&e))?;
        temp.as_file().sync_all().map_err(|e| write_error(&e))?;
        #[cfg(unix)]
        {
            // Temp files are private (0600); the result is an ordinary user file.
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(temp.path(), fs::Permissions::from_mode(0o644))
                .map_err(|e| write_error(&e))?;
        }
        let persisted = if overwrite { temp.persist(&target) } else { temp.persist_noclobber(&target) };
        match persisted {
            Ok(_) => Ok(target),
            // Someone created the file between our check and the rename.
            Err(err) if err.error.kind() == io::ErrorKind::AlreadyExists => Err(already_exists(user_path)),
            Err(err) => Err(write_error(&err.error)),
        }
    }

    /// Reads a text file inside the workspace (see [`read_text_file`] for what is refused).
    pub fn read_text(&self, user_path: &str) -> Result<TextFile, SkillError> {
        let path = self.resolve_existing(user_path)?;
        let shown = self.shown(&path);
        let text = read_text_file(&path, &shown, MAX_TEXT_BYTES)?;
        Ok(TextFile { path, shown, text })
    }

    /// `path` relative to the root with forward slashes (`.` for the root itself); paths
    /// outside the root are shown as given.
    pub fn shown(&self, path: &Path) -> String {
        let root = self.canonical_root().unwrap_or_else(|_| self.root.clone());
        match path.strip_prefix(&root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => path.display().to_string(),
        }
    }

    /// The root, canonicalized again so that a `Workspace` built by hand (not through
    /// [`Workspace::new`]) is still checked against its real location.
    fn canonical_root(&self) -> Result<PathBuf, SkillError> {
        fs::canonicalize(&self.root).map_err(|err| {
            SkillError::new(format!(
                "workspace '{}' is not accessible: {}",
                self.root.display(),
                io_reason(&err)
            ))
        })
    }

    /// Joins a user path onto the root and removes `.` and `..` without touching the disk.
    fn normalize(root: &Path, user_path: &str) -> Result<PathBuf, SkillError> {
        let trimmed = user_path.trim();
        if trimmed.is_empty() {
            return Err(SkillError::new("path is empty; give a path inside the workspace"));
        }
        if trimmed.contains('\0') {
            return Err(SkillError::new("path contains a NUL character"));
        }
        let given = Path::new(trimmed);
        let joined = if given.is_absolute() { given.to_path_buf() } else { root.join(given) };
        let mut out = PathBuf::new();
        for component in joined.components() {
            match component {
                Component::Prefix(_) | Component::RootDir | Component::Normal(_) => out.push(component),
                Component::CurDir => {}
                Component::ParentDir => {
                    out.pop();
                }
            }
        }
        Ok(out)
    }
}

/// Reads a whole text file, refusing what is not one: missing files, directories, files
/// over `max_bytes`, binary files (NUL bytes in the first 8 KiB) and invalid UTF-8. A
/// leading UTF-8 byte order mark is removed. `shown` names the file in errors.
pub fn read_text_file(path: &Path, shown: &str, max_bytes: u64) -> Result<String, SkillError> {
    let meta = fs::metadata(path).map_err(|err| match err.kind() {
        io::ErrorKind::NotFound => SkillError::new(format!("'{shown}' does not exist")),
        _ => SkillError::new(format!("cannot read '{shown}': {}", io_reason(&err))),
    })?;
    if meta.is_dir() {
        return Err(SkillError::new(format!("'{shown}' is a directory, not a file")));
    }
    if !meta.is_file() {
        return Err(SkillError::new(format!("'{shown}' is not a regular file")));
    }
    if meta.len() > max_bytes {
        return Err(too_large(shown, meta.len(), max_bytes));
    }
    let file = fs::File::open(path)
        .map_err(|err| SkillError::new(format!("cannot read '{shown}': {}", io_reason(&err))))?;
    // The file may grow after the size check: never read more than the limit allows.
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| SkillError::new(format!("cannot read '{shown}': {}", io_reason(&err))))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(shown, bytes.len() as u64, max_bytes));
    }
    let sniff = bytes.get(..BINARY_SNIFF_BYTES).unwrap_or(&bytes);
    if sniff.contains(&0) {
        return Err(SkillError::new(format!(
            "'{shown}' looks like a binary file (it contains NUL bytes); only text files can be read"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|err| {
        SkillError::new(format!(
            "'{shown}' is not valid UTF-8 text (bad byte at offset {})",
            err.utf8_error().valid_up_to()
        ))
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

fn outside(user_path: &str) -> SkillError {
    SkillError::new(format!(
        "path '{user_path}' is outside the workspace; use a path inside it (relative paths start at the workspace root)"
    ))
}

fn already_exists(user_path: &str) -> SkillError {
    SkillError::new(format!(
        "'{user_path}' already exists; not overwriting it (set overwrite to true to replace it)"
    ))
}

fn too_large(shown: &str, len: u64, max_bytes: u64) -> SkillError {
    SkillError::new(format!(
        "'{shown}' is too large ({} KiB; the limit is {} KiB)",
        len.div_ceil(1024),
        max_bytes / 1024
    ))
}

/// The OS error without its code: "Permission denied", not "Permission denied (os error 13)".
fn io_reason(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(cut) => text.get(..cut).unwrap_or(&text).to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Setup {
        _outer: tempfile::TempDir,
        outside: PathBuf,
        ws: Workspace,
    }

    /// `outer/ws` is the workspace with `docs/a.txt`; `outer/secret.txt` lies outside it.
    fn setup() -> Setup {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ws");
        fs::create_dir_all(root.join("docs")).unwrap();
        fs::write(root.join("docs/a.txt"), "hello 你好\n").unwrap();
        let outside = outer.path().join("secret.txt");
        fs::write(&outside, "secret").unwrap();
        let ws = Workspace::new(&root).unwrap();
        Setup { _outer: outer, outside, ws }
    }

    fn err<T: std::fmt::Debug>(r: Result<T, SkillError>) -> String {
        r.unwrap_err().0
    }

    #[test]
    fn new_needs_an_existing_directory() {
        let s = setup();
        assert!(err(Workspace::new(s.ws.root.join("nope"))).contains("cannot be opened"));
        assert!(err(Workspace::new(s.ws.root.join("docs/a.txt"))).contains("is not a directory"));
    }

    #[test]
    fn relative_and_absolute_paths_inside_resolve() {
        let s = setup();
        let expected = s.ws.root.join("docs/a.txt");
        assert_eq!(s.ws.resolve_existing("docs/a.txt").unwrap(), expected);
        assert_eq!(s.ws.resolve_existing("./docs/../docs/a.txt").unwrap(), expected);
        assert_eq!(s.ws.resolve_existing(expected.to_str().unwrap()).unwrap(), expected);
        assert_eq!(s.ws.shown(&expected), "docs/a.txt");
        assert_eq!(s.ws.shown(&s.ws.root), ".");
    }

    #[test]
    fn escapes_are_refused_with_the_path_named() {
        let s = setup();
        for path in [
            "../secret.txt",
            "../nope.txt",
            "docs/../../secret.txt",
            s.outside.to_str().unwrap(),
            "/etc/passwd",
        ] {
            let e = err(s.ws.resolve_existing(path));
            assert!(e.contains(&format!("path '{path}' is outside the workspace")), "{path}: {e}");
            let e = err(s.ws.resolve_for_write(path, true));
            assert!(e.contains("outside the workspace"), "{path}: {e}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_leaving_the_root_are_refused_and_inner_ones_work() {
        let s = setup();
        std::os::unix::fs::symlink(&s.outside, s.ws.root.join("leak.txt")).unwrap();
        std::os::unix::fs::symlink(s.outside.parent().unwrap(), s.ws.root.join("outdir")).unwrap();
        std::os::unix::fs::symlink(s.ws.root.join("docs/a.txt"), s.ws.root.join("inner.txt")).unwrap();
        assert_eq!(
            err(s.ws.resolve_existing("leak.txt")),
            "path 'leak.txt' leads outside the workspace through a symbolic link; access refused"
        );
        assert!(err(s.ws.resolve_existing("outdir/secret.txt")).contains("symbolic link"));
        assert!(err(s.ws.write_text("outdir/new.txt", "x", false)).contains("symbolic link; write refused"));
        assert!(!s.outside.parent().unwrap().join("new.txt").exists());
        assert_eq!(s.ws.read_text("inner.txt").unwrap().text, "hello 你好\n");
    }

    #[test]
    fn missing_and_empty_paths_are_clear_errors() {
        let s = setup();
        assert_eq!(
            err(s.ws.resolve_existing("docs/nope.txt")),
            "'docs/nope.txt' does not exist in the workspace"
        );
        assert_eq!(err(s.ws.resolve_existing("  ")), "path is empty; give a path inside the workspace");
        assert_eq!(err(s.ws.resolve_existing("a\0b")), "path contains a NUL character");
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
        assert_eq!(
            err(s.ws.read_text("latin1.txt")),
            "'latin1.txt' is not valid UTF-8 text (bad byte at offset 3)"
        );
        assert_eq!(
            err(s.ws.read_text("big.txt")),
            "'big.txt' is too large (2049 KiB; the limit is 2048 KiB)"
        );
        assert_eq!(err(s.ws.read_text("docs")), "'docs' is a directory, not a file");
        assert_eq!(err(s.ws.read_text("nope.txt")), "'nope.txt' does not exist in the workspace");
        assert_eq!(
            s.ws.read_text("bom.txt").unwrap(),
            TextFile { path: root.join("bom.txt"), shown: "bom.txt".into(), text: "名字,值\n".into() }
        );
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
        assert_eq!(
            err(s.ws.write_text("docs", "x", true)),
            "'docs' is a directory; give a file name to write"
        );
        assert!(err(s.ws.write_text("docs/a.txt/x", "x", true)).contains("cannot write 'docs/a.txt/x'"));
        // No temp files are left behind.
        let names: Vec<_> =
            fs::read_dir(s.ws.root.join("out/new")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("表.csv")]);
    }
}
