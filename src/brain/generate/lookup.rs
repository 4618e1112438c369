//! Drafts from the context (prompt lookup): a decision copies much of what it writes from
//! its prompt or from itself (paths and expressions the user typed, the envelope's keys,
//! the indentation of the call before). Where the last few tokens written occurred before,
//! the tokens that followed them then are a likely continuation now. The decoder checks a
//! draft in one batch and keeps only what the model picks anyway.

/// Longest n-gram matched, then shorter ones down to [`MIN_NGRAM`].
const MAX_NGRAM: usize = 4;
/// One token alone matches too often to predict anything.
const MIN_NGRAM: usize = 2;

/// Up to `max` tokens that followed the latest earlier occurrence of the longest suffix of
/// `context` (of [`MIN_NGRAM`]..=[`MAX_NGRAM`] tokens) seen before; empty when none was.
pub fn draft(context: &[u32], max: usize) -> Vec<u32> {
    if max == 0 {
        return Vec::new();
    }
    for n in (MIN_NGRAM..=MAX_NGRAM).rev() {
        let Some(start) = context.len().checked_sub(n) else { continue };
        let suffix = &context[start..];
        // The latest earlier occurrence with something after it.
        let found = (0..start).rev().find(|&i| &context[i..i + n] == suffix);
        if let Some(i) = found {
            let from = i + n;
            let to = (from + max).min(context.len());
            return context[from..to].to_vec();
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tokens_after_the_latest_match_of_the_longest_suffix() {
        // ... 1 2 3 [9 9] ... 7 2 3 [5 6] ... 2 3: the latest "2 3" was followed by 5 6.
        let context = [1, 2, 3, 9, 9, 7, 2, 3, 5, 6, 8, 2, 3];
        assert_eq!(draft(&context, 2), vec![5, 6]);
        assert_eq!(draft(&context, 10), vec![5, 6, 8, 2, 3]);
        // A longer suffix wins over a later shorter one: "1 2 3" occurred once.
        let context = [1, 2, 3, 4, 4, 2, 3, 5, 1, 2, 3];
        assert_eq!(draft(&context, 3), vec![4, 4, 2]);
    }

    #[test]
    fn no_draft_without_an_earlier_match_or_room() {
        assert!(draft(&[1, 2, 3, 4], 5).is_empty());
        assert!(draft(&[1, 2, 1, 2], 0).is_empty());
        assert!(draft(&[], 5).is_empty());
        // A single repeated token is not enough.
        assert!(draft(&[5, 1, 6, 1], 5).is_empty());
    }
}
