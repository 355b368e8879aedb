//! Error fingerprints: the same failure, told apart from its incidental details.
//!
//! Two runs of one failing test differ in line numbers, temporary paths, addresses and the
//! values they quote; the fingerprint keeps the words and strips the rest, so that "the same
//! error again" is an equality. It reads the line that names the error (the first line with
//! `error`, `failed`, `panic`, `exception` or `cannot`, else the first non-empty line) and
//! replaces quoted values with `Q`, paths with `P`, hexadecimal runs with `H` and numbers with
//! `N`.

use crate::text::{head_bytes, head_chars};
use once_cell::sync::Lazy;
use regex::Regex;

/// Longest fingerprint, in characters; longer lines are cut.
pub(crate) const MAX_FINGERPRINT: usize = 200;

/// How much of an error text is read for its line.
const SCAN_BYTES: usize = 4096;

static QUOTED: Lazy<Regex> =
    Lazy::new(|| Regex::new(r#""[^"\n]{0,200}"|'[^'\n]{0,200}'|`[^`\n]{0,200}`"#).unwrap());
static PATH: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"(?:[A-Za-z]:)?(?:[\w.@~-]*[/\\])+[\w.@-]+(?::\d+)*|\b[\w-]+\.[A-Za-z]{1,5}:\d+(?::\d+)?")
        .unwrap()
});
static HEX: Lazy<Regex> = Lazy::new(|| Regex::new(r"\b0x[0-9A-Fa-f]+\b|\b[0-9a-f]{6,}\b").unwrap());
static NUMBER: Lazy<Regex> = Lazy::new(|| Regex::new(r"\b\d+(?:\.\d+)?\b").unwrap());
static SPACE: Lazy<Regex> = Lazy::new(|| Regex::new(r"\s+").unwrap());
static NAMES_ERROR: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"(?i)error|failed|failure|panic|exception|cannot|not found").unwrap());

/// The fingerprint of an error text, or `None` for a text with nothing in it.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn fingerprint(text: &str) -> Option<String> {
    let scanned = head_bytes(text, SCAN_BYTES);
    let mut lines = scanned.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.clone().next()?;
    let line = lines.find(|l| NAMES_ERROR.is_match(l)).unwrap_or(first);
    let s = QUOTED.replace_all(line, "Q");
    let s = PATH.replace_all(&s, "P");
    // A run of hex digits is a hash or an address when it mixes digits and letters (a word
    // such as `deface` stays; digits alone are a number).
    let s = HEX.replace_all(&s, |c: &regex::Captures<'_>| {
        let m = &c[0];
        let mixed = m.starts_with("0x")
            || (m.bytes().any(|b| b.is_ascii_digit()) && m.bytes().any(|b| b.is_ascii_alphabetic()));
        if mixed { "H".to_owned() } else { m.to_owned() }
    });
    let s = NUMBER.replace_all(&s, "N");
    let s = SPACE.replace_all(s.trim(), " ");
    Some(head_chars(&s, MAX_FINGERPRINT).to_owned())
}

#[cfg(test)]
mod tests {
    use super::fingerprint;

    #[test]
    fn incidental_details_are_stripped() {
        let a = fingerprint("Error: Cannot find module './auth/session' from src/app.ts:12:4").unwrap();
        let b = fingerprint("Error: Cannot find module './db/pool' from lib/server.ts:40:1").unwrap();
        assert_eq!(a, b);
        assert_eq!(a, "Error: Cannot find module Q from P");
    }

    #[test]
    fn numbers_hex_and_quotes_go() {
        assert_eq!(
            fingerprint("thread 'main' panicked at 0x7ffd3a2b: index 17 out of range for len 3").unwrap(),
            "thread Q panicked at H: index N out of range for len N"
        );
        assert_eq!(
            fingerprint("commit 3fa9c1e not found").unwrap(),
            fingerprint("commit 9b87bba not found").unwrap()
        );
    }

    #[test]
    fn the_line_that_names_the_error_is_read() {
        let text = "running 3 tests\n\ntest auth::refresh ... FAILED\nfailures:\n";
        assert_eq!(fingerprint(text).unwrap(), "test auth::refresh ... FAILED");
        assert_eq!(fingerprint("  \n just output 12 \n").unwrap(), "just output N");
        assert_eq!(fingerprint(" \n\t"), None);
    }

    #[test]
    fn long_texts_are_cut_on_a_character() {
        let long = format!("error: {}", "é".repeat(5000));
        let f = fingerprint(&long).unwrap();
        assert_eq!(f.chars().count(), super::MAX_FINGERPRINT);
    }
}
