//! The conversation bench's report: per setting, the share of questions answered right
//! (overall, per language, per category), whole conversations right, the mean time per
//! question; every record with its answer and tools; `report.md` and the console table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::run::{ChatPlan, ChatRun, QuestionRecord};
use super::set::Lang;
use crate::bench::report::ReportMeta;

/// How many passed out of how many.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Tally {
    pub total: usize,
    pub passed: usize,
    /// `passed / total`; none when there were none.
    pub accuracy: Option<f64>,
}

impl Tally {
    fn new(total: usize, passed: usize) -> Self {
        Self { total, passed, accuracy: (total > 0).then(|| passed as f64 / total as f64) }
    }

    fn of<'a>(records: impl IntoIterator<Item = &'a QuestionRecord>) -> Self {
        let (mut total, mut passed) = (0, 0);
        for record in records {
            total += 1;
            passed += usize::from(record.passed);
        }
        Self::new(total, passed)
    }

    /// `87.5% (28/32)`, or `–` for none.
    pub fn cell(&self) -> String {
        match self.accuracy {
            Some(a) => format!("{:.1}% ({}/{})", a * 100.0, self.passed, self.total),
            None => "–".into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CategoryTally {
    pub category: String,
    pub stats: Tally,
}

/// One setting's figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SettingSummary {
    pub setting: String,
    pub profile: String,
    pub tool_calling: String,
    pub decoding: String,
    /// Questions answered right.
    pub overall: Tally,
    /// Per language (`en`, `zh`).
    pub languages: BTreeMap<String, Tally>,
    pub categories: Vec<CategoryTally>,
    /// Conversations all of whose questions were answered right (complete ones only).
    pub conversations: Tally,
    /// Mean wall time of a question, tools included.
    pub mean_latency_ms: Option<f64>,
    /// Mean decisions per question.
    pub mean_decisions: Option<f64>,
    pub tool_calls: usize,
    pub failed_tool_calls: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChatReport {
    #[serde(flatten)]
    pub meta: ReportMeta,
    /// The questions file.
    pub set: String,
    pub workspace: String,
    /// `mock`, `prompt_json` or `plan_execute`, as `--mode` said.
    pub bench_mode: String,
    /// The agent loop: `react` or `plan_execute`.
    pub agent_mode: String,
    pub conversations: usize,
    /// Questions asked per setting.
    pub questions: usize,
    pub planned: usize,
    pub completed: usize,
    pub interrupted: bool,
    pub settings: Vec<SettingSummary>,
    pub records: Vec<QuestionRecord>,
}

pub fn build_report(plan: &ChatPlan, run: &ChatRun, meta: ReportMeta, bench_mode: &str) -> ChatReport {
    let mut categories: Vec<&str> = Vec::new();
    for conversation in &plan.set.conversations {
        if !categories.contains(&conversation.category.as_str()) {
            categories.push(&conversation.category);
        }
    }
    let settings = plan
        .settings
        .iter()
        .map(|setting| {
            let records: Vec<&QuestionRecord> = run.records.iter().filter(|r| r.setting == setting.name).collect();
            let languages = Lang::ALL
                .iter()
                .map(|lang| (lang.as_str().to_string(), Tally::of(records.iter().copied().filter(|r| r.lang == *lang))))
                .collect();
            let categories = categories
                .iter()
                .map(|c| CategoryTally { category: c.to_string(), stats: Tally::of(records.iter().copied().filter(|r| r.category == *c)) })
                .collect();
            let mean = |value: fn(&QuestionRecord) -> f64| {
                (!records.is_empty()).then(|| records.iter().map(|r| value(r)).sum::<f64>() / records.len() as f64)
            };
            let calls = records.iter().flat_map(|r| &r.tools);
            SettingSummary {
                setting: setting.name.clone(),
                profile: setting.profile.name.clone(),
                tool_calling: setting.tool_calling.as_str().into(),
                decoding: setting.decoding.as_str().into(),
                overall: Tally::of(records.iter().copied()),
                languages,
                categories,
                conversations: conversations_passed(plan, &records),
                mean_latency_ms: mean(|r| r.latency_ms),
                mean_decisions: mean(|r| r.decisions as f64),
                tool_calls: calls.clone().count(),
                failed_tool_calls: calls.filter(|c| !c.ok).count(),
            }
        })
        .collect();
    ChatReport {
        meta,
        set: plan.set.source.clone(),
        workspace: plan.set.workspace.display().to_string(),
        bench_mode: bench_mode.into(),
        agent_mode: plan.mode.as_str().into(),
        conversations: plan.set.conversations.len(),
        questions: plan.set.questions(),
        planned: plan.questions(),
        completed: run.records.len(),
        interrupted: run.interrupted,
        settings,
        records: run.records.clone(),
    }
}

/// Complete conversations of one setting, and how many had every question right.
fn conversations_passed(plan: &ChatPlan, records: &[&QuestionRecord]) -> Tally {
    let (mut total, mut passed) = (0, 0);
    for conversation in &plan.set.conversations {
        let turns: Vec<&&QuestionRecord> = records.iter().filter(|r| r.conversation == conversation.id).collect();
        if turns.len() == conversation.turns.len() {
            total += 1;
            passed += usize::from(turns.iter().all(|r| r.passed));
        }
    }
    Tally::new(total, passed)
}

fn seconds(ms: Option<f64>) -> String {
    ms.map_or("–".into(), |ms| format!("{:.1} s", ms / 1e3))
}

/// The console summary: one line per setting.
pub fn render_table(report: &ChatReport) -> String {
    let header = ["setting", "accuracy", "en", "zh", "conversations", "time/question"];
    let rows: Vec<[String; 6]> = report
        .settings
        .iter()
        .map(|s| {
            let lang = |l: &str| s.languages.get(l).map_or("–".into(), Tally::cell);
            [s.setting.clone(), s.overall.cell(), lang("en"), lang("zh"), s.conversations.cell(), seconds(s.mean_latency_ms)]
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).chain([header[i].len()]).max().unwrap_or(0))
        .collect();
    let line = |cells: Vec<&str>| {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}", w = *w)).collect();
        padded.join("  ").trim_end().to_string() + "\n"
    };
    let mut out = line(header.to_vec());
    for row in &rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

/// One line for a table cell: `|` escaped, line breaks as spaces, at most `max` characters.
fn cell(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|");
    match one_line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

pub fn render_markdown(report: &ChatReport) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Conversation bench\n");
    let _ = writeln!(md, "- set: `{}` ({} conversations, {} questions), workspace `{}`", report.set, report.conversations, report.questions, report.workspace);
    let _ = writeln!(md, "- mode: {} (agent loop: {})", report.bench_mode, report.agent_mode);
    let _ = writeln!(md, "- command: `{}`", report.meta.command);
    let _ = writeln!(md, "- run: {} – {}", report.meta.started_at, report.meta.finished_at);
    if report.interrupted {
        let _ = writeln!(md, "- **interrupted**: {} of {} questions answered", report.completed, report.planned);
    }
    let _ = writeln!(md, "\n## Summary\n");
    let _ = writeln!(md, "| setting | accuracy | en | zh | conversations | time / question | decisions / question | tool calls (failed) |");
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    for s in &report.settings {
        let lang = |l: &str| s.languages.get(l).map_or("–".into(), Tally::cell);
        let decisions = s.mean_decisions.map_or("–".into(), |d| format!("{d:.1}"));
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {decisions} | {} ({}) |",
            s.setting,
            s.overall.cell(),
            lang("en"),
            lang("zh"),
            s.conversations.cell(),
            seconds(s.mean_latency_ms),
            s.tool_calls,
            s.failed_tool_calls
        );
    }
    let names: Vec<&str> = report.settings.iter().map(|s| s.setting.as_str()).collect();
    let _ = writeln!(md, "\n## By category\n");
    let _ = writeln!(md, "| category | {} |", names.join(" | "));
    let _ = writeln!(md, "|---|{}", "---|".repeat(names.len()));
    let categories = report.settings.first().map(|s| s.categories.iter().map(|c| c.category.as_str()).collect::<Vec<_>>()).unwrap_or_default();
    for category in categories {
        let cells: Vec<String> = report
            .settings
            .iter()
            .map(|s| s.categories.iter().find(|c| c.category == category).map_or("–".into(), |c| c.stats.cell()))
            .collect();
        let _ = writeln!(md, "| {category} | {} |", cells.join(" | "));
    }
    let _ = writeln!(md, "\n## Questions\n");
    let _ = writeln!(md, "| conversation | turn | lang | question | {} |", names.join(" | "));
    let _ = writeln!(md, "|---|---|---|---|{}", "---|".repeat(names.len()));
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for record in &report.records {
        let key = (record.conversation.as_str(), record.turn);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let marks: Vec<&str> = names
            .iter()
            .map(|n| match report.records.iter().find(|r| r.setting == *n && (r.conversation.as_str(), r.turn) == key) {
                Some(r) if r.passed => "✓",
                Some(_) => "✗",
                None => "–",
            })
            .collect();
        let _ = writeln!(md, "| {} | {} | {} | {} | {} |", record.conversation, record.turn, record.lang.as_str(), cell(&record.question, 80), marks.join(" | "));
    }
    let failures: Vec<&QuestionRecord> = report.records.iter().filter(|r| !r.passed).collect();
    let _ = writeln!(md, "\n## Failures ({})\n", failures.len());
    for r in failures {
        let _ = writeln!(md, "### {} · {} · turn {}\n", r.setting, r.conversation, r.turn);
        let _ = writeln!(md, "- question: {}", cell(&r.question, 300));
        let _ = writeln!(md, "- why: {}", r.reasons.join("; "));
        let tools: Vec<String> = r.tools.iter().map(|t| format!("`{}({})`{}", t.name, t.args, if t.ok { "" } else { " failed" })).collect();
        let _ = writeln!(md, "- tools: {}", if tools.is_empty() { "none".into() } else { tools.join(", ") });
        let _ = writeln!(md, "- stop: {}, {} decisions, {}", r.stop_reason.describe(), r.decisions, seconds(Some(r.latency_ms)));
        for error in &r.errors {
            let _ = writeln!(md, "- error: {}", cell(error, 300));
        }
        match &r.answer {
            Some(answer) => {
                let _ = writeln!(md, "- answer:\n");
                for line in answer.lines() {
                    let _ = writeln!(md, "  > {line}");
                }
            }
            None => {
                let _ = writeln!(md, "- answer: none");
            }
        }
        md.push('\n');
    }
    md
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::bench::conversations::run::ToolUse;
    use crate::bench::conversations::set::{Conversation, ConversationSet, Turn};
    use crate::bench::Setting;
    use crate::brain::{Backend, Decoding, Exclusivity, Profile};
    use crate::protocol::{AgentMode, StopReason, ToolCalling};

    fn turn() -> Turn {
        Turn { question: "q".into(), must_contain: vec![vec!["a".into()]], must_not_contain: vec![], tools_used: vec![], no_tools: false, evidence: vec![] }
    }

    fn plan() -> ChatPlan {
        let conv = |id: &str, lang, category: &str, turns| Conversation { id: id.into(), lang, category: category.into(), turns: vec![turn(); turns] };
        let profile = Profile { name: "mock".into(), backend: Backend::Mock, ..Profile::default() };
        ChatPlan {
            set: ConversationSet {
                source: "q.json".into(),
                workspace: PathBuf::from("ws"),
                conversations: vec![conv("a", Lang::En, "calc", 1), conv("b", Lang::Zh, "follow_up", 2), conv("c", Lang::Zh, "calc", 1)],
            },
            settings: vec![
                Setting::new(profile.clone(), ToolCalling::PromptJson, Decoding::Free),
                Setting::new(profile, ToolCalling::Builtin, Decoding::Free),
            ],
            mode: AgentMode::React,
            max_turns: 6,
            exclusivity: Exclusivity::default(),
            tool_timeout: Duration::from_secs(1),
        }
    }

    fn record(setting: &str, conversation: &str, turn: usize, lang: Lang, category: &str, passed: bool, ms: f64) -> QuestionRecord {
        QuestionRecord {
            setting: setting.into(),
            conversation: conversation.into(),
            turn,
            lang,
            category: category.into(),
            question: "What | is\nit?".into(),
            answer: Some("line one\nline two".into()),
            stop_reason: StopReason::FinalAnswer,
            tools: vec![ToolUse { name: "calculator".into(), args: json!({"expression": "1+1"}), ok: passed }],
            errors: vec![],
            passed,
            reasons: if passed { vec![] } else { vec!["missing \"a\"".into()] },
            latency_ms: ms,
            decisions: 2,
        }
    }

    fn run() -> ChatRun {
        let p = "mock-prompt_json-free";
        let b = "mock-builtin-free";
        ChatRun {
            records: vec![
                record(p, "a", 1, Lang::En, "calc", true, 1000.0),
                record(p, "b", 1, Lang::Zh, "follow_up", true, 2000.0),
                record(p, "b", 2, Lang::Zh, "follow_up", false, 3000.0),
                record(p, "c", 1, Lang::Zh, "calc", true, 2000.0),
                record(b, "a", 1, Lang::En, "calc", false, 500.0),
            ],
            interrupted: true,
        }
    }

    #[test]
    fn tallies_count_questions_languages_categories_and_whole_conversations() {
        let report = build_report(&plan(), &run(), ReportMeta::default(), "mock");
        assert_eq!((report.conversations, report.questions, report.planned, report.completed), (3, 4, 8, 5));
        let first = &report.settings[0];
        assert_eq!(first.overall, Tally::new(4, 3));
        assert_eq!(first.languages["en"], Tally::new(1, 1));
        assert_eq!(first.languages["zh"], Tally::new(3, 2));
        let categories: Vec<(&str, usize, usize)> = first.categories.iter().map(|c| (c.category.as_str(), c.stats.total, c.stats.passed)).collect();
        assert_eq!(categories, [("calc", 2, 2), ("follow_up", 2, 1)]);
        assert_eq!(first.conversations, Tally::new(3, 2));
        assert_eq!((first.mean_latency_ms, first.mean_decisions, first.tool_calls, first.failed_tool_calls), (Some(2000.0), Some(2.0), 4, 1));
        // Interrupted after one question: only complete conversations count.
        let second = &report.settings[1];
        assert_eq!((second.overall.cell(), second.conversations.cell()), ("0.0% (0/1)".to_string(), "0.0% (0/1)".to_string()));
        assert_eq!(second.languages["zh"], Tally { total: 0, passed: 0, accuracy: None });
    }

    #[test]
    fn the_table_and_markdown_show_every_setting_question_and_failure() {
        let report = build_report(&plan(), &run(), ReportMeta::default(), "mock");
        let table = render_table(&report);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "setting                accuracy     en            zh           conversations  time/question");
        assert_eq!(lines[1], "mock-prompt_json-free  75.0% (3/4)  100.0% (1/1)  66.7% (2/3)  66.7% (2/3)    2.0 s");
        assert_eq!(lines[2], "mock-builtin-free      0.0% (0/1)   0.0% (0/1)    –            0.0% (0/1)     0.5 s");
        let md = render_markdown(&report);
        assert!(md.contains("| b | 2 | zh | What \\| is it? | ✗ | – |"), "{md}");
        assert!(md.contains("| a | 1 | en | What \\| is it? | ✓ | ✗ |"), "{md}");
        assert!(md.contains("| follow_up | 50.0% (1/2) | – |"), "{md}");
        assert!(md.contains("## Failures (2)"), "{md}");
        assert!(md.contains("### mock-prompt_json-free · b · turn 2\n\n- question: What \\| is it?\n- why: missing \"a\"\n- tools: `calculator({\"expression\":\"1+1\"})` failed\n"), "{md}");
        assert!(md.contains("  > line one\n  > line two\n"), "{md}");
        assert!(md.contains("**interrupted**: 5 of 8 questions answered"), "{md}");
    }
}
