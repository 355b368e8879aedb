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

/// The first character of a stem term.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const STEM_MARK: char = '~';
/// Shortest and longest word stemmed, in bytes.
const MIN_BYTES: usize = 3;
const MAX_BYTES: usize = 32;
/// Words remembered per thread (stemming is a pure function; prose repeats its words).
const MEMO_WORDS: usize = 1 << 13;

/// A remembered stem: its bytes (without the mark); length 0 when the word is its own stem.
#[derive(Clone, Copy, Default)]
struct Stemmed {
    len: u8,
    bytes: [u8; MAX_BYTES],
}

thread_local! {
    static MEMO: RefCell<crate::memo::Memo<MAX_BYTES, Stemmed>> =
        RefCell::new(crate::memo::Memo::new(MEMO_WORDS));
}

/// Whether a lower-cased single-atom word is stemmed: 3 to 32 ASCII letters, and not a
/// function word (those weigh little in a query; their forms carry no meaning).
pub(crate) fn is_stemmable(word: &str) -> bool {
    (MIN_BYTES..=MAX_BYTES).contains(&word.len())
        && word.bytes().all(|b| b.is_ascii_lowercase())
        && !super::stopwords::is_stopword(word)
}

/// The stem of a lower-cased standalone word, when it is stemmable and differs from it.
#[cfg(test)]
pub(crate) fn stem(word: &str) -> Option<String> {
    let mut s = String::new();
    stem_into(word, &mut s).then(|| s[STEM_MARK.len_utf8()..].to_owned())
}

/// Writes the stem term (`~stem`) of a lower-cased standalone word into `out` and returns
/// true, when the word is stemmable and its stem differs from it.
pub(crate) fn stem_into(word: &str, out: &mut String) -> bool {
    if !is_stemmable(word) {
        return false;
    }
    let s = MEMO.with(|m| {
        m.borrow_mut().get_or(word.as_bytes(), || {
            let stem = Stemmer::create(Algorithm::English).stem(word);
            let mut s = Stemmed::default();
            // A stem is never longer than its word; an empty one is not indexed.
            if stem != word && !stem.is_empty() && stem.len() <= MAX_BYTES {
                s.len = stem.len() as u8;
                s.bytes[..stem.len()].copy_from_slice(stem.as_bytes());
            }
            s
        })
    });
    if s.len == 0 {
        return false;
    }
    out.clear();
    out.push(STEM_MARK);
    // The stem of ASCII letters is ASCII letters.
    out.extend(s.bytes[..usize::from(s.len)].iter().map(|&b| char::from(b)));
    true
}

/// The index term of a stem.
pub(crate) fn term(stem: &str) -> String {
    let mut t = String::with_capacity(stem.len() + 1);
    t.push(STEM_MARK);
    t.push_str(stem);
    t
}

/// Whether an index term is a stem term.
pub(crate) fn is_stem_term(term: &[u8]) -> bool {
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
