//! Snippets: the best window of a text for a query, with the matches highlighted.

use super::query::{parse, Matcher};
use super::tokenizer::{tokenize, Kind};

/// How snippets look.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct SnippetSettings {
    /// Put before a match.
    pub start: String,
    /// Put after a match.
    pub end: String,
    /// Put where the text was cut.
    pub ellipsis: String,
    /// Window size in atoms (words); 0 means the whole text.
    pub max_tokens: usize,
}

impl Default for SnippetSettings {
    fn default() -> Self {
        SnippetSettings {
            start: "[".into(),
            end: "]".into(),
            ellipsis: "…".into(),
            max_tokens: 12,
        }
    }
}

/// Longest text (in bytes) a snippet reads; longer texts are cut first.
pub(crate) const MAX_SNIPPET_INPUT: usize = 1 << 20;

/// The window of `text` with the most query matches (the first such window), matches wrapped
/// in the markers, cuts marked with the ellipsis. Never fails.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn snippet(text: &str, query: &str, settings: &SnippetSettings) -> String {
    Snippeter::new(query, settings).of(text)
}

/// Snippets of many texts for one query (the query is read once).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Snippeter<'s> {
    terms: Vec<String>,
    prefixes: Vec<String>,
    settings: &'s SnippetSettings,
}

impl<'s> Snippeter<'s> {
    pub(crate) fn new(query: &str, settings: &'s SnippetSettings) -> Self {
        let q = parse(query);
        let mut terms: Vec<String> = Vec::new();
        let mut prefixes: Vec<String> = Vec::new();
        for m in q.should.iter().chain(q.must.iter()) {
            match m {
                Matcher::Term(t) => terms.push(t.clone()),
                Matcher::Phrase(a) | Matcher::Near(a) => terms.extend(a.iter().cloned()),
                Matcher::Prefix(p) => prefixes.push(p.clone()),
            }
        }
        Snippeter {
            terms,
            prefixes,
            settings,
        }
    }

    /// The snippet of one text.
    pub(crate) fn of(&self, text: &str) -> String {
        let mut cut_at = text.len().min(MAX_SNIPPET_INPUT);
        while !text.is_char_boundary(cut_at) {
            cut_at -= 1;
        }
        window(&text[..cut_at], &self.terms, &self.prefixes, self.settings)
    }
}

fn window(text: &str, terms: &[String], prefixes: &[String], settings: &SnippetSettings) -> String {
    let tokens = tokenize(text);
    let atoms: Vec<&super::tokenizer::Token> =
        tokens.iter().filter(|t| t.kind == Kind::Atom).collect();
    if atoms.is_empty() {
        return String::new();
    }
    let is_match = |t: &str| {
        terms.iter().any(|x| x == t) || prefixes.iter().any(|p| t.starts_with(p.as_str()))
    };
    // Highlight spans and the atom positions they cover.
    let mut hit = vec![false; atoms.len()];
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for t in &tokens {
        if is_match(&t.text) {
            spans.push((t.start, t.end));
            for (k, a) in atoms.iter().enumerate().skip(t.pos as usize) {
                if a.start >= t.end {
                    break;
                }
                hit[k] = true;
            }
        }
    }
    let n = atoms.len();
    let w = if settings.max_tokens == 0 {
        n
    } else {
        settings.max_tokens.min(n)
    };
    // Sliding window with the most hit atoms.
    let mut count: usize = hit[..w].iter().filter(|h| **h).count();
    let (mut best, mut best_i) = (count, 0usize);
    for i in 1..=(n - w) {
        count = count + usize::from(hit[i + w - 1]) - usize::from(hit[i - 1]);
        if count > best {
            best = count;
            best_i = i;
        }
    }
    // Start the window a little before the first hit when it fits.
    let first = atoms[best_i].start;
    let last = atoms[best_i + w - 1].end;
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in spans {
        if s < first || e > last {
            continue;
        }
        match merged.last_mut() {
            Some(m) if s <= m.1 => m.1 = m.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    let mut out = String::new();
    if best_i > 0 {
        out.push_str(&settings.ellipsis);
    }
    let mut at = first;
    for (s, e) in merged {
        out.push_str(&text[at..s]);
        out.push_str(&settings.start);
        out.push_str(&text[s..e]);
        out.push_str(&settings.end);
        at = e;
    }
    out.push_str(&text[at..last]);
    if best_i + w < n {
        out.push_str(&settings.ellipsis);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_the_best_window() {
        let s = SnippetSettings::default();
        let text =
            "We talked about lunch plans and the weather for a long while. Later the LoginSchema \
                    validation failed in src/auth/login.ts because refresh_tokens were empty.";
        let out = snippet(text, "LoginSchema refresh_tokens", &s);
        assert!(out.contains("[LoginSchema]"), "{out}");
        assert!(out.contains("[refresh_tokens]"), "{out}");
        assert!(out.starts_with('…'), "{out}");
        let out = snippet("fix the login bug", "login", &s);
        assert_eq!(out, "fix the [login] bug");
        let out = snippet("auth module and authentication", "auth*", &s);
        assert_eq!(out, "[auth] module and [authentication]");
        let custom = SnippetSettings {
            start: "<b>".into(),
            end: "</b>".into(),
            ellipsis: "...".into(),
            max_tokens: 2,
        };
        assert_eq!(
            snippet("one two three four", "three", &custom),
            "...two <b>three</b>..."
        );
    }

    #[test]
    fn hostile_snippets() {
        let s = SnippetSettings::default();
        assert_eq!(snippet("", "x", &s), "");
        assert_eq!(snippet("!!!", "x", &s), "");
        assert_eq!(snippet("a b c", "", &s), "a b c");
        let _ = snippet(&"é🚀 ".repeat(400_000), "é", &s);
        let _ = snippet(
            "x",
            &"\"".repeat(1000),
            &SnippetSettings { max_tokens: 0, ..s },
        );
    }
}
