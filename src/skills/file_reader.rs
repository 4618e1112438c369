//! `file_reader(path, max_chars=2000)`: the text of a workspace file, cut at a character
//! (not byte) count so Chinese text is never split inside a character.

use std::sync::OnceLock;

use serde_json::{json, Value};

use super::{args, embedded_manifest, Manifest, Skill, SkillError, Workspace};
use crate::protocol::Args;

const NAME: &str = "file_reader";
const DEFAULT_MAX_CHARS: u64 = 2000;
/// More than this would flood a small model's context anyway.
const MAX_CHARS_CAP: u64 = 100_000;

pub struct FileReader;

impl Skill for FileReader {
    fn manifest(&self) -> &Manifest {
        static MANIFEST: OnceLock<Manifest> = OnceLock::new();
        MANIFEST.get_or_init(|| embedded_manifest(NAME, include_str!("../../skills/file_reader.json")))
    }

    fn run(&self, args: &Args, workspace: &Workspace) -> Result<Value, SkillError> {
        call(args, workspace).map_err(|err| err.in_tool(NAME))
    }
}

/// The call itself; [`Skill::run`] names the tool in every error.
fn call(args: &Args, workspace: &Workspace) -> Result<Value, SkillError> {
    let path = args::req_str(args, NAME, "path")?;
    let max_chars = args::opt_u64(args, NAME, "max_chars")?.unwrap_or(DEFAULT_MAX_CHARS);
    if max_chars == 0 {
        return Err(SkillError::new("max_chars must be at least 1"));
    }
    let max_chars = usize::try_from(max_chars.min(MAX_CHARS_CAP)).unwrap_or(usize::MAX);
    let file = workspace.read_text(path)?;
    let total_chars = file.text.chars().count();
    let truncated = total_chars > max_chars;
    let content: String = if truncated { file.text.chars().take(max_chars).collect() } else { file.text };
    Ok(json!({
        "path": file.shown,
        "content": content,
        "truncated": truncated,
        "total_chars": total_chars,
    }))
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn run(ws: &Workspace, args: Value) -> Result<Value, SkillError> {
        FileReader.run(args.as_object().unwrap(), ws)
    }

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("ws/docs")).unwrap();
        fs::write(
            dir.path().join("ws/docs/agent_intro.txt"),
            "Agent 系统由模型、工具、记忆组成。\nTools help.\n",
        )
        .unwrap();
        fs::write(dir.path().join("outside.txt"), "secret").unwrap();
        let ws = Workspace::new(dir.path().join("ws")).unwrap();
        (dir, ws)
    }

    #[test]
    fn reads_a_whole_file() {
        let (_d, ws) = workspace();
        assert_eq!(
            run(&ws, json!({"path": "docs/agent_intro.txt"})).unwrap(),
            json!({
                "path": "docs/agent_intro.txt",
                "content": "Agent 系统由模型、工具、记忆组成。\nTools help.\n",
                "truncated": false,
                "total_chars": 33,
            })
        );
    }

    #[test]
    fn truncates_by_characters_not_bytes() {
        let (_d, ws) = workspace();
        assert_eq!(
            run(&ws, json!({"path": "docs/agent_intro.txt", "max_chars": 9})).unwrap(),
            json!({"path": "docs/agent_intro.txt", "content": "Agent 系统由", "truncated": true, "total_chars": 33})
        );
        // Exactly the length is not truncation; a float that is an integer is accepted.
        let out = run(&ws, json!({"path": "docs/agent_intro.txt", "max_chars": 33.0})).unwrap();
        assert_eq!(out["truncated"], false);
        // Huge limits are capped, not an error.
        let out = run(&ws, json!({"path": "docs/agent_intro.txt", "max_chars": 10_000_000_000u64})).unwrap();
        assert_eq!(out["truncated"], false);
    }

    #[test]
    fn hostile_paths_and_arguments_are_errors() {
        let (dir, ws) = workspace();
        fs::write(ws.root.join("img.png"), b"\x89PNG\r\n\x1a\n\x00\x00").unwrap();
        fs::write(ws.root.join("gbk.txt"), b"\xc4\xe3\xba\xc3").unwrap();
        fs::write(ws.root.join("big.txt"), vec![b'x'; 3 * 1024 * 1024]).unwrap();
        let outside = dir.path().join("outside.txt");
        let cases = [
            (json!({"path": "../outside.txt"}), "file_reader: path '../outside.txt' is outside the workspace; use a path inside it (relative paths start at the workspace root)".to_string()),
            (json!({"path": outside.to_str().unwrap()}), format!("file_reader: path '{}' is outside the workspace; use a path inside it (relative paths start at the workspace root)", outside.display())),
            (json!({"path": "img.png"}), "file_reader: 'img.png' looks like a binary file (it contains NUL bytes); only text files can be read".to_string()),
            (json!({"path": "gbk.txt"}), "file_reader: 'gbk.txt' is not valid UTF-8 text (bad byte at offset 0)".to_string()),
            (json!({"path": "big.txt"}), "file_reader: 'big.txt' is too large (3072 KiB; the limit is 2048 KiB)".to_string()),
            (json!({"path": "docs"}), "file_reader: 'docs' is a directory, not a file".to_string()),
            (json!({"path": "docs/missing.txt"}), "file_reader: 'docs/missing.txt' does not exist in the workspace".to_string()),
            (json!({"path": "docs/agent_intro.txt", "max_chars": 0}), "file_reader: max_chars must be at least 1".to_string()),
            (json!({"path": "docs/agent_intro.txt", "max_chars": -5}), "file_reader: argument 'max_chars' must be a non-negative integer, got -5".to_string()),
            (json!({"path": 42}), "file_reader: argument 'path' must be a string, got 42".to_string()),
            (json!({}), "file_reader: missing required argument 'path'".to_string()),
        ];
        for (args, expected) in cases {
            assert_eq!(run(&ws, args.clone()), Err(SkillError::new(expected)), "{args}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_pointing_outside_is_refused() {
        let (dir, ws) = workspace();
        std::os::unix::fs::symlink(dir.path().join("outside.txt"), ws.root.join("docs/link.txt")).unwrap();
        assert_eq!(
            run(&ws, json!({"path": "docs/link.txt"})),
            Err(SkillError::new(
                "file_reader: path 'docs/link.txt' leads outside the workspace through a symbolic link; access refused"
            ))
        );
    }
}
