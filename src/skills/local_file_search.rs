//! `local_file_search(query, root_dir=".", max_results=10)`: finds a word in file names
//! and in the lines of text files under a workspace folder, ignoring case (Unicode
//! lowercasing, so Chinese and accented text work). Files are visited in sorted path
//! order so the same question always gets the same answer.

use std::ops::ControlFlow;
use std::sync::OnceLock;

use serde_json::{json, Value};

use super::workspace::MAX_WALK_DEPTH;
use super::{args, embedded_manifest, Manifest, Skill, SkillError, Workspace};
use crate::protocol::Args;

const NAME: &str = "local_file_search";
const DEFAULT_MAX_RESULTS: u64 = 10;
const MAX_RESULTS_CAP: u64 = 100;
/// Larger files are logs or data dumps, not documents worth searching line by line.
const MAX_SEARCHED_BYTES: u64 = 1024 * 1024;
const MAX_QUERY_CHARS: usize = 200;
const MAX_SNIPPET_CHARS: usize = 160;
/// Directories that hold build output or dependencies, never the user's documents.
const SKIPPED_DIRS: [&str; 5] = ["target", "node_modules", "__pycache__", "venv", "dist"];

pub struct LocalFileSearch;

/// One match: a file name match has line 0.
#[derive(Clone, Debug, PartialEq)]
struct Hit {
    path: String,
    line: usize,
    snippet: String,
}

impl Skill for LocalFileSearch {
    fn manifest(&self) -> &Manifest {
        static MANIFEST: OnceLock<Manifest> = OnceLock::new();
        MANIFEST.get_or_init(|| embedded_manifest(NAME, include_str!("../../skills/local_file_search.json")))
    }

    fn run(&self, args: &Args, workspace: &Workspace) -> Result<Value, SkillError> {
        call(args, workspace).map_err(|err| err.in_tool(NAME))
    }
}

/// The call itself; [`Skill::run`] names the tool in every error.
fn call(args: &Args, workspace: &Workspace) -> Result<Value, SkillError> {
    let query = args::req_str(args, NAME, "query")?.trim();
    if query.is_empty() {
        return Err(SkillError::new("the query is empty; give a word to search for"));
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(SkillError::new(format!(
            "the query is too long (the limit is {MAX_QUERY_CHARS} characters)"
        )));
    }
    let root_dir = args::opt_str(args, NAME, "root_dir")?.unwrap_or(".");
    let root_dir = if root_dir.trim().is_empty() { "." } else { root_dir };
    let max_results = args::opt_u64(args, NAME, "max_results")?.unwrap_or(DEFAULT_MAX_RESULTS);
    if max_results == 0 {
        return Err(SkillError::new("max_results must be at least 1"));
    }
    let max_results = usize::try_from(max_results.min(MAX_RESULTS_CAP)).unwrap_or(usize::MAX);

    let needle = query.to_lowercase();
    let mut hits = Vec::new();
    let mut truncated = false;
    let skip = |name: &str, is_dir: bool| name.starts_with('.') || (is_dir && SKIPPED_DIRS.contains(&name));
    let walked = workspace
        .walk_files(root_dir, &skip, &mut |file| {
            let mut file_hits = Vec::new();
            if file.name.to_lowercase().contains(&needle) {
                file_hits.push(Hit { path: file.shown.clone(), line: 0, snippet: file.shown.clone() });
            }
            // Binary, huge and non-UTF-8 files are skipped silently: they are not documents.
            if let Ok(text) = file.read_text(MAX_SEARCHED_BYTES) {
                for (index, line) in text.lines().enumerate() {
                    if index % 4096 == 0 {
                        workspace.check_deadline()?;
                    }
                    if line.to_lowercase().contains(&needle) {
                        file_hits.push(Hit { path: file.shown.clone(), line: index + 1, snippet: snippet(line) });
                    }
                }
            }
            for hit in file_hits {
                if hits.len() == max_results {
                    truncated = true;
                    return Ok(ControlFlow::Break(()));
                }
                hits.push(hit);
            }
            Ok(ControlFlow::Continue(()))
        })
        .map_err(|err| match err.0.strip_suffix("is not a directory") {
            Some(_) => SkillError::new(format!("root_dir {}", err.0)),
            None => err,
        })?;

    let mut content = summary(query, &walked.shown, &hits, truncated);
    if walked.too_deep > 0 {
        content.push_str(&format!(
            "
(not searched: {} directories nested deeper than {MAX_WALK_DEPTH} levels)",
            walked.too_deep
        ));
    }
    Ok(json!({
        "query": query,
        "root_dir": walked.shown,
        "matches": hits.iter().map(|h| json!({"path": h.path, "line": h.line, "snippet": h.snippet})).collect::<Vec<_>>(),
        "count": hits.len(),
        "truncated": truncated,
        "content": content,
    }))
}

/// The line trimmed, cut at a character boundary.
fn snippet(line: &str) -> String {
    let line = line.trim();
    if line.chars().count() <= MAX_SNIPPET_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(MAX_SNIPPET_CHARS).collect();
    format!("{cut}…")
}

fn summary(query: &str, root: &str, hits: &[Hit], truncated: bool) -> String {
    let place = if root == "." { "the workspace".to_string() } else { format!("'{root}'") };
    if hits.is_empty() {
        return format!("No matches for '{query}' in {place}.");
    }
    let noun = if hits.len() == 1 { "match" } else { "matches" };
    let more = if truncated { " (more exist; raise max_results to see them)" } else { "" };
    let mut text = format!("{} {noun} for '{query}' in {place}{more}:", hits.len());
    for hit in hits {
        if hit.line == 0 {
            text.push_str(&format!("\n{} (file name)", hit.path));
        } else {
            text.push_str(&format!("\n{}:{}: {}", hit.path, hit.line, hit.snippet));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    /// A small workspace: docs with English and Chinese text, plus things to skip.
    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("ws");
        let files: [(&str, &[u8]); 9] = [
            ("docs/agent_intro.txt", "An AGENT uses tools.\n\n  智能体 Agent 调用工具  \n".as_bytes()),
            ("docs/notes.md", "工具调用让模型能够读取本地文件\nnothing here\n".as_bytes()),
            ("data/sample.csv", "name,city\nagent,北京\n".as_bytes()),
            ("data/blob.bin", b"agent\x00\x01\x02"),
            ("data/latin1.txt", b"agent caf\xe9"),
            (".git/config", b"agent"),
            ("target/debug/out.txt", b"agent"),
            ("node_modules/x/agent.js", b"agent"),
            (".hidden_agent.txt", b"agent"),
        ];
        for (path, bytes) in files {
            let full = root.join(path);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(full, bytes).unwrap();
        }
        fs::write(dir.path().join("outside_agent.txt"), "agent").unwrap();
        let ws = Workspace::new(&root).unwrap();
        (dir, ws)
    }

    fn run(ws: &Workspace, args: Value) -> Result<Value, SkillError> {
        LocalFileSearch.run(args.as_object().unwrap(), ws)
    }

    #[test]
    fn finds_names_and_lines_case_insensitively_in_sorted_order() {
        let (_d, ws) = workspace();
        assert_eq!(
            run(&ws, json!({"query": "Agent"})).unwrap(),
            json!({
                "query": "Agent",
                "root_dir": ".",
                "matches": [
                    {"path": "data/sample.csv", "line": 2, "snippet": "agent,北京"},
                    {"path": "docs/agent_intro.txt", "line": 0, "snippet": "docs/agent_intro.txt"},
                    {"path": "docs/agent_intro.txt", "line": 1, "snippet": "An AGENT uses tools."},
                    {"path": "docs/agent_intro.txt", "line": 3, "snippet": "智能体 Agent 调用工具"},
                ],
                "count": 4,
                "truncated": false,
                "content": "4 matches for 'Agent' in the workspace:\n\
                            data/sample.csv:2: agent,北京\n\
                            docs/agent_intro.txt (file name)\n\
                            docs/agent_intro.txt:1: An AGENT uses tools.\n\
                            docs/agent_intro.txt:3: 智能体 Agent 调用工具",
            })
        );
    }

    #[test]
    fn chinese_queries_work_and_root_dir_narrows_the_search() {
        let (_d, ws) = workspace();
        assert_eq!(
            run(&ws, json!({"query": "工具", "root_dir": "docs"})).unwrap(),
            json!({
                "query": "工具",
                "root_dir": "docs",
                "matches": [
                    {"path": "docs/agent_intro.txt", "line": 3, "snippet": "智能体 Agent 调用工具"},
                    {"path": "docs/notes.md", "line": 1, "snippet": "工具调用让模型能够读取本地文件"},
                ],
                "count": 2,
                "truncated": false,
                "content": "2 matches for '工具' in 'docs':\n\
                            docs/agent_intro.txt:3: 智能体 Agent 调用工具\n\
                            docs/notes.md:1: 工具调用让模型能够读取本地文件",
            })
        );
        let out = run(&ws, json!({"query": "北京", "root_dir": "docs"})).unwrap();
        assert_eq!(out["content"], "No matches for '北京' in 'docs'.");
        assert_eq!(out["matches"], json!([]));
    }

    #[test]
    fn max_results_stops_early_and_says_so() {
        let (_d, ws) = workspace();
        let out = run(&ws, json!({"query": "agent", "max_results": 2})).unwrap();
        assert_eq!(out["count"], 2);
        assert_eq!(out["truncated"], true);
        assert_eq!(
            out["content"],
            "2 matches for 'agent' in the workspace (more exist; raise max_results to see them):\n\
             data/sample.csv:2: agent,北京\n\
             docs/agent_intro.txt (file name)"
        );
    }

    #[test]
    fn long_lines_are_cut_at_a_character_boundary() {
        let (_d, ws) = workspace();
        let long = format!("关键词{}", "长".repeat(300));
        fs::write(ws.root.join("docs/long.txt"), &long).unwrap();
        let out = run(&ws, json!({"query": "关键词", "root_dir": "docs"})).unwrap();
        let snippet = out["matches"][0]["snippet"].as_str().unwrap();
        assert_eq!(snippet, format!("{}…", long.chars().take(160).collect::<String>()));
    }

    #[test]
    fn huge_files_are_skipped() {
        let (_d, ws) = workspace();
        let mut big = "needle\n".to_string();
        big.push_str(&"x".repeat(1024 * 1024));
        fs::write(ws.root.join("docs/big.log"), big).unwrap();
        fs::write(ws.root.join("docs/small.txt"), "needle").unwrap();
        let out = run(&ws, json!({"query": "NEEDLE"})).unwrap();
        assert_eq!(out["matches"], json!([{"path": "docs/small.txt", "line": 1, "snippet": "needle"}]));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_not_followed_out_of_the_workspace() {
        let (dir, ws) = workspace();
        std::os::unix::fs::symlink(dir.path(), ws.root.join("up")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("outside_agent.txt"), ws.root.join("docs/z_link.txt"))
            .unwrap();
        let out = run(&ws, json!({"query": "outside"})).unwrap();
        assert_eq!(out["matches"], json!([]));
    }

    #[test]
    fn hostile_arguments_are_errors() {
        let (_d, ws) = workspace();
        let cases = [
            (json!({"query": "  "}), "local_file_search: the query is empty; give a word to search for"),
            (json!({"query": "x".repeat(201)}), "local_file_search: the query is too long (the limit is 200 characters)"),
            (json!({"query": "a", "max_results": 0}), "local_file_search: max_results must be at least 1"),
            (json!({"query": "a", "root_dir": "../"}), "local_file_search: path '../' is outside the workspace; use a path inside it (relative paths start at the workspace root)"),
            (json!({"query": "a", "root_dir": "/"}), "local_file_search: path '/' is outside the workspace; use a path inside it (relative paths start at the workspace root)"),
            (json!({"query": "a", "root_dir": "nope"}), "local_file_search: 'nope' does not exist in the workspace"),
            (json!({"query": "a", "root_dir": "data/sample.csv"}), "local_file_search: root_dir 'data/sample.csv' is not a directory"),
            (json!({"query": "a", "max_results": "5"}), "local_file_search: argument 'max_results' must be a non-negative integer, got \"5\""),
        ];
        for (args, expected) in cases {
            assert_eq!(run(&ws, args.clone()), Err(SkillError::new(expected)), "{args}");
        }
    }
}
