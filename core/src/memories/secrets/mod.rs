//! The secret scanner: a memory outlives the session that wrote it, so a credential that
//! slipped into one would be recalled into every later prompt. Content is scanned before it
//! is stored; a finding is refused (naming the kind and where it starts, never the secret) or,
//! when the caller asks, replaced by `[REDACTED:<kind>]`.
//!
//! The text is first normalised ([`normalize`]: look-alike letters, invisible characters,
//! JSON escapes), then read by three families of rules: vendor tokens by prefix
//! ([`tokens`]), secrets by structure ([`patterns`]), and values given to secret-named keys
//! or told in prose ([`assign`]); base64 runs are decoded and read again ([`encoded`]).
//! Findings are mapped back to byte ranges of the original text.

mod assign;
mod encoded;
mod normalize;
mod patterns;
mod shape;
mod tokens;

#[cfg(test)]
mod tests;

/// A secret found in a text: its kind and where it is (byte range of the original text).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Finding {
    pub kind: &'static str,
    pub start: usize,
    pub end: usize,
}

/// How telling a rule's kind is: where findings overlap, the most telling names the whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    /// A vendor format (`ghp_…`).
    Format,
    /// A structure (a private key, a URL's password).
    Structure,
    /// A secret-named key or a sentence.
    Context,
}

/// A finding in the normalised text.
#[derive(Clone, Copy, Debug)]
struct Hit {
    kind: &'static str,
    start: usize,
    end: usize,
    rank: Rank,
}

impl Hit {
    fn new(kind: &'static str, start: usize, end: usize, rank: Rank) -> Hit {
        Hit {
            kind,
            start,
            end,
            rank,
        }
    }
}

/// What the rules find in (already normalised) text.
fn rules(text: &str) -> Vec<Hit> {
    let mut hits = Vec::new();
    tokens::find(text, &mut hits);
    patterns::find(text, &mut hits);
    assign::find(text, &mut hits);
    hits
}

/// Every secret in `text`, in order of position. Overlapping findings become one, spanning
/// them all, named by the most telling rule.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn scan(text: &str) -> Vec<Finding> {
    let norm = normalize::normalize(text);
    let mut hits = rules(&norm.text);
    encoded::find(&norm.text, rules, &mut hits);
    hits.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut merged: Vec<Hit> = Vec::new();
    for h in hits {
        match merged.last_mut() {
            Some(l) if h.start < l.end => {
                l.end = l.end.max(h.end);
                if h.rank < l.rank {
                    (l.kind, l.rank) = (h.kind, h.rank);
                }
            }
            _ => merged.push(h),
        }
    }
    merged
        .into_iter()
        .map(|h| {
            let (start, end) = norm.original(h.start, h.end);
            Finding {
                kind: h.kind,
                start,
                end,
            }
        })
        .collect()
}

/// `text` with every finding replaced by `[REDACTED:<kind>]`.
pub(crate) fn redact(text: &str, findings: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in findings {
        out.push_str(&text[at..f.start]);
        out.push_str(&format!("[REDACTED:{}]", f.kind));
        at = f.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The character offset (0-based) of byte `at` in `text`: what an error reports.
pub(crate) fn char_offset(text: &str, at: usize) -> usize {
    text[..at].chars().count()
}
