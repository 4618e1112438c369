//! A profile being loaded, as the status bar and the picker tell it: for how long, and
//! what its last progress report said (the stage, the percent, the bytes).

use std::time::Instant;

use crate::protocol::LoadProgress;

#[derive(Clone, Debug, PartialEq)]
pub struct Loading {
    pub name: String,
    pub since: Instant,
    /// The last progress report; `None` until the first.
    pub progress: Option<LoadProgress>,
}

impl Loading {
    pub fn new(name: String, since: Instant) -> Self {
        Self { name, since, progress: None }
    }

    /// Whole seconds it has been loading at `now`.
    pub fn secs(&self, now: Instant) -> u64 {
        now.saturating_duration_since(self.since).as_secs()
    }

    /// The stage and how far it has come, most detailed first: `reading weights 45%
    /// (450/1000 MB)`, `reading weights 45%`, `45%`. Empty before the first report.
    pub fn details(&self) -> Vec<String> {
        let Some(progress) = self.progress else { return Vec::new() };
        let stage = progress.stage.as_str();
        match progress.percent() {
            Some(percent) => vec![
                format!("{stage} {percent}% ({})", amount(progress.done, progress.total)),
                format!("{stage} {percent}%"),
                format!("{percent}%"),
            ],
            None => vec![stage.to_string()],
        }
    }

    /// The status bar's text, from the most to the least detailed; the bar shows the
    /// first that fits. The shortest keep the spinner and the percent (or the time).
    pub fn status_forms(&self, spinner: &str, now: Instant) -> Vec<String> {
        let (name, secs) = (&self.name, self.secs(now));
        let details = self.details();
        let Some(full) = details.first() else {
            return vec![format!("{spinner} loading {name} {secs}s"), format!("{spinner} loading {secs}s"), format!("{spinner} {secs}s")];
        };
        let mut forms = vec![format!("{spinner} loading {name} · {full} {secs}s")];
        // The profile's name is the bar's first field already: narrower forms drop it.
        match details.as_slice() {
            [with_bytes, with_stage, percent] => forms.extend([
                format!("{spinner} {with_bytes} {secs}s"),
                format!("{spinner} {with_stage} {secs}s"),
                format!("{spinner} loading {percent} {secs}s"),
                format!("{spinner} {percent} {secs}s"),
                format!("{spinner} {percent}"),
            ]),
            _ => forms.extend([
                format!("{spinner} {full} {secs}s"),
                format!("{spinner} loading {secs}s"),
                format!("{spinner} {secs}s"),
            ]),
        }
        forms
    }
}

/// `done/total` in the unit that suits `total` (decimal, as `b4 models list` writes MB):
/// whole MB up to 10 GB, so a small model's count moves visibly.
fn amount(done: u64, total: u64) -> String {
    const KB: f64 = 1e3;
    const MB: f64 = 1e6;
    const GB: f64 = 1e9;
    let (done, total) = (done as f64, total as f64);
    if total >= 10.0 * GB {
        format!("{:.1}/{:.1} GB", (done / GB * 10.0).floor() / 10.0, total / GB)
    } else if total >= MB {
        format!("{:.0}/{:.0} MB", (done / MB).floor(), total / MB)
    } else {
        format!("{:.0}/{:.0} KB", (done / KB).floor(), (total / KB).ceil())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::protocol::LoadStage;

    fn qwen_3s_in(progress: Option<LoadProgress>) -> (Loading, Instant) {
        let since = Instant::now();
        (Loading { name: "qwen-1.5b".into(), since, progress }, since + Duration::from_millis(3400))
    }

    #[test]
    fn forms_go_from_the_whole_story_to_the_percent() {
        let weights = LoadProgress { stage: LoadStage::Weights, done: 450_300_000, total: 1_000_000_000 };
        let (loading, now) = qwen_3s_in(Some(weights));
        assert_eq!(
            loading.status_forms("⠋", now),
            vec![
                "⠋ loading qwen-1.5b · reading weights 45% (450/1000 MB) 3s",
                "⠋ reading weights 45% (450/1000 MB) 3s",
                "⠋ reading weights 45% 3s",
                "⠋ loading 45% 3s",
                "⠋ 45% 3s",
                "⠋ 45%",
            ]
        );
    }

    #[test]
    fn a_stage_without_a_measure_shows_its_name_and_the_time() {
        let (loading, now) = qwen_3s_in(Some(LoadProgress { stage: LoadStage::Tokenizer, done: 0, total: 0 }));
        assert_eq!(
            loading.status_forms("⠋", now),
            vec!["⠋ loading qwen-1.5b · tokenizer 3s", "⠋ tokenizer 3s", "⠋ loading 3s", "⠋ 3s"]
        );
        let (before_any_report, now) = qwen_3s_in(None);
        assert_eq!(before_any_report.status_forms("⠋", now), vec!["⠋ loading qwen-1.5b 3s", "⠋ loading 3s", "⠋ 3s"]);
    }

    #[test]
    fn amounts_use_the_unit_of_the_total() {
        assert_eq!(amount(0, 397_808_192), "0/398 MB");
        assert_eq!(amount(1_234_900_000, 1_986_000_000), "1234/1986 MB");
        assert_eq!(amount(12_990_000_000, 15_200_000_000), "12.9/15.2 GB");
        assert_eq!(amount(52_000, 90_001), "52/91 KB");
    }
}
