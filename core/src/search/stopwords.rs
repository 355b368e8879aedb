//! English function words. They stay in the index (phrases need them) but weigh less in a
//! query that has other words: BM25's idf never reaches zero for a word most documents hold,
//! and a question's "how did I … to the" otherwise pulls up long documents that say nothing
//! about its subject. See docs/search.md for the measurement.

/// Sorted, lower-case.
const WORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "again",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Whether a lower-cased term is an English function word. Asked of every prose word
/// indexed, so it is one hash and one compare (a binary search over the list cost 3% of an
/// insert).
pub(crate) fn is_stopword(term: &str) -> bool {
    static SET: std::sync::OnceLock<
        std::collections::HashSet<&'static str, foldhash::fast::FixedState>,
    > = std::sync::OnceLock::new();
    term.len() <= LONGEST
        && SET
            .get_or_init(|| WORDS.iter().copied().collect())
            .contains(term)
}

/// Bytes of the longest word in the list.
const LONGEST: usize = 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_and_found() {
        assert!(WORDS.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(WORDS.iter().map(|w| w.len()).max(), Some(LONGEST));
        assert!(WORDS.iter().all(|w| is_stopword(w)));
        assert!(is_stopword("the") && is_stopword("yourselves") && !is_stopword("login"));
    }
}
