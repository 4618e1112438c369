//! `b4 bench --compare BEFORE AFTER`: two runs of the same cases, verdict by verdict.
//!
//! Each side is a run's folder (or its `report.json`), of `b4 bench` or of `b4 bench
//! --conversations`. Settings are paired by name (or, where the runs share none and each
//! has one, the two are paired). For each pair: the cases both ran, how many each got
//! right with the 95% interval of that accuracy, the cases gained and lost, the exact
//! McNemar test of that split ([`super::significance`]), the counts per category, whether
//! the model wrote the same text (the raw output of each decision, read from the run's
//! case folders where they are there; a conversation's final answers), and the mean
//! latency over the cases both ran.
//!
//! The reports are read as plain JSON, so older runs compare too.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use super::runner::safe_name;
use super::significance::{interval_text, mcnemar_exact};

/// One decision (or one question of a conversation) as its run recorded it.
#[derive(Clone, Debug, PartialEq)]
struct Verdict {
    category: String,
    /// `None`: the case has no expected decision.
    correct: Option<bool>,
    latency_ms: f64,
    /// The model's raw text (a decision) or the final answer (a conversation's question);
    /// `None` where it was not kept.
    text: Option<String>,
}

/// One setting's verdicts by key.
type Verdicts = BTreeMap<String, Verdict>;

/// A run's verdicts: its settings in order, each with its verdicts by key (the case id,
/// `#K` added for the K-th run of a repeated one; `conversation#turn`).
pub struct Run {
    pub path: PathBuf,
    settings: Vec<(String, Verdicts)>,
    /// Categories in the order the records first show them.
    categories: Vec<String>,
}

/// Reads a run: `path` is its folder or its `report.json`.
pub fn load(path: &Path) -> Result<Run> {
    let (dir, file) = if path.is_dir() { (path.to_path_buf(), path.join("report.json")) } else { (path.parent().unwrap_or(Path::new(".")).to_path_buf(), path.to_path_buf()) };
    let text = std::fs::read_to_string(&file).with_context(|| format!("{}: cannot read", file.display()))?;
    let report: Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", file.display()))?;
    let records = report
        .get("records")
        .and_then(Value::as_array)
        .with_context(|| format!("{}: not a bench report (no \"records\" list)", file.display()))?;
    let repeated = report.get("repeat").and_then(Value::as_u64).unwrap_or(1) > 1;
    let mut settings: Vec<(String, Verdicts)> = Vec::new();
    let mut categories: Vec<String> = Vec::new();
    for (i, record) in records.iter().enumerate() {
        let (setting, key, verdict) =
            read_record(record, &dir, repeated).with_context(|| format!("{}: record {}", file.display(), i + 1))?;
        if !categories.contains(&verdict.category) {
            categories.push(verdict.category.clone());
        }
        match settings.iter_mut().find(|(name, _)| *name == setting) {
            Some((_, verdicts)) => {
                verdicts.insert(key, verdict);
            }
            None => settings.push((setting, BTreeMap::from([(key, verdict)]))),
        }
    }
    Ok(Run { path: path.to_path_buf(), settings, categories })
}

fn read_record(record: &Value, dir: &Path, repeated: bool) -> Result<(String, String, Verdict)> {
    let field = |name: &str| record.get(name).with_context(|| format!("no \"{name}\""));
    let text_field = |name: &str| -> Result<String> {
        field(name)?.as_str().map(str::to_string).with_context(|| format!("\"{name}\" is not a string"))
    };
    let setting = text_field("setting")?;
    let category = record.get("category").and_then(Value::as_str).unwrap_or("").to_string();
    let latency_ms = record.get("latency_ms").and_then(Value::as_f64).unwrap_or(0.0);
    if record.get("conversation").is_some() {
        let conversation = text_field("conversation")?;
        let turn = field("turn")?.as_u64().context("\"turn\" is not a number")?;
        let passed = field("passed")?.as_bool().context("\"passed\" is not true or false")?;
        let text = record.get("answer").and_then(Value::as_str).map(str::to_string);
        return Ok((setting, format!("{conversation}#{turn}"), Verdict { category, correct: Some(passed), latency_ms, text }));
    }
    let case = text_field("case")?;
    let run = record.get("run").and_then(Value::as_u64).unwrap_or(1);
    let correct = match field("correct")? {
        Value::Null => None,
        Value::Bool(b) => Some(*b),
        _ => bail!("\"correct\" is not true, false or null"),
    };
    let mut case_dir = dir.join(safe_name(&setting)).join(safe_name(&case));
    if repeated {
        case_dir = case_dir.join(format!("run_{run}"));
    }
    let key = if repeated { format!("{case}#{run}") } else { case };
    Ok((setting, key, Verdict { category, correct, latency_ms, text: raw_text(&case_dir) }))
}

/// The raw text a decision's folder keeps; `None` where there is none to read.
fn raw_text(case_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(case_dir.join("raw_model_output.json")).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    value.get("raw_text")?.as_str().map(str::to_string)
}

#[derive(Clone, Debug, PartialEq)]
pub struct CategoryCount {
    pub category: String,
    /// Scored cases both runs have.
    pub scored: usize,
    pub right_before: usize,
    pub right_after: usize,
}

/// The texts of the cases both runs kept one for.
#[derive(Clone, Debug, PartialEq)]
pub struct TextCount {
    pub compared: usize,
    pub same: usize,
    pub differ: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SettingComparison {
    pub before: String,
    pub after: String,
    /// Cases both runs have.
    pub paired: usize,
    pub only_before: usize,
    pub only_after: usize,
    /// Of the paired cases, those both runs scored.
    pub scored: usize,
    pub right_before: usize,
    pub right_after: usize,
    pub gained: Vec<String>,
    pub lost: Vec<String>,
    /// Exact McNemar, two-sided, on `gained` against `lost`.
    pub p_value: f64,
    pub categories: Vec<CategoryCount>,
    /// `None` where no case has a text kept by both runs.
    pub texts: Option<TextCount>,
    /// Mean latency over the paired cases, before and after.
    pub latency_ms: (f64, f64),
}

pub struct Comparison {
    pub before: PathBuf,
    pub after: PathBuf,
    pub settings: Vec<SettingComparison>,
    /// Settings of one run that had no partner.
    pub unpaired: Vec<String>,
}

/// Pairs the runs' settings and compares each pair; an error if no setting pairs or the
/// pairs share no case.
pub fn compare(before: &Run, after: &Run) -> Result<Comparison> {
    let mut pairs: Vec<(&str, &Verdicts, &str, &Verdicts)> = Vec::new();
    for (name, verdicts) in &before.settings {
        if let Some((other, theirs)) = after.settings.iter().find(|(n, _)| n == name) {
            pairs.push((name, verdicts, other, theirs));
        }
    }
    if pairs.is_empty() {
        if let ([(a, va)], [(b, vb)]) = (&before.settings[..], &after.settings[..]) {
            pairs.push((a, va, b, vb));
        }
    }
    if pairs.is_empty() {
        let names = |run: &Run| run.settings.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ");
        bail!("the runs share no setting ({}: {}; {}: {})", before.path.display(), names(before), after.path.display(), names(after));
    }
    let mut unpaired = Vec::new();
    for (run, side) in [(before, 0), (after, 1)] {
        for (name, _) in &run.settings {
            if !pairs.iter().any(|p| if side == 0 { p.0 == name } else { p.2 == name }) {
                unpaired.push(format!("{name} ({})", run.path.display()));
            }
        }
    }
    let mut settings: Vec<SettingComparison> = pairs.into_iter().map(|(a, va, b, vb)| compare_setting(a, va, b, vb)).collect();
    for setting in &mut settings {
        setting.categories.sort_by_key(|c| before.categories.iter().position(|k| *k == c.category));
    }
    if settings.iter().all(|s| s.paired == 0) {
        bail!("the runs share no case");
    }
    Ok(Comparison { before: before.path.clone(), after: after.path.clone(), settings, unpaired })
}

fn compare_setting(a: &str, before: &Verdicts, b: &str, after: &Verdicts) -> SettingComparison {
    let both: Vec<(&String, &Verdict, &Verdict)> = before.iter().filter_map(|(k, v)| after.get(k).map(|w| (k, v, w))).collect();
    let mut result = SettingComparison {
        before: a.to_string(),
        after: b.to_string(),
        paired: both.len(),
        only_before: before.len() - both.len(),
        only_after: after.len() - both.len(),
        scored: 0,
        right_before: 0,
        right_after: 0,
        gained: Vec::new(),
        lost: Vec::new(),
        p_value: 1.0,
        categories: Vec::new(),
        texts: None,
        latency_ms: (0.0, 0.0),
    };
    let mut texts = TextCount { compared: 0, same: 0, differ: Vec::new() };
    for (key, v, w) in &both {
        if let (Some(x), Some(y)) = (&v.text, &w.text) {
            texts.compared += 1;
            if x == y {
                texts.same += 1;
            } else {
                texts.differ.push(key.to_string());
            }
        }
        let (Some(x), Some(y)) = (v.correct, w.correct) else { continue };
        result.scored += 1;
        result.right_before += usize::from(x);
        result.right_after += usize::from(y);
        if !x && y {
            result.gained.push(key.to_string());
        } else if x && !y {
            result.lost.push(key.to_string());
        }
        let category = match result.categories.iter_mut().position(|c| c.category == v.category) {
            Some(i) => &mut result.categories[i],
            None => {
                result.categories.push(CategoryCount { category: v.category.clone(), scored: 0, right_before: 0, right_after: 0 });
                result.categories.last_mut().expect("just pushed")
            }
        };
        category.scored += 1;
        category.right_before += usize::from(x);
        category.right_after += usize::from(y);
    }
    result.p_value = mcnemar_exact(result.gained.len(), result.lost.len());
    result.texts = (texts.compared > 0).then_some(texts);
    if !both.is_empty() {
        let n = both.len() as f64;
        result.latency_ms = (both.iter().map(|(_, v, _)| v.latency_ms).sum::<f64>() / n, both.iter().map(|(_, _, w)| w.latency_ms).sum::<f64>() / n);
    }
    result
}

fn percent(right: usize, of: usize) -> String {
    if of == 0 {
        return "–".into();
    }
    format!("{:.1}%", right as f64 * 100.0 / of as f64)
}

fn interval(right: usize, of: usize) -> String {
    interval_text(right, of)
}

/// The comparison as the console shows it.
pub fn render(comparison: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "before: {}", comparison.before.display());
    let _ = writeln!(out, "after:  {}", comparison.after.display());
    for s in &comparison.settings {
        let name = if s.before == s.after { s.before.clone() } else { format!("{} -> {}", s.before, s.after) };
        let _ = writeln!(out, "\n{name}: {} cases in both", s.paired);
        if s.only_before + s.only_after > 0 {
            let _ = writeln!(out, "  not paired    {} only before, {} only after", s.only_before, s.only_after);
        }
        if s.scored > 0 {
            let _ = writeln!(
                out,
                "  right         {} -> {} of {} ({} -> {}; 95% interval {} -> {})",
                s.right_before,
                s.right_after,
                s.scored,
                percent(s.right_before, s.scored),
                percent(s.right_after, s.scored),
                interval(s.right_before, s.scored),
                interval(s.right_after, s.scored)
            );
            let verdict = if s.gained.is_empty() && s.lost.is_empty() {
                "no verdict moved".to_string()
            } else if s.p_value < 0.05 {
                format!("exact McNemar p = {:.3}: more than chance", s.p_value)
            } else {
                format!("exact McNemar p = {:.3}: within chance", s.p_value)
            };
            let _ = writeln!(out, "  changed       {} gained, {} lost ({verdict})", s.gained.len(), s.lost.len());
            if !s.gained.is_empty() {
                let _ = writeln!(out, "  gained        {}", s.gained.join(", "));
            }
            if !s.lost.is_empty() {
                let _ = writeln!(out, "  lost          {}", s.lost.join(", "));
            }
            let categories: Vec<String> =
                s.categories.iter().map(|c| format!("{} {} -> {} of {}", display_category(&c.category), c.right_before, c.right_after, c.scored)).collect();
            let _ = writeln!(out, "  by category   {}", categories.join(" · "));
        }
        match &s.texts {
            Some(t) if t.differ.is_empty() => {
                let _ = writeln!(out, "  text          the same in all {}", t.compared);
            }
            Some(t) => {
                let _ = writeln!(out, "  text          the same in {} of {}; differs: {}", t.same, t.compared, t.differ.join(", "));
            }
            None => {
                let _ = writeln!(out, "  text          not kept by both runs");
            }
        }
        if s.paired > 0 {
            let _ = writeln!(out, "  latency mean  {:.0} -> {:.0} ms", s.latency_ms.0, s.latency_ms.1);
        }
    }
    if !comparison.unpaired.is_empty() {
        let _ = writeln!(out, "\nnot compared (no partner): {}", comparison.unpaired.join(", "));
    }
    out
}

fn display_category(category: &str) -> &str {
    if category.is_empty() {
        "uncategorized"
    } else {
        category
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A bench run on disk: report.json and, for the cases given a text, their
    /// raw_model_output.json.
    fn bench_run(dir: &Path, setting: &str, cases: &[(&str, &str, Option<bool>, Option<&str>)]) {
        let records: Vec<Value> = cases
            .iter()
            .map(|(case, category, correct, _)| {
                json!({"setting": setting, "case": case, "category": category, "run": 1, "correct": correct, "latency_ms": 100.0})
            })
            .collect();
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("report.json"), json!({"repeat": 1, "records": records}).to_string()).unwrap();
        for (case, _, _, text) in cases {
            if let Some(text) = text {
                let case_dir = dir.join(safe_name(setting)).join(safe_name(case));
                std::fs::create_dir_all(&case_dir).unwrap();
                std::fs::write(case_dir.join("raw_model_output.json"), json!({"raw_text": text}).to_string()).unwrap();
            }
        }
    }

    #[test]
    fn gains_losses_categories_and_texts_are_counted_case_by_case() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        let s = "qwen-0.5b-prompt_json-constrained";
        bench_run(
            &a,
            s,
            &[
                ("simple_1", "simple", Some(true), Some("x")),
                ("simple_2", "simple", Some(false), Some("y")),
                ("irrelevance_1", "irrelevance", Some(true), Some("z")),
                ("seed_1", "", None, Some("w")),
                ("simple_9", "simple", Some(true), None),
            ],
        );
        bench_run(
            &b,
            s,
            &[
                ("simple_1", "simple", Some(true), Some("x")),
                ("simple_2", "simple", Some(true), Some("y2")),
                ("irrelevance_1", "irrelevance", Some(false), Some("z2")),
                ("seed_1", "", None, Some("w")),
                ("multiple_1", "multiple", Some(true), None),
            ],
        );
        let c = compare(&load(&a).unwrap(), &load(&b.join("report.json")).unwrap()).unwrap();
        let s = &c.settings[0];
        assert_eq!((s.paired, s.only_before, s.only_after, s.scored), (4, 1, 1, 3));
        assert_eq!((s.right_before, s.right_after), (2, 2));
        assert_eq!((s.gained.clone(), s.lost.clone()), (vec!["simple_2".to_string()], vec!["irrelevance_1".to_string()]));
        assert_eq!(s.p_value, 1.0);
        // In the order the before run first shows them.
        assert_eq!(
            s.categories,
            vec![
                CategoryCount { category: "simple".into(), scored: 2, right_before: 1, right_after: 2 },
                CategoryCount { category: "irrelevance".into(), scored: 1, right_before: 1, right_after: 0 },
            ]
        );
        let texts = s.texts.clone().unwrap();
        assert_eq!((texts.compared, texts.same), (4, 2));
        assert_eq!(texts.differ, vec!["irrelevance_1".to_string(), "simple_2".to_string()]);
        let shown = render(&c);
        assert!(shown.contains("right         2 -> 2 of 3 (66.7% -> 66.7%"), "{shown}");
        assert!(shown.contains("1 gained, 1 lost (exact McNemar p = 1.000: within chance)"), "{shown}");
        assert!(shown.contains("text          the same in 2 of 4; differs: irrelevance_1, simple_2"), "{shown}");
    }

    #[test]
    fn a_one_sided_change_on_many_cases_is_more_than_chance() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        let ids: Vec<String> = (0..12).map(|i| format!("simple_{i}")).collect();
        let before: Vec<_> = ids.iter().map(|id| (id.as_str(), "simple", Some(false), None)).collect();
        let after: Vec<_> = ids.iter().map(|id| (id.as_str(), "simple", Some(true), None)).collect();
        bench_run(&a, "one", &before);
        bench_run(&b, "two", &after);
        // Differently named settings pair when each run has one.
        let c = compare(&load(&a).unwrap(), &load(&b).unwrap()).unwrap();
        let shown = render(&c);
        assert!(shown.contains("one -> two: 12 cases in both"), "{shown}");
        assert!(shown.contains("12 gained, 0 lost (exact McNemar p = 0.000: more than chance)"), "{shown}");
        assert!(shown.contains("text          not kept by both runs"), "{shown}");
    }

    #[test]
    fn conversation_runs_compare_by_question_and_answer() {
        let tmp = tempfile::tempdir().unwrap();
        let write = |dir: &Path, passed: bool, answer: &str| {
            std::fs::create_dir_all(dir).unwrap();
            let record = json!({"setting": "s", "conversation": "zh_greeting", "turn": 1, "category": "courtesy", "passed": passed, "answer": answer, "latency_ms": 5.0});
            std::fs::write(dir.join("report.json"), json!({"records": [record]}).to_string()).unwrap();
        };
        write(&tmp.path().join("a"), false, "你好呀！");
        write(&tmp.path().join("b"), true, "你好！有什么可以帮你的吗？");
        let c = compare(&load(&tmp.path().join("a")).unwrap(), &load(&tmp.path().join("b")).unwrap()).unwrap();
        assert_eq!(c.settings[0].gained, vec!["zh_greeting#1".to_string()]);
        assert_eq!(c.settings[0].texts.as_ref().map(|t| t.differ.len()), Some(1));
    }

    #[test]
    fn what_cannot_be_compared_is_one_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        let err = |r: Result<Run>| format!("{:#}", r.err().expect("an error"));
        assert!(err(load(&a)).contains("cannot read"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::write(a.join("report.json"), "{ not json").unwrap();
        assert!(err(load(&a)).contains("not JSON"));
        std::fs::write(a.join("report.json"), "{}").unwrap();
        assert!(err(load(&a)).contains("not a bench report"));
        std::fs::write(a.join("report.json"), json!({"records": [{"setting": "s", "case": "c", "correct": "yes"}]}).to_string()).unwrap();
        assert!(err(load(&a)).contains("record 1: \"correct\" is not true, false or null"));
        bench_run(&a, "x", &[("c", "simple", Some(true), None)]);
        bench_run(&b, "y", &[("c", "simple", Some(true), None)]);
        bench_run(&b, "y", &[("d", "simple", Some(true), None)]);
        let c = compare(&load(&a).unwrap(), &load(&b).unwrap()).err().expect("no case in common");
        assert!(c.to_string().contains("share no case"), "{c}");
        // Two settings on one side and none shared: nothing to pair.
        let two = tmp.path().join("two");
        std::fs::create_dir_all(&two).unwrap();
        let records = json!([{"setting": "p", "case": "c", "correct": true}, {"setting": "q", "case": "c", "correct": true}]);
        std::fs::write(two.join("report.json"), json!({"records": records}).to_string()).unwrap();
        let e = compare(&load(&a).unwrap(), &load(&two).unwrap()).err().expect("no setting in common");
        assert!(e.to_string().contains("share no setting"), "{e}");
    }
}
