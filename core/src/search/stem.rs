//! English stemming of prose words (Snowball's English stemmer, also called Porter2).
//!
//! Only a word that stands alone — one atom of 3 to 32 ASCII letters, not part of an
//! identifier, path or number — is stemmed, and its stem is indexed as an extra term beside
//! the word, marked with [`STEM_MARK`] (which no token can contain), when it differs from the
//! word: `tests` is indexed as `tests` and `~test`, `test` only as `test`. A query word
//! searches its exact form, its stem term and its stem as a word, the last two with a lower
//! weight, so `appointments` finds `appointment` and `appointed` and an exact match still ranks
//! first. Identifiers, paths and numbers match exactly, as before.

use rust_stemmers::{Algorithm, Stemmer};
use std::cell::RefCell;
use std::collections::HashMap;

/// The first character of a stem term.
pub const STEM_MARK: char = '~';
/// Shortest and longest word stemmed, in bytes.
const MIN_BYTES: usize = 3;
const MAX_BYTES: usize = 32;
/// Words remembered per thread (stemming is a pure function; prose repeats its words).
const MEMO_WORDS: usize = 1 << 14;

thread_local! {
    static MEMO: RefCell<HashMap<Box<str>, Option<Box<str>>, foldhash::fast::RandomState>> =
        RefCell::default();
}

/// Whether a lower-cased single-atom word is stemmed: 3 to 32 ASCII letters, and not a
/// function word (those weigh little in a query; their forms carry no meaning).
pub fn is_stemmable(word: &str) -> bool {
    (MIN_BYTES..=MAX_BYTES).contains(&word.len())
        && word.bytes().all(|b| b.is_ascii_lowercase())
        && !super::stopwords::is_stopword(word)
}

/// The stem of a lower-cased standalone word, when it is stemmable and differs from it.
pub fn stem(word: &str) -> Option<String> {
    let mut s = String::new();
    stem_into(word, &mut s).then(|| s[STEM_MARK.len_utf8()..].to_owned())
}

/// Writes the stem term (`~stem`) of a lower-cased standalone word into `out` and returns
/// true, when the word is stemmable and its stem differs from it.
pub fn stem_into(word: &str, out: &mut String) -> bool {
    if word.len() < MIN_BYTES || word.len() > MAX_BYTES {
        return false;
    }
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if !m.contains_key(word) {
            let s = is_stemmable(word)
                .then(|| Stemmer::create(Algorithm::English).stem(word).into_owned())
                .filter(|s| s != word && !s.is_empty())
                .map(|s| Box::<str>::from(term(&s)));
            if m.len() >= MEMO_WORDS {
                m.clear();
            }
            m.insert(word.into(), s);
        }
        match m.get(word) {
            Some(Some(t)) => {
                out.clear();
                out.push_str(t);
                true
            }
            _ => false,
        }
    })
}

/// The index term of a stem.
pub fn term(stem: &str) -> String {
    let mut t = String::with_capacity(stem.len() + 1);
    t.push(STEM_MARK);
    t.push_str(stem);
    t
}

/// Whether an index term is a stem term.
pub fn is_stem_term(term: &[u8]) -> bool {
    term.first() == Some(&(STEM_MARK as u8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_words_only() {
        assert_eq!(stem("appointments").as_deref(), Some("appoint"));
        assert_eq!(stem("classes").as_deref(), Some("class"));
        assert_eq!(stem("running").as_deref(), Some("run"));
        assert_eq!(stem("test"), None); // its own stem
        assert_eq!(stem("it"), None); // too short
        assert_eq!(stem("v2"), None); // not letters only
        assert_eq!(stem("naïve"), None); // not ASCII
        assert_eq!(stem("does"), None); // a function word
        assert_eq!(term("run"), "~run");
        assert!(is_stem_term(b"~run") && !is_stem_term(b"run"));
    }
}
