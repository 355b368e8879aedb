//! Secrets wrapped in base64: a key encoded to slip past a scanner still decodes, for
//! whoever reads the memory, to the key. Runs of base64 long enough to hold a credential are
//! decoded, and when the result is text, the rules read that text; a finding covers the whole
//! run. Binary data (images, compressed blobs) does not decode to text and is left alone.

use super::Hit;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::{alphabet, Engine};
use once_cell::sync::Lazy;
use regex::Regex;

/// Base64 in either alphabet, from 15 decoded bytes up.
static RUN: Lazy<Regex> =
    Lazy::new(|| Regex::new(r"[A-Za-z0-9+/_-]{20,}={0,2}").expect("base64 pattern compiles"));

/// Longer runs are data, not a pasted key.
const MAX_RUN: usize = 8192;

fn engine(a: &alphabet::Alphabet) -> GeneralPurpose {
    let padding =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    GeneralPurpose::new(a, padding)
}

static STANDARD: Lazy<GeneralPurpose> = Lazy::new(|| engine(&alphabet::STANDARD));
static URL_SAFE: Lazy<GeneralPurpose> = Lazy::new(|| engine(&alphabet::URL_SAFE));

/// `run` decoded, if it is base64 of printable text.
fn decode(run: &str) -> Option<String> {
    let url = run.contains(['-', '_']);
    if url && run.contains(['+', '/']) {
        return None;
    }
    let bytes = if url { &*URL_SAFE } else { &*STANDARD }.decode(run).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let printable = text
        .chars()
        .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'));
    printable.then_some(text)
}

/// Every base64 run of `text` whose decoded text holds a secret, as read by `rules`.
pub(super) fn find(text: &str, rules: fn(&str) -> Vec<Hit>, out: &mut Vec<Hit>) {
    for m in RUN.find_iter(text) {
        if m.len() > MAX_RUN {
            continue;
        }
        if let Some(inner) = decode(m.as_str()).map(|d| rules(&d)) {
            if let Some(first) = inner.iter().min_by_key(|h| h.rank) {
                out.push(Hit::new(first.kind, m.start(), m.end(), first.rank));
            }
        }
    }
}
