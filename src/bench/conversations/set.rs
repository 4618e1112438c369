//! A conversation set: `questions.json` and the workspace folder it names.
//!
//! ```json
//! {"workspace": "workspace",
//!  "conversations": [
//!    {"id": "en_calc", "lang": "en", "category": "calc",
//!     "turns": [{"question": "What is (17 + 25) * 3 - 4?",
//!                "must_contain": [["122"]], "must_not_contain": ["88"],
//!                "tools_used": ["calculator"], "evidence": [{"calc": "(17 + 25) * 3 - 4"}]}]}]}
//! ```
//!
//! `workspace` is relative to the file. A conversation's turns are asked one after the
//! other in the same transcript. Each turn's `must_contain` is a list of groups, each a
//! list of alternatives: every group must match (see [`super::score`]). `evidence` says,
//! group by group, where the expected value comes from (a file, a calculation, a table);
//! the runner ignores it and `tests/bench_conversations.rs` checks it against the
//! workspace, so an expected value cannot drift from the files.
//!
//! A set is refused, with the conversation and turn named, when a turn could not be
//! scored fairly: no expectation, an empty group, an unknown tool name, `no_tools` next to
//! `tools_used`, or a question that passes its own `must_contain` (an answer that only
//! restates the question would pass).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::score;
use crate::bench::BenchError;

/// The language a conversation is asked in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The language's name in English (`Chinese`).
    pub fn name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Zh => "Chinese",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }
}

/// One question of a conversation and what its final answer must show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    pub question: String,
    /// Groups of alternatives: every group must be matched by one of its alternatives.
    pub must_contain: Vec<Vec<String>>,
    /// None of these may appear.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub must_not_contain: Vec<String>,
    /// Tools that must have been called while answering this question.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools_used: Vec<String>,
    /// The question needs no tool: any call fails it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_tools: bool,
    /// Where each `must_contain` group comes from, one per group (checked by the tests).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
}

/// Where an expected value comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Evidence {
    /// An alternative appears in this workspace file.
    File(String),
    /// An alternative is the value of this expression.
    Calc(String),
    /// An alternative is this table computation's result; with `group_by`, the name or the
    /// value of the group with the largest result.
    Table(TableEvidence),
    /// An alternative appears in this file converted to the given format.
    Convert(ConvertEvidence),
    /// An alternative is part of the path of a file whose name or text has this word.
    Search(String),
    /// General knowledge or conversational behaviour: nothing in the workspace.
    Knowledge(String),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableEvidence {
    pub path: String,
    pub op: TableOp,
    #[serde(default)]
    pub column: Option<String>,
    #[serde(default)]
    pub group_by: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TableOp {
    Sum,
    Mean,
    /// The number of data rows.
    Rows,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConvertEvidence {
    pub path: String,
    pub to: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversation {
    pub id: String,
    pub lang: Lang,
    /// What kind of request it is (`read`, `calc`, `follow_up`, ...), for the report.
    #[serde(default = "uncategorized")]
    pub category: String,
    pub turns: Vec<Turn>,
}

fn uncategorized() -> String {
    "uncategorized".into()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetFile {
    workspace: PathBuf,
    conversations: Vec<Conversation>,
}

/// A loaded and checked set.
#[derive(Clone, Debug, PartialEq)]
pub struct ConversationSet {
    /// The file it came from, as given.
    pub source: String,
    /// The workspace folder, resolved against the file's folder.
    pub workspace: PathBuf,
    pub conversations: Vec<Conversation>,
}

impl ConversationSet {
    pub fn questions(&self) -> usize {
        self.conversations.iter().map(|c| c.turns.len()).sum()
    }

    /// The conversations named by `ids` (all when empty), in the set's order, then the
    /// first `limit`.
    pub fn select(mut self, ids: &[String], limit: Option<usize>) -> Result<Self, BenchError> {
        if let Some(missing) = ids.iter().find(|id| !self.conversations.iter().any(|c| &c.id == *id)) {
            let mut available: Vec<&str> = self.conversations.iter().map(|c| c.id.as_str()).take(20).collect();
            if self.conversations.len() > 20 {
                available.push("...");
            }
            return Err(BenchError::UnknownId { id: missing.clone(), available: available.join(", ") });
        }
        if !ids.is_empty() {
            self.conversations.retain(|c| ids.contains(&c.id));
        }
        if let Some(limit) = limit {
            self.conversations.truncate(limit);
        }
        if self.conversations.is_empty() {
            return Err(BenchError::NoCases);
        }
        Ok(self)
    }
}

/// Reads and checks a set; `tools` are the names a turn's `tools_used` may give.
pub fn load(path: &Path, tools: &[String]) -> Result<ConversationSet, BenchError> {
    let file = path.display().to_string();
    let text = crate::input::read_text(path, crate::input::BENCH_CASE)?;
    let parsed: SetFile = serde_json::from_str(&text).map_err(|source| BenchError::Json { file: file.clone(), source })?;
    let case = |reason: String| BenchError::Case { file: file.clone(), reason };
    check(&parsed.conversations, tools).map_err(case)?;
    let workspace = path.parent().unwrap_or(Path::new("")).join(&parsed.workspace);
    if !workspace.is_dir() {
        return Err(case(format!("workspace {} is not a folder", workspace.display())));
    }
    Ok(ConversationSet { source: file, workspace, conversations: parsed.conversations })
}

/// The first reason the conversations cannot be scored fairly.
fn check(conversations: &[Conversation], tools: &[String]) -> Result<(), String> {
    if conversations.is_empty() {
        return Err("no conversations".into());
    }
    let mut ids = BTreeSet::new();
    for (index, conversation) in conversations.iter().enumerate() {
        let id = conversation.id.trim();
        if id.is_empty() {
            return Err(format!("conversation {}: the id is empty", index + 1));
        }
        if !ids.insert(id) {
            return Err(format!("conversation id {id:?} appears twice"));
        }
        if conversation.turns.is_empty() {
            return Err(format!("conversation {id}: no turns"));
        }
        for (t, turn) in conversation.turns.iter().enumerate() {
            check_turn(turn, tools).map_err(|reason| format!("conversation {id}, turn {}: {reason}", t + 1))?;
        }
    }
    Ok(())
}

fn check_turn(turn: &Turn, tools: &[String]) -> Result<(), String> {
    if turn.question.trim().is_empty() {
        return Err("the question is empty".into());
    }
    if turn.must_contain.is_empty() {
        return Err("must_contain is empty: give at least one group of expected alternatives".into());
    }
    for (g, group) in turn.must_contain.iter().enumerate() {
        if group.is_empty() {
            return Err(format!("must_contain group {} is empty", g + 1));
        }
        if group.iter().any(|alt| alt.trim().is_empty()) {
            return Err(format!("must_contain group {} has an empty alternative", g + 1));
        }
    }
    if turn.must_not_contain.iter().any(|alt| alt.trim().is_empty()) {
        return Err("must_not_contain has an empty entry".into());
    }
    if let Some(unknown) = turn.tools_used.iter().find(|name| !tools.contains(name)) {
        return Err(format!("tools_used names {unknown:?}, which is not a tool (tools: {})", tools.join(", ")));
    }
    if turn.no_tools && !turn.tools_used.is_empty() {
        return Err("no_tools is true but tools_used names tools".into());
    }
    if !turn.evidence.is_empty() && turn.evidence.len() != turn.must_contain.len() {
        return Err(format!(
            "evidence has {} entries for {} must_contain groups (give one per group)",
            turn.evidence.len(),
            turn.must_contain.len()
        ));
    }
    if score::text_passes(turn, &turn.question) {
        return Err("the question itself matches every must_contain group, so an answer that restates it would pass".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tools() -> Vec<String> {
        ["file_reader", "calculator"].map(String::from).to_vec()
    }

    /// Writes a set with one conversation built from `turn` and loads it.
    fn load_turn(turn: serde_json::Value) -> Result<ConversationSet, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        let set = json!({"workspace": "ws", "conversations": [{"id": "c1", "lang": "en", "turns": [turn]}]});
        let path = dir.path().join("q.json");
        std::fs::write(&path, set.to_string()).unwrap();
        load(&path, &tools()).map_err(|e| e.to_string().replace(&path.display().to_string(), "q.json"))
    }

    #[test]
    fn a_good_set_loads_with_its_workspace_resolved_next_to_it() {
        let set = load_turn(json!({"question": "What is 2 + 3?", "must_contain": [["5", "five"]], "tools_used": ["calculator"]})).unwrap();
        assert!(set.workspace.ends_with("ws"));
        assert_eq!(set.questions(), 1);
        let turn = &set.conversations[0].turns[0];
        assert_eq!(turn.must_contain, vec![vec!["5".to_string(), "five".to_string()]]);
        assert_eq!(set.conversations[0].category, "uncategorized");
        assert_eq!(set.conversations[0].lang, Lang::En);
    }

    #[test]
    fn turns_that_cannot_be_scored_fairly_are_refused_with_their_place() {
        let cases = [
            (json!({"question": "q?", "must_contain": []}), "must_contain is empty: give at least one group of expected alternatives"),
            (json!({"question": "q?", "must_contain": [["a"], []]}), "must_contain group 2 is empty"),
            (json!({"question": "q?", "must_contain": [[" "]]}), "must_contain group 1 has an empty alternative"),
            (json!({"question": " ", "must_contain": [["a"]]}), "the question is empty"),
            (
                json!({"question": "q?", "must_contain": [["a"]], "tools_used": ["search"]}),
                "tools_used names \"search\", which is not a tool (tools: file_reader, calculator)",
            ),
            (json!({"question": "q?", "must_contain": [["a"]], "tools_used": ["calculator"], "no_tools": true}), "no_tools is true but tools_used names tools"),
            (
                json!({"question": "q?", "must_contain": [["a"], ["b"]], "evidence": [{"calc": "1+1"}]}),
                "evidence has 1 entries for 2 must_contain groups (give one per group)",
            ),
            (
                json!({"question": "Compute 12*12 = 144", "must_contain": [["144"]]}),
                "the question itself matches every must_contain group, so an answer that restates it would pass",
            ),
        ];
        for (turn, reason) in cases {
            assert_eq!(load_turn(turn).unwrap_err(), format!("q.json: conversation c1, turn 1: {reason}"));
        }
    }

    #[test]
    fn unknown_fields_and_languages_are_json_errors_naming_the_file() {
        let err = load_turn(json!({"question": "q?", "must_contian": [["a"]]})).unwrap_err();
        assert!(err.starts_with("q.json: not valid JSON: unknown field `must_contian`"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.json");
        std::fs::write(&path, r#"{"workspace": ".", "conversations": [{"id": "a", "lang": "fr", "turns": []}]}"#).unwrap();
        let err = load(&path, &tools()).unwrap_err().to_string();
        assert!(err.contains("unknown variant `fr`, expected `en` or `zh`"), "{err}");
    }

    #[test]
    fn duplicate_ids_and_a_missing_workspace_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.json");
        let turn = json!({"question": "q?", "must_contain": [["a"]]});
        let conv = json!({"id": "x", "lang": "zh", "turns": [turn]});
        std::fs::write(&path, json!({"workspace": ".", "conversations": [conv, conv]}).to_string()).unwrap();
        assert!(load(&path, &tools()).unwrap_err().to_string().ends_with(": conversation id \"x\" appears twice"));
        std::fs::write(&path, json!({"workspace": "nope", "conversations": [conv]}).to_string()).unwrap();
        let err = load(&path, &tools()).unwrap_err().to_string();
        assert!(err.ends_with(&format!("workspace {} is not a folder", dir.path().join("nope").display())), "{err}");
    }

    #[test]
    fn select_keeps_the_sets_order_and_names_unknown_ids() {
        let turn = Turn { question: "q".into(), must_contain: vec![vec!["a".into()]], must_not_contain: vec![], tools_used: vec![], no_tools: false, evidence: vec![] };
        let conv = |id: &str| Conversation { id: id.into(), lang: Lang::En, category: "c".into(), turns: vec![turn.clone()] };
        let set = ConversationSet { source: "q.json".into(), workspace: PathBuf::from("ws"), conversations: vec![conv("a"), conv("b"), conv("c")] };
        let picked = set.clone().select(&["c".into(), "a".into()], None).unwrap();
        assert_eq!(picked.conversations.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["a", "c"]);
        assert_eq!(set.clone().select(&[], Some(2)).unwrap().conversations.len(), 2);
        assert_eq!(set.select(&["z".into()], None).unwrap_err().to_string(), "unknown case id \"z\" (available: a, b, c)");
    }
}
