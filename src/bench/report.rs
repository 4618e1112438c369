//! The numbers of a run and their three renderings: `report.json` (everything),
//! `report.md` (tables and Mermaid `xychart-beta` charts), and a compact console table.
//!
//! Rates are fractions (0..1) in JSON and percentages in text. Validity counts every
//! decision; accuracy counts the decisions of cases that have an expected decision (an
//! invalid output or a brain error there is incorrect). Percentiles are nearest-rank.
//! Decode tok/s is the mean over decisions that report a speed (the mock reports none).
//! Agreement (with `--repeat`): for each case, the fraction of its runs that share the
//! most common outcome (correct, incorrect, valid, invalid, error).

use std::fmt::Write as _;

use serde::Serialize;
use unicode_width::UnicodeWidthStr;

use super::case::FunctionOrder;
use super::significance::{percent_range, wilson};
use super::runner::{BenchMode, BenchPlan, BenchRun, CaseRecord, RecordStatus};

/// How the run was started, for the report's header.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReportMeta {
    pub command: String,
    pub started_at: String,
    pub finished_at: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Latency {
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
}

/// Figures over a set of decisions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    pub decisions: usize,
    pub valid: usize,
    pub validity: f64,
    /// Decisions of cases that have an expected decision.
    pub scored: usize,
    pub correct: usize,
    /// `None` when nothing was scored.
    pub accuracy: Option<f64>,
    pub errors: usize,
    pub latency_ms: Latency,
    pub decode_tok_s: Option<f64>,
    pub prompt_tokens_mean: f64,
    pub generated_tokens_mean: f64,
}

/// What the constrained decoding's token masks cost over a setting's decisions: totals
/// divided by totals, so long decisions weigh by their tokens.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MaskCost {
    /// Mask time per generated token (ms); `None` when no token was generated.
    pub mask_ms_per_token: Option<f64>,
    /// Decode time per generated token (ms), the mask included.
    pub decode_ms_per_token: Option<f64>,
    /// The mask's share of the decode time (0..1); `None` when no decode time was measured.
    pub mask_share_of_decode: Option<f64>,
    /// Grammar compile time per decision (ms).
    pub grammar_ms_mean: f64,
}

pub fn mask_cost(records: &[&CaseRecord]) -> MaskCost {
    let tokens: usize = records.iter().map(|r| r.generated_tokens).sum();
    let mask: f64 = records.iter().map(|r| r.mask_ms).sum();
    let decode: f64 = records.iter().map(|r| r.decode_ms).sum();
    MaskCost {
        mask_ms_per_token: (tokens > 0).then(|| mask / tokens as f64),
        decode_ms_per_token: (tokens > 0).then(|| decode / tokens as f64),
        mask_share_of_decode: (decode > 0.0).then(|| mask / decode),
        grammar_ms_mean: mean(records.iter().map(|r| r.grammar_ms)).unwrap_or(0.0),
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CategoryStats {
    pub category: String,
    pub stats: Stats,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Agreement {
    /// Mean over cases of the fraction of runs agreeing with the case's majority outcome.
    pub mean: f64,
    /// Cases whose runs all agree.
    pub unanimous: usize,
    pub cases: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SettingSummary {
    pub setting: String,
    pub profile: String,
    pub profile_label: String,
    pub tool_calling: String,
    pub decoding: String,
    pub overall: Stats,
    /// The 95% Wilson interval of `overall.accuracy` (fractions); only for a run of one
    /// decision per case (a case's repeated runs are not independent draws).
    pub accuracy_interval: Option<[f64; 2]>,
    /// In the order the categories first appear among the cases.
    pub categories: Vec<CategoryStats>,
    /// With `--repeat` above 1.
    pub agreement: Option<Agreement>,
    /// Constrained settings only.
    pub mask: Option<MaskCost>,
}

/// The outcome of one decision, as the per-case table shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Correct,
    Incorrect,
    /// Parsed; the case has no expected decision.
    Valid,
    Invalid,
    Error,
}

impl Outcome {
    pub fn of(record: &CaseRecord) -> Self {
        match (record.status, record.correct) {
            (RecordStatus::Error, _) => Outcome::Error,
            (RecordStatus::Invalid, _) => Outcome::Invalid,
            (RecordStatus::Success, Some(true)) => Outcome::Correct,
            (RecordStatus::Success, Some(false)) => Outcome::Incorrect,
            (RecordStatus::Success, None) => Outcome::Valid,
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Outcome::Correct => "✅",
            Outcome::Incorrect => "❌",
            Outcome::Valid => "☑️",
            Outcome::Invalid => "⚠️",
            Outcome::Error => "💥",
        }
    }

    /// One ASCII word, for the console.
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Correct => "ok",
            Outcome::Incorrect => "WRONG",
            Outcome::Valid => "valid",
            Outcome::Invalid => "INVALID",
            Outcome::Error => "ERROR",
        }
    }
}

/// One case under one setting, over its runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CaseCell {
    pub setting: String,
    pub runs: usize,
    /// The most common outcome over the runs (the earliest on a tie).
    pub outcome: Outcome,
    /// Fraction of runs with that outcome.
    pub agreement: f64,
    pub correct_runs: usize,
    pub valid_runs: usize,
    /// Calls of the first run.
    pub tool_calls: usize,
    pub latency_ms_mean: f64,
    /// The first run's reason for not being correct, or its error.
    pub reason: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CaseRow {
    pub case: String,
    pub category: String,
    pub scored: bool,
    /// One per setting that ran this case, in settings order.
    pub cells: Vec<CaseCell>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub command: String,
    pub started_at: String,
    pub finished_at: String,
    pub mode: BenchMode,
    /// The order each case's functions were offered in.
    pub function_order: FunctionOrder,
    pub repeat: usize,
    pub interrupted: bool,
    /// Decisions planned and made.
    pub planned: usize,
    pub completed: usize,
    pub settings: Vec<SettingSummary>,
    pub cases: Vec<CaseRow>,
    pub records: Vec<CaseRecord>,
}

/// Nearest-rank percentile of sorted values (0 for none).
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied().unwrap_or(0.0)
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

pub fn stats(records: &[&CaseRecord]) -> Stats {
    let n = records.len();
    let valid = records.iter().filter(|r| r.valid).count();
    let scored = records.iter().filter(|r| r.correct.is_some()).count();
    let correct = records.iter().filter(|r| r.correct == Some(true)).count();
    let mut latencies: Vec<f64> = records.iter().map(|r| r.latency_ms).collect();
    latencies.sort_by(f64::total_cmp);
    Stats {
        decisions: n,
        valid,
        validity: if n == 0 { 0.0 } else { valid as f64 / n as f64 },
        scored,
        correct,
        accuracy: (scored > 0).then(|| correct as f64 / scored as f64),
        errors: records.iter().filter(|r| r.status == RecordStatus::Error).count(),
        latency_ms: Latency { mean: mean(latencies.iter().copied()).unwrap_or(0.0), p50: percentile(&latencies, 50.0), p95: percentile(&latencies, 95.0) },
        decode_tok_s: mean(records.iter().map(|r| r.decode_tok_s).filter(|s| *s > 0.0)),
        prompt_tokens_mean: mean(records.iter().map(|r| r.prompt_tokens as f64)).unwrap_or(0.0),
        generated_tokens_mean: mean(records.iter().map(|r| r.generated_tokens as f64)).unwrap_or(0.0),
    }
}

fn cell(setting: &str, runs: &[&CaseRecord]) -> Option<CaseCell> {
    let first = runs.first()?;
    let outcomes: Vec<Outcome> = runs.iter().map(|r| Outcome::of(r)).collect();
    let mut majority = (Outcome::of(first), 0usize);
    for o in &outcomes {
        let count = outcomes.iter().filter(|x| *x == o).count();
        if count > majority.1 {
            majority = (*o, count);
        }
    }
    Some(CaseCell {
        setting: setting.to_string(),
        runs: runs.len(),
        outcome: majority.0,
        agreement: majority.1 as f64 / runs.len() as f64,
        correct_runs: runs.iter().filter(|r| r.correct == Some(true)).count(),
        valid_runs: runs.iter().filter(|r| r.valid).count(),
        tool_calls: first.tool_calls,
        latency_ms_mean: mean(runs.iter().map(|r| r.latency_ms)).unwrap_or(0.0),
        reason: first.reason.clone().or_else(|| first.error.clone().filter(|_| !first.valid)),
    })
}

/// The report of a run.
pub fn build_report(plan: &BenchPlan, run: &BenchRun, meta: ReportMeta) -> Report {
    let repeat = plan.repeat.max(1);
    let mut categories: Vec<&str> = Vec::new();
    for case in &plan.cases {
        if !categories.contains(&case.category.as_str()) {
            categories.push(&case.category);
        }
    }
    let cases: Vec<CaseRow> = plan
        .cases
        .iter()
        .map(|case| CaseRow {
            case: case.id.clone(),
            category: case.category.clone(),
            scored: case.expected.is_some(),
            cells: plan
                .settings
                .iter()
                .filter_map(|s| {
                    let runs: Vec<&CaseRecord> = run.records.iter().filter(|r| r.setting == s.name && r.case == case.id).collect();
                    cell(&s.name, &runs)
                })
                .collect(),
        })
        .collect();
    let settings = plan
        .settings
        .iter()
        .map(|s| {
            let mine: Vec<&CaseRecord> = run.records.iter().filter(|r| r.setting == s.name).collect();
            let by_category = categories
                .iter()
                .filter_map(|cat| {
                    let records: Vec<&CaseRecord> = mine.iter().copied().filter(|r| r.category == *cat).collect();
                    (!records.is_empty()).then(|| CategoryStats { category: cat.to_string(), stats: stats(&records) })
                })
                .collect();
            let cells: Vec<&CaseCell> = cases.iter().flat_map(|row| row.cells.iter().filter(|c| c.setting == s.name)).collect();
            let agreement = (repeat > 1 && !cells.is_empty()).then(|| Agreement {
                mean: mean(cells.iter().map(|c| c.agreement)).unwrap_or(0.0),
                unanimous: cells.iter().filter(|c| c.agreement >= 1.0).count(),
                cases: cells.len(),
            });
            let overall = stats(&mine);
            SettingSummary {
                setting: s.name.clone(),
                profile: s.profile.name.clone(),
                profile_label: s.profile.label().to_string(),
                tool_calling: s.tool_calling.as_str().to_string(),
                decoding: s.decoding.as_str().to_string(),
                // A server masks out of our sight: no mask figures for a served profile.
                mask: (s.decoding == crate::brain::Decoding::Constrained && s.profile.backend != crate::brain::Backend::OpenAi)
                    .then(|| mask_cost(&mine)),
                accuracy_interval: if repeat == 1 { wilson(overall.correct, overall.scored).map(|(lo, hi)| [lo, hi]) } else { None },
                overall,
                categories: by_category,
                agreement,
            }
        })
        .collect();
    Report {
        command: meta.command,
        started_at: meta.started_at,
        finished_at: meta.finished_at,
        mode: plan.mode,
        function_order: plan.function_order,
        repeat,
        interrupted: run.interrupted,
        planned: plan.decisions(),
        completed: run.records.len(),
        settings,
        cases,
        records: run.records.clone(),
    }
}

fn pct(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

fn rate_cell(rate: Option<f64>, part: usize, whole: usize) -> String {
    match rate {
        Some(rate) => format!("{} ({part}/{whole})", pct(rate)),
        None => "–".into(),
    }
}

fn ms(value: f64) -> String {
    format!("{} ms", number(value))
}

/// Whole numbers bare, sub-unit values (the mock's latencies) with three decimals, else one.
fn number(value: f64) -> String {
    if value.fract() == 0.0 {
        format!("{value:.0}")
    } else if value.abs() < 1.0 {
        format!("{value:.3}").trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{value:.1}")
    }
}

fn per_token(value: Option<f64>) -> String {
    value.map_or_else(|| "–".into(), |v| format!("{v:.2} ms"))
}

fn share(mask: Option<&MaskCost>) -> String {
    mask.and_then(|m| m.mask_share_of_decode).map_or_else(|| "–".into(), pct)
}

fn tok_s(value: Option<f64>) -> String {
    value.map_or_else(|| "–".into(), |v| format!("{v:.1}"))
}

/// Text safe inside a Markdown table cell.
fn md_cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// Text safe inside a Mermaid quoted string.
fn mermaid_label(text: &str) -> String {
    text.replace('"', "'")
}

/// Mermaid `xychart-beta` bar charts stay readable up to about this many cases.
const CHART_MAX_CASES: usize = 60;

fn bar_chart(out: &mut String, title: &str, labels: &[String], y_label: &str, values: &[f64], y_max: Option<f64>) {
    let top = y_max.unwrap_or_else(|| {
        let max = values.iter().copied().fold(0.0f64, f64::max) * 1.1;
        // A round top a little above the tallest bar.
        let step = if max > 0.0 { 10f64.powf(max.log10().floor()) } else { 1.0 };
        [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0].iter().map(|m| (m * step * 1e6).round() / 1e6).find(|top| *top >= max).unwrap_or(10.0 * step)
    });
    let labels: Vec<String> = labels.iter().map(|l| format!("\"{}\"", mermaid_label(l))).collect();
    let values: Vec<String> = values.iter().map(|v| number(*v)).collect();
    let _ = writeln!(out, "```mermaid\nxychart-beta\n    title \"{}\"", mermaid_label(title));
    let _ = writeln!(out, "    x-axis [{}]", labels.join(", "));
    let _ = writeln!(out, "    y-axis \"{}\" 0 --> {}", mermaid_label(y_label), number(top));
    let _ = writeln!(out, "    bar [{}]\n```\n", values.join(", "));
}

/// `report.md`.
pub fn render_markdown(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Bench report\n");
    let _ = writeln!(out, "- command: `{}`", report.command);
    let _ = writeln!(
        out,
        "- mode: {} · repeat: {} · cases: {} · settings: {}",
        report.mode.as_str(),
        report.repeat,
        report.cases.len(),
        report.settings.len()
    );
    if report.function_order != FunctionOrder::Given {
        let _ = writeln!(out, "- functions offered in another order than the cases give: {}", report.function_order.as_str());
    }
    let _ = writeln!(out, "- started {} · finished {}", report.started_at, report.finished_at);
    if report.interrupted {
        let _ = writeln!(out, "- **interrupted**: {} of {} decisions ran", report.completed, report.planned);
    }
    out.push('\n');

    let names: Vec<&str> = report.settings.iter().map(|s| s.setting.as_str()).collect();
    let _ = writeln!(out, "## Settings\n");
    let _ = writeln!(out, "| | {} |", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(names.len()));
    let row = |out: &mut String, label: &str, f: &dyn Fn(&SettingSummary) -> String| {
        let cells: Vec<String> = report.settings.iter().map(|s| md_cell(&f(s))).collect();
        let _ = writeln!(out, "| {label} | {} |", cells.join(" | "));
    };
    row(&mut out, "profile", &|s| s.profile_label.clone());
    row(&mut out, "tool calling", &|s| s.tool_calling.clone());
    row(&mut out, "decoding", &|s| s.decoding.clone());
    row(&mut out, "decisions", &|s| s.overall.decisions.to_string());
    row(&mut out, "validity", &|s| rate_cell(Some(s.overall.validity), s.overall.valid, s.overall.decisions));
    row(&mut out, "accuracy", &|s| rate_cell(s.overall.accuracy, s.overall.correct, s.overall.scored));
    if report.settings.iter().any(|s| s.accuracy_interval.is_some()) {
        row(&mut out, "accuracy, 95% interval", &|s| {
            s.accuracy_interval.map_or_else(|| "–".into(), |[lo, hi]| percent_range(lo, hi))
        });
    }
    row(&mut out, "brain errors", &|s| s.overall.errors.to_string());
    row(&mut out, "latency mean", &|s| ms(s.overall.latency_ms.mean));
    row(&mut out, "latency p50", &|s| ms(s.overall.latency_ms.p50));
    row(&mut out, "latency p95", &|s| ms(s.overall.latency_ms.p95));
    row(&mut out, "decode tok/s", &|s| tok_s(s.overall.decode_tok_s));
    row(&mut out, "prompt tokens (mean)", &|s| format!("{:.0}", s.overall.prompt_tokens_mean));
    row(&mut out, "generated tokens (mean)", &|s| format!("{:.0}", s.overall.generated_tokens_mean));
    if report.settings.iter().any(|s| s.mask.is_some()) {
        row(&mut out, "decode ms/token", &|s| s.mask.as_ref().map_or_else(|| "–".into(), |m| per_token(m.decode_ms_per_token)));
        row(&mut out, "mask ms/token", &|s| s.mask.as_ref().map_or_else(|| "–".into(), |m| per_token(m.mask_ms_per_token)));
        row(&mut out, "mask share of decode", &|s| share(s.mask.as_ref()));
        row(&mut out, "grammar compile (mean)", &|s| s.mask.as_ref().map_or_else(|| "–".into(), |m| ms(m.grammar_ms_mean)));
    }
    if report.repeat > 1 {
        row(&mut out, "agreement", &|s| {
            s.agreement.as_ref().map_or_else(|| "–".into(), |a| format!("{} ({}/{} cases unanimous)", pct(a.mean), a.unanimous, a.cases))
        });
    }
    out.push('\n');

    let _ = writeln!(out, "## By category\n");
    let _ = writeln!(out, "| category | {} |", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(out, "|---|{}", "---|".repeat(names.len()));
    let mut categories: Vec<&str> = Vec::new();
    for row in &report.cases {
        if !categories.contains(&row.category.as_str()) {
            categories.push(&row.category);
        }
    }
    for cat in categories {
        let cells: Vec<String> = report
            .settings
            .iter()
            .map(|s| match s.categories.iter().find(|c| c.category == cat) {
                Some(c) => format!(
                    "accuracy {} · validity {} · p50 {}",
                    rate_cell(c.stats.accuracy, c.stats.correct, c.stats.scored),
                    pct(c.stats.validity),
                    ms(c.stats.latency_ms.p50)
                ),
                None => "–".into(),
            })
            .collect();
        let _ = writeln!(out, "| {} | {} |", md_cell(cat), cells.join(" | "));
    }
    out.push('\n');

    let _ = writeln!(out, "## Per case\n");
    let _ = writeln!(out, "✅ correct · ❌ wrong decision (call or answer) · ☑️ valid (no expected decision) · ⚠️ output did not parse · 💥 brain error{}\n",
        if report.repeat > 1 { " · k/n: runs with the majority outcome" } else { "" });
    let _ = writeln!(out, "| case | category | {} |", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(out, "|---|---|{}", "---|".repeat(names.len()));
    for row in &report.cases {
        let cells: Vec<String> = report
            .settings
            .iter()
            .map(|s| match row.cells.iter().find(|c| c.setting == s.setting) {
                Some(c) => {
                    let agreement = if report.repeat > 1 {
                        format!(" {}/{}", (c.agreement * c.runs as f64).round() as usize, c.runs)
                    } else {
                        String::new()
                    };
                    let calls = if c.tool_calls == 1 { "1 call".to_string() } else { format!("{} calls", c.tool_calls) };
                    format!("{}{agreement} · {calls} · {}", c.outcome.symbol(), ms(c.latency_ms_mean))
                }
                None => "not run".into(),
            })
            .collect();
        let _ = writeln!(out, "| {} | {} | {} |", md_cell(&row.case), md_cell(&row.category), cells.join(" | "));
    }
    out.push('\n');

    let failures: Vec<(&str, &str, &str)> = report
        .cases
        .iter()
        .flat_map(|row| row.cells.iter().filter_map(move |c| c.reason.as_deref().map(|r| (c.setting.as_str(), row.case.as_str(), r))))
        .collect();
    if !failures.is_empty() {
        let _ = writeln!(out, "## Why cases failed\n");
        let _ = writeln!(out, "| setting | case | reason |\n|---|---|---|");
        for (setting, case, reason) in failures {
            let _ = writeln!(out, "| `{setting}` | {} | {} |", md_cell(case), md_cell(reason));
        }
        out.push('\n');
    }

    let _ = writeln!(out, "## Charts\n");
    if report.cases.len() > CHART_MAX_CASES {
        let _ = writeln!(out, "The per-case charts show the first {CHART_MAX_CASES} of {} cases.\n", report.cases.len());
    }
    let shown: Vec<&CaseRow> = report.cases.iter().take(CHART_MAX_CASES).collect();
    let labels: Vec<String> = shown.iter().map(|r| r.case.clone()).collect();
    for s in &report.settings {
        let cell_of = |row: &CaseRow| row.cells.iter().find(|c| c.setting == s.setting).cloned();
        let latencies: Vec<f64> = shown.iter().map(|r| cell_of(r).map_or(0.0, |c| c.latency_ms_mean)).collect();
        let calls: Vec<f64> = shown.iter().map(|r| cell_of(r).map_or(0.0, |c| c.tool_calls as f64)).collect();
        bar_chart(&mut out, &format!("Latency per case (ms): {}", s.setting), &labels, "latency (ms)", &latencies, None);
        let max_calls = calls.iter().copied().fold(1.0f64, f64::max) + 1.0;
        bar_chart(&mut out, &format!("Tool calls per case: {}", s.setting), &labels, "tool calls", &calls, Some(max_calls));
    }
    let setting_labels: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let validity: Vec<f64> = report.settings.iter().map(|s| s.overall.validity * 100.0).collect();
    bar_chart(&mut out, "Validity per setting (%)", &setting_labels, "validity (%)", &validity, Some(100.0));
    if report.settings.iter().any(|s| s.overall.accuracy.is_some()) {
        let accuracy: Vec<f64> = report.settings.iter().map(|s| s.overall.accuracy.unwrap_or(0.0) * 100.0).collect();
        bar_chart(&mut out, "Accuracy per setting (%)", &setting_labels, "accuracy (%)", &accuracy, Some(100.0));
    }
    out
}

fn pad(text: &str, width: usize) -> String {
    let w = UnicodeWidthStr::width(text);
    format!("{text}{}", " ".repeat(width.saturating_sub(w)))
}

fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| rows.iter().filter_map(|r| r.get(i)).map(|c| UnicodeWidthStr::width(c.as_str())).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row.iter().zip(&widths).map(|(c, w)| pad(c, *w)).collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out
}

/// The compact table printed at the end of a run: one line per setting, then one line
/// per case (up to 40 cases) with each setting's outcome.
pub fn render_table(report: &Report) -> String {
    // The mask column only when a setting decodes constrained.
    let masked = report.settings.iter().any(|s| s.mask.is_some());
    let mut header = vec!["setting", "valid", "accuracy", "mean", "p50", "p95", "tok/s"];
    if masked {
        header.push("mask/token");
    }
    let mut rows = vec![header.into_iter().map(String::from).collect::<Vec<_>>()];
    for s in &report.settings {
        let o = &s.overall;
        let mut line = vec![
            s.setting.clone(),
            pct(o.validity),
            rate_cell(o.accuracy, o.correct, o.scored),
            ms(o.latency_ms.mean),
            ms(o.latency_ms.p50),
            ms(o.latency_ms.p95),
            tok_s(o.decode_tok_s),
        ];
        if masked {
            line.push(match &s.mask {
                Some(m) if m.mask_ms_per_token.is_some() => format!("{} ({})", per_token(m.mask_ms_per_token), share(Some(m))),
                _ => "–".into(),
            });
        }
        rows.push(line);
    }
    let mut out = table(&rows);
    if report.cases.len() <= 40 {
        out.push('\n');
        let mut rows = vec![std::iter::once("case".to_string()).chain(report.settings.iter().map(|s| s.setting.clone())).collect::<Vec<_>>()];
        for row in &report.cases {
            let mut line = vec![row.case.clone()];
            for s in &report.settings {
                line.push(match row.cells.iter().find(|c| c.setting == s.setting) {
                    Some(c) => format!("{} {}", c.outcome.word(), c.tool_calls),
                    None => "-".into(),
                });
            }
            rows.push(line);
        }
        out.push_str(&table(&rows));
    }
    if report.interrupted {
        let _ = writeln!(out, "\ninterrupted: {} of {} decisions ran", report.completed, report.planned);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(case: &str, run: usize, status: RecordStatus, correct: Option<bool>, latency_ms: f64) -> CaseRecord {
        CaseRecord {
            setting: "s".into(),
            case: case.into(),
            category: "simple".into(),
            run,
            status,
            valid: status == RecordStatus::Success,
            correct,
            reason: correct.filter(|c| !c).map(|_| "wrong".into()),
            error: None,
            latency_ms,
            prompt_tokens: 100,
            reused_tokens: 0,
            generated_tokens: 10,
            decode_tok_s: if status == RecordStatus::Success { 20.0 } else { 0.0 },
            decode_ms: 0.0,
            mask_ms: 0.0,
            grammar_ms: 0.0,
            tool_calls: 1,
            tool_names: vec!["calculator".into()],
            content_len: 0,
            format: None,
            attempts: 1,
            warnings: vec![],
        }
    }

    #[test]
    fn stats_count_validity_accuracy_and_nearest_rank_latency() {
        let records = [
            record("a", 1, RecordStatus::Success, Some(true), 10.0),
            record("b", 1, RecordStatus::Success, Some(false), 30.0),
            record("c", 1, RecordStatus::Invalid, Some(false), 20.0),
            record("d", 1, RecordStatus::Success, None, 40.0),
            record("e", 1, RecordStatus::Error, None, 1000.0),
        ];
        let refs: Vec<&CaseRecord> = records.iter().collect();
        let s = stats(&refs);
        assert_eq!(
            s,
            Stats {
                decisions: 5,
                valid: 3,
                validity: 0.6,
                scored: 3,
                correct: 1,
                accuracy: Some(1.0 / 3.0),
                errors: 1,
                latency_ms: Latency { mean: 220.0, p50: 30.0, p95: 1000.0 },
                decode_tok_s: Some(20.0),
                prompt_tokens_mean: 100.0,
                generated_tokens_mean: 10.0,
            }
        );
        assert_eq!(stats(&[]).accuracy, None);
    }

    #[test]
    fn a_cell_takes_the_majority_outcome_and_its_agreement() {
        let runs = [
            record("a", 1, RecordStatus::Success, Some(false), 10.0),
            record("a", 2, RecordStatus::Success, Some(true), 20.0),
            record("a", 3, RecordStatus::Success, Some(true), 30.0),
        ];
        let refs: Vec<&CaseRecord> = runs.iter().collect();
        let c = cell("s", &refs).unwrap();
        assert_eq!((c.outcome, c.runs, c.correct_runs, c.valid_runs), (Outcome::Correct, 3, 2, 3));
        assert!((c.agreement - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(c.latency_ms_mean, 20.0);
        assert_eq!(c.reason.as_deref(), Some("wrong"));
    }

    #[test]
    fn percentiles_of_one_value_are_that_value() {
        assert_eq!(percentile(&[7.0], 50.0), 7.0);
        assert_eq!(percentile(&[7.0], 95.0), 7.0);
        assert_eq!(percentile(&[1.0, 2.0, 3.0, 4.0], 50.0), 2.0);
    }

    #[test]
    fn charts_quote_labels_and_scale_the_axis() {
        let mut out = String::new();
        bar_chart(&mut out, "T \"x\"", &["a\"b".into(), "案例".into()], "ms", &[1.0, 9.5], None);
        assert_eq!(
            out,
            "```mermaid\nxychart-beta\n    title \"T 'x'\"\n    x-axis [\"a'b\", \"案例\"]\n    y-axis \"ms\" 0 --> 12\n    bar [1, 9.5]\n```\n\n"
        );
    }

    #[test]
    fn numbers_read_well_at_every_scale() {
        assert_eq!([number(0.0), number(0.0123), number(3.0), number(1574.46)], ["0", "0.012", "3", "1574.5"]);
        let mut out = String::new();
        bar_chart(&mut out, "t", &["a".into()], "ms", &[0.04], None);
        assert!(out.contains("0 --> 0.05\n    bar [0.04]"), "{out}");
        out.clear();
        bar_chart(&mut out, "t", &["a".into()], "ms", &[9222.5], None);
        assert!(out.contains("0 --> 12000\n"), "{out}");
    }

    /// A report over a free and a constrained setting: two decisions each, with the
    /// constrained ones' mask and grammar times.
    fn free_and_constrained() -> Report {
        use crate::brain::{Decoding, Exclusivity, Profile};
        use crate::protocol::ToolCalling;
        use super::super::runner::Setting;
        let profile = Profile { name: "qwen-0.5b".into(), ..Profile::default() };
        let settings: Vec<Setting> = [Decoding::Free, Decoding::Constrained]
            .into_iter()
            .map(|d| Setting::new(profile.clone(), ToolCalling::Builtin, d))
            .collect();
        let timed = |setting: &str, case: &str, tokens: usize, decode_ms: f64, mask_ms: f64, grammar_ms: f64| CaseRecord {
            setting: setting.into(),
            generated_tokens: tokens,
            decode_ms,
            mask_ms,
            grammar_ms,
            ..record(case, 1, RecordStatus::Success, Some(true), 10.0)
        };
        let records = vec![
            timed("qwen-0.5b-builtin-free", "a", 40, 900.0, 0.0, 0.0),
            timed("qwen-0.5b-builtin-free", "b", 10, 200.0, 0.0, 0.0),
            timed("qwen-0.5b-builtin-constrained", "a", 40, 1000.0, 20.0, 30.0),
            timed("qwen-0.5b-builtin-constrained", "b", 10, 250.0, 5.0, 10.0),
        ];
        let plan = BenchPlan {
            mode: BenchMode::PromptJson,
            settings,
            cases: vec![],
            repeat: 1,
            tools: None,
            exclusivity: Exclusivity::default(),
            function_order: Default::default(),
        };
        build_report(&plan, &BenchRun { records, interrupted: false }, ReportMeta::default())
    }

    #[test]
    fn mask_cost_is_total_mask_time_over_total_tokens_and_decode_time() {
        let report = free_and_constrained();
        let [free, constrained] = &report.settings[..] else { panic!("two settings") };
        assert_eq!(free.mask, None);
        assert_eq!(
            constrained.mask,
            Some(MaskCost {
                mask_ms_per_token: Some(0.5),
                decode_ms_per_token: Some(25.0),
                mask_share_of_decode: Some(0.02),
                grammar_ms_mean: 20.0,
            })
        );
        // Nothing generated: no per-token figure rather than a division by zero.
        let silent = record("a", 1, RecordStatus::Error, None, 5.0);
        let none = mask_cost(&[&CaseRecord { generated_tokens: 0, ..silent }]);
        assert_eq!((none.mask_ms_per_token, none.decode_ms_per_token, none.mask_share_of_decode), (None, None, None));
    }

    #[test]
    fn report_json_carries_the_mask_cost_of_constrained_settings_only() {
        let json = serde_json::to_value(free_and_constrained()).unwrap();
        assert_eq!(json["settings"][0]["mask"], serde_json::Value::Null);
        assert_eq!(
            json["settings"][1]["mask"],
            serde_json::json!({"mask_ms_per_token": 0.5, "decode_ms_per_token": 25.0, "mask_share_of_decode": 0.02, "grammar_ms_mean": 20.0})
        );
        assert_eq!(json["records"][2]["mask_ms"], 20.0);
    }

    #[test]
    fn the_markdown_settings_table_shows_mask_time_per_token_and_its_share() {
        let md = render_markdown(&free_and_constrained());
        for row in [
            "| decoding | free | constrained |",
            "| decode ms/token | – | 25.00 ms |",
            "| mask ms/token | – | 0.50 ms |",
            "| mask share of decode | – | 2.0% |",
            "| grammar compile (mean) | – | 20 ms |",
        ] {
            assert!(md.contains(&format!("{row}\n")), "missing {row:?} in:\n{md}");
        }
        // Free settings alone: no mask rows.
        let mut free_only = free_and_constrained();
        free_only.settings.truncate(1);
        assert!(!render_markdown(&free_only).contains("mask"));
    }

    #[test]
    fn the_console_table_has_a_mask_column_when_a_setting_is_constrained() {
        let table = render_table(&free_and_constrained());
        let lines: Vec<&str> = table.lines().take(3).collect();
        assert_eq!(
            lines,
            [
                "setting                        valid   accuracy      mean   p50    p95    tok/s  mask/token",
                "qwen-0.5b-builtin-free         100.0%  100.0% (2/2)  10 ms  10 ms  10 ms  20.0   –",
                "qwen-0.5b-builtin-constrained  100.0%  100.0% (2/2)  10 ms  10 ms  10 ms  20.0   0.50 ms (2.0%)",
            ]
        );
        let mut free_only = free_and_constrained();
        free_only.settings.truncate(1);
        assert!(!render_table(&free_only).contains("mask"));
    }

    #[test]
    fn the_console_table_aligns_wide_characters() {
        let rows = vec![vec!["案例".to_string(), "x".to_string()], vec!["ab".to_string(), "y".to_string()]];
        assert_eq!(table(&rows), "案例  x\nab    y\n");
    }
}
