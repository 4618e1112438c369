//! How far a benchmark's figures can be trusted: the interval an accuracy measured on n
//! cases leaves, and whether two runs of the same cases differ by more than chance.
//!
//! - [`wilson`]: the Wilson score interval (95%) of a proportion. 16 of 20 right is 80%, but
//!   anything from 58% to 92% fits it; 110 of 192 is 57% with 50-64% around it.
//! - [`mcnemar_exact`]: the exact (binomial) McNemar test on paired verdicts. Only the
//!   cases whose verdict changed count: under "no difference" a change is as likely to be a
//!   gain as a loss, so `gained` of `gained + lost` is a fair coin's count. Two-sided.

/// The normal quantile of 97.5%, for 95% two-sided intervals.
const Z95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval (95%) of `successes` out of `n`, as fractions; `None` for no
/// trials.
pub fn wilson(successes: usize, n: usize) -> Option<(f64, f64)> {
    if n == 0 {
        return None;
    }
    let n_f = n as f64;
    let p = successes.min(n) as f64 / n_f;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denominator;
    let half = Z95 * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denominator;
    Some(((centre - half).max(0.0), (centre + half).min(1.0)))
}

/// [`wilson`]'s interval of `successes` out of `n` as reports write it (`50.2-64.1%`); `–`
/// for no trials.
pub fn interval_text(successes: usize, n: usize) -> String {
    wilson(successes, n).map_or_else(|| "–".into(), |(lo, hi)| percent_range(lo, hi))
}

/// An interval of fractions as a range of percentages, one decimal each.
pub fn percent_range(lo: f64, hi: f64) -> String {
    format!("{:.1}-{:.1}%", lo * 100.0, hi * 100.0)
}

/// The two-sided p-value of the exact McNemar test: the chance, if the two runs were
/// equally good, of a split of the changed verdicts at least as uneven as `gained` to
/// `lost`. 1 when nothing changed.
pub fn mcnemar_exact(gained: usize, lost: usize) -> f64 {
    let n = gained + lost;
    let k = gained.min(lost);
    // P(X <= k) for X ~ Binomial(n, 1/2), summed in log space (n may be in the hundreds).
    let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
    let mut ln_choose = 0.0; // ln C(n, 0)
    let mut tail = 0.0;
    for i in 0..=k {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose + ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 5e-4
    }

    #[test]
    fn wilson_gives_the_textbook_intervals() {
        let (lo, hi) = wilson(16, 20).unwrap();
        assert!(close(lo, 0.5840) && close(hi, 0.9193), "{lo} {hi}");
        let (lo, hi) = wilson(110, 192).unwrap();
        assert!(close(lo, 0.5022) && close(hi, 0.6408), "{lo} {hi}");
        // The edges stay inside 0..1 and are not degenerate.
        let (lo, hi) = wilson(0, 10).unwrap();
        assert!(close(lo, 0.0) && close(hi, 0.2775), "{lo} {hi}");
        let (lo, hi) = wilson(10, 10).unwrap();
        assert!(close(lo, 0.7225) && close(hi, 1.0), "{lo} {hi}");
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn a_larger_set_narrows_the_interval() {
        let (lo20, hi20) = wilson(16, 20).unwrap();
        let (lo200, hi200) = wilson(160, 200).unwrap();
        assert!(hi200 - lo200 < (hi20 - lo20) / 2.5);
    }

    #[test]
    fn mcnemar_is_the_binomial_tail_doubled() {
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_exact(2, 1), 1.0);
        // 10 gained, none lost: 2 / 2^10.
        assert!(close(mcnemar_exact(10, 0), 2.0 / 1024.0));
        // 8 to 2: 2 (1 + 10 + 45) / 1024.
        assert!(close(mcnemar_exact(8, 2), 112.0 / 1024.0));
        assert_eq!(mcnemar_exact(8, 2), mcnemar_exact(2, 8));
        // Hundreds of changes do not overflow: 300 to 200 is far from even.
        let p = mcnemar_exact(300, 200);
        assert!(p > 0.0 && p < 1e-5, "{p}");
        assert!(close(mcnemar_exact(250, 250), 1.0));
    }
}
