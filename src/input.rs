//! Bounded reads of user-given files: messages, tools schemas, model configs, bench cases,
//! the JSON files of a model folder. A path from the command line or a config is read only
//! when it is a regular file, and only up to a cap sized for what it holds: `/dev/zero`
//! would otherwise fill memory, and a FIFO would block the command forever.
//!
//! The path is checked before it is opened, opened non-blocking (so a FIFO swapped in
//! after the check cannot block), and the open handle is checked again; then at most
//! cap + 1 bytes are read.

use std::fs::{File, FileType};
use std::io::Read;
use std::path::Path;

/// What a file holds (named in errors) and the most bytes it may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limit {
    pub what: &'static str,
    pub bytes: u64,
}

const MIB: u64 = 1 << 20;

/// A JSON array of messages (the seeds' are a few KiB).
pub const MESSAGES: Limit = Limit { what: "messages file", bytes: 8 * MIB };
/// A tools schema in OpenAI function format.
pub const TOOLS_SCHEMA: Limit = Limit { what: "tools schema", bytes: 8 * MIB };
/// `configs/model.yaml` or its like.
pub const MODEL_CONFIG: Limit = Limit { what: "model config", bytes: 4 * MIB };
/// `config.json`, `tokenizer_config.json`, `chat_template.jinja` of a model folder.
pub const MODEL_JSON: Limit = Limit { what: "model folder file", bytes: 16 * MIB };
/// `tokenizer.json` (Qwen's is 7 MiB; the largest vocabularies about 35 MiB).
pub const TOKENIZER: Limit = Limit { what: "tokenizer file", bytes: 64 * MIB };
/// One bench case file.
pub const BENCH_CASE: Limit = Limit { what: "bench case file", bytes: 16 * MIB };
/// A BFCL questions or answers file (the published ones are at most a few MiB).
pub const BFCL: Limit = Limit { what: "BFCL file", bytes: 64 * MIB };

#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The OS error is part of the message, so it is not also the error's source (an error
    /// chain printed in full would state it twice).
    #[error("{file}: cannot read: {error}")]
    Io { file: String, error: std::io::Error },
    #[error("{file}: {kind} cannot be a {what} (only regular files are read)")]
    NotRegular { file: String, kind: &'static str, what: &'static str },
    #[error("{file}: {size} is over the {limit} limit for a {what}")]
    TooBig { file: String, size: String, limit: String, what: &'static str },
    #[error("{file}: not UTF-8 text")]
    NotUtf8 { file: String },
}

impl InputError {
    /// The file does not exist (callers with optional files treat that as absent).
    pub fn is_not_found(&self) -> bool {
        matches!(self, InputError::Io { error, .. } if error.kind() == std::io::ErrorKind::NotFound)
    }
}

/// The file at `path` as UTF-8 text, at most `limit.bytes` long.
pub fn read_text(path: &Path, limit: Limit) -> Result<String, InputError> {
    let bytes = read_bytes(path, limit)?;
    String::from_utf8(bytes).map_err(|_| InputError::NotUtf8 { file: path.display().to_string() })
}

/// The bytes of the file at `path`, at most `limit.bytes` of them.
pub fn read_bytes(path: &Path, limit: Limit) -> Result<Vec<u8>, InputError> {
    let file = open_regular(path, limit.what)?;
    let size = file.metadata().map_err(|error| io_error(path, error))?.len();
    if size > limit.bytes {
        return Err(too_big(path, human_size(size), limit));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    // The file may grow after the size check: never read more than one byte over the cap.
    file.take(limit.bytes + 1).read_to_end(&mut bytes).map_err(|error| io_error(path, error))?;
    if bytes.len() as u64 > limit.bytes {
        return Err(too_big(path, format!("more than {}", human_size(limit.bytes)), limit));
    }
    Ok(bytes)
}

/// Opens `path` for reading when it is a regular file (FIFOs, devices, sockets and
/// directories are refused without blocking); `what` names it in errors.
pub fn open_regular(path: &Path, what: &'static str) -> Result<File, InputError> {
    let metadata = std::fs::metadata(path).map_err(|error| io_error(path, error))?;
    check_regular(path, metadata.file_type(), what)?;
    let file = open_nonblocking(path).map_err(|error| io_error(path, error))?;
    // Checked again on the handle: the path may have been swapped since.
    let metadata = file.metadata().map_err(|error| io_error(path, error))?;
    check_regular(path, metadata.file_type(), what)?;
    Ok(file)
}

#[cfg(target_os = "linux")]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK changes nothing for a regular file; a FIFO opens at once instead of
    // waiting for a writer, and is then refused by the check on the handle.
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
}

#[cfg(not(target_os = "linux"))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    File::open(path)
}

fn check_regular(path: &Path, file_type: FileType, what: &'static str) -> Result<(), InputError> {
    if file_type.is_file() {
        return Ok(());
    }
    Err(InputError::NotRegular { file: path.display().to_string(), kind: kind_of(file_type), what })
}

fn kind_of(file_type: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "something other than a file"
    }
}

fn io_error(path: &Path, error: std::io::Error) -> InputError {
    InputError::Io { file: path.display().to_string(), error }
}

fn too_big(path: &Path, size: String, limit: Limit) -> InputError {
    InputError::TooBig { file: path.display().to_string(), size, limit: human_size(limit.bytes), what: limit.what }
}

/// `8 MiB`, `25.3 MiB`, `512 KiB`, `300 B`. Rounded up, so a size just over a whole-unit
/// limit never reads as equal to it.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (name, unit) in UNITS {
        if bytes >= unit {
            if bytes.is_multiple_of(unit) {
                return format!("{} {name}", bytes / unit);
            }
            let tenths = (bytes * 10).div_ceil(unit);
            return format!("{}.{} {name}", tenths / 10, tenths % 10);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Limit = Limit { what: "test file", bytes: 16 };

    #[test]
    fn a_regular_file_under_the_cap_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.json");
        std::fs::write(&path, "[1, 2, 3]").unwrap();
        assert_eq!(read_text(&path, SMALL).unwrap(), "[1, 2, 3]");
        std::fs::write(&path, "x".repeat(16)).unwrap();
        assert_eq!(read_bytes(&path, SMALL).unwrap().len(), 16);
    }

    #[test]
    fn a_file_over_the_cap_is_refused_with_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        std::fs::write(&path, vec![b' '; 25 << 20]).unwrap();
        let err = read_text(&path, MESSAGES).unwrap_err().to_string();
        assert_eq!(err, format!("{}: 25 MiB is over the 8 MiB limit for a messages file", path.display()));
    }

    #[test]
    fn devices_directories_and_fifos_are_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_text(Path::new("/dev/zero"), SMALL).unwrap_err().to_string();
        assert_eq!(err, "/dev/zero: a character device cannot be a test file (only regular files are read)");
        let err = read_text(dir.path(), SMALL).unwrap_err().to_string();
        assert!(err.ends_with(": a directory cannot be a test file (only regular files are read)"), "{err}");
        #[cfg(target_os = "linux")]
        {
            let fifo = dir.path().join("fifo");
            let name = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
            let err = read_text(&fifo, SMALL).unwrap_err().to_string();
            assert!(err.ends_with(": a FIFO (named pipe) cannot be a test file (only regular files are read)"), "{err}");
        }
    }

    #[test]
    fn a_missing_file_says_so_once_and_is_told_apart() {
        let err = read_text(Path::new("/definitely/missing.json"), SMALL).unwrap_err();
        assert!(err.is_not_found());
        assert_eq!(err.to_string(), "/definitely/missing.json: cannot read: No such file or directory (os error 2)");
        assert!(std::error::Error::source(&err).is_none());
    }

    #[test]
    fn text_must_be_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("latin1.txt");
        std::fs::write(&path, [0xe9, 0x74, 0xe9]).unwrap();
        assert_eq!(read_text(&path, SMALL).unwrap_err().to_string(), format!("{}: not UTF-8 text", path.display()));
    }

    #[test]
    fn sizes_read_in_binary_units_rounded_up() {
        let sizes = [0, 300, 1024, 1536, 8 << 20, (8 << 20) + 1, 25 << 20, 3 << 30];
        let shown: Vec<String> = sizes.iter().map(|&b| human_size(b)).collect();
        assert_eq!(shown, ["0 B", "300 B", "1 KiB", "1.5 KiB", "8 MiB", "8.1 MiB", "25 MiB", "3 GiB"]);
    }
}
