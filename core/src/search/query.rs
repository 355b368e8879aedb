//! The query language. It never fails: any text is a query.
//!
//! * `word` — optional; its tokens (whole, pieces, atoms; see the tokenizer) are OR-ed and
//!   ranked by BM25.
//! * `"a phrase"` — optional; contributes the BM25 of its atoms to documents where the atoms
//!   occur at consecutive positions. An unbalanced quote runs to the end of the query.
//! * `prefix*` — optional; expands to the live dictionary terms starting with `prefix`
//!   (lexicographically first [`MAX_PREFIX_TERMS`]).
//! * `+x` — `x` (word, phrase or prefix) must occur; a word of several atoms must occur as a
//!   phrase (`+LoginSchema` accepts `login_schema`, `LoginSchema`, "login schema").
//! * `-x` — documents where `x` occurs are dropped.
//!
//! Any other punctuation is text. A query without a positive part matches nothing.

use super::scoring::SearchParams;
use super::tokenizer::{tokenize, Kind};
use super::{stem, stopwords};
use std::collections::{BTreeMap, BTreeSet};

/// Largest number of dictionary terms one `prefix*` expands to.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const MAX_PREFIX_TERMS: usize = 64;
/// Largest number of clauses read from one query; the rest is ignored.
pub(crate) const MAX_CLAUSES: usize = 64;
/// Only this many bytes of a query are read.
pub(crate) const MAX_QUERY_BYTES: usize = 16 * 1024;

/// Something a document can contain.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) enum Matcher {
    /// One token.
    Term(String),
    /// Atoms at consecutive positions (two or more).
    Phrase(Vec<String>),
    /// Any dictionary term with this prefix.
    Prefix(String),
    /// Two words typed next to each other that also stand next to each other in a document:
    /// a phrase scored at `proximity_weight` (the last atom of one word, the first of the next).
    Near(Vec<String>),
}

/// A parsed query: scoring clauses in canonical (query-text) order, and constraints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Query {
    /// Clauses that score. Terms are unique among the `Term` clauses.
    pub should: Vec<Matcher>,
    /// Every one of these must occur.
    pub must: Vec<Matcher>,
    /// None of these may occur.
    pub must_not: Vec<Matcher>,
    /// Terms that weigh less than the query's own words (see [`Query::weight`]).
    pub lighter: BTreeMap<String, Lighter>,
}

/// Why a query term weighs less.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lighter {
    /// A stem term, or the stem of a query word searched as a word.
    Stem,
    /// An English function word in a query that has other words.
    Stopword,
}

impl Query {
    /// True when the query can match nothing (no scoring clause).
    pub(crate) fn is_empty(&self) -> bool {
        self.should.is_empty()
    }

    /// The weight of a term's idf: 1 for the query's own words, `stem_weight` for stems,
    /// `stopword_weight` for function words when the query has other words.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn weight(&self, term: &str, params: &SearchParams) -> f64 {
        match self.lighter.get(term) {
            None => 1.0,
            Some(Lighter::Stem) => params.stem_weight,
            Some(Lighter::Stopword) => params.stopword_weight,
        }
    }

    /// The weight of a scoring clause as a whole: `proximity_weight` for [`Matcher::Near`],
    /// 1 otherwise (its terms keep their own weights inside).
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn clause_weight(m: &Matcher, params: &SearchParams) -> f64 {
        match m {
            Matcher::Near(_) => params.proximity_weight,
            _ => 1.0,
        }
    }

    /// The query without the clauses whose weight is 0 under `params` (a weight of 0 turns
    /// stems, function words beside other words, or proximity off: they no longer match).
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn weighed(mut self, params: &SearchParams) -> Query {
        let keep: Vec<bool> = self
            .should
            .iter()
            .map(|m| match m {
                Matcher::Term(t) => self.weight(t, params) != 0.0,
                m => Query::clause_weight(m, params) != 0.0,
            })
            .collect();
        let mut k = keep.into_iter();
        self.should.retain(|_| k.next().unwrap_or(true));
        self
    }

    /// Marks the stem expansions and the function words, once the query is read.
    fn weigh(&mut self, own: &BTreeSet<String>, stems: BTreeSet<String>) {
        for s in stems {
            if !own.contains(&s) {
                self.lighter.insert(s, Lighter::Stem);
            }
        }
        for t in own {
            if stem::is_stem_term(t.as_bytes()) {
                self.lighter.insert(t.clone(), Lighter::Stem);
            }
        }
        let has_content = own
            .iter()
            .any(|t| !stem::is_stem_term(t.as_bytes()) && !stopwords::is_stopword(t))
            || self.should.iter().any(|m| matches!(m, Matcher::Prefix(_)));
        if has_content {
            for t in own.iter().filter(|t| stopwords::is_stopword(t)) {
                self.lighter.insert(t.clone(), Lighter::Stopword);
            }
        }
    }

    /// The document terms that can matter to this query: its terms and atoms, and the terms
    /// under its prefixes.
    pub(crate) fn terms(&self) -> Mentioned<'_> {
        let mut m = Mentioned::default();
        for c in self.should.iter().chain(&self.must).chain(&self.must_not) {
            match c {
                Matcher::Term(t) => {
                    m.exact.insert(t.as_bytes());
                }
                Matcher::Phrase(atoms) | Matcher::Near(atoms) => {
                    m.exact.extend(atoms.iter().map(|a| a.as_bytes()))
                }
                Matcher::Prefix(p) => m.prefixes.push(p.as_bytes()),
            }
        }
        m
    }
}

/// The terms a query mentions (see [`Query::terms`]).
#[derive(Default)]
pub(crate) struct Mentioned<'q> {
    exact: std::collections::HashSet<&'q [u8], foldhash::fast::RandomState>,
    prefixes: Vec<&'q [u8]>,
}

impl Mentioned<'_> {
    pub(crate) fn contains(&self, term: &[u8]) -> bool {
        self.exact.contains(term) || self.prefixes.iter().any(|p| term.starts_with(p))
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Modifier {
    None,
    Must,
    MustNot,
}

fn is_word(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// The matcher for text that must (or must not) occur: a term, or its atoms as a phrase.
fn constraint_of(text: &str) -> Option<Matcher> {
    let atoms: Vec<String> = tokenize(text)
        .into_iter()
        .filter(|t| t.kind == Kind::Atom)
        .map(|t| t.text)
        .collect();
    match atoms.len() {
        0 => None,
        1 => atoms.into_iter().next().map(Matcher::Term),
        _ => Some(Matcher::Phrase(atoms)),
    }
}

/// Parses a query. Never fails; see the module documentation for the language.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn parse(query: &str) -> Query {
    let mut q = Query::default();
    let mut stems = BTreeSet::new();
    let mut near: Vec<Matcher> = Vec::new();
    // The last atom of the previous plain word, while words follow each other.
    let mut prev: Option<String> = None;
    let s = crate::text::head_bytes(query, MAX_QUERY_BYTES);
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let n = chars.len();
    let mut i = 0;
    let mut clauses = 0;
    let byte_at = |k: usize| if k < n { chars[k].0 } else { s.len() };
    while i < n && clauses < MAX_CLAUSES {
        let c = chars[i].1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let mut modifier = Modifier::None;
        if (c == '+' || c == '-') && i + 1 < n && (is_word(chars[i + 1].1) || chars[i + 1].1 == '"')
        {
            modifier = if c == '+' {
                Modifier::Must
            } else {
                Modifier::MustNot
            };
            i += 1;
        }
        if chars[i].1 == '"' || modifier != Modifier::None {
            prev = None;
        }
        if chars[i].1 == '"' {
            let start = i + 1;
            let mut j = start;
            while j < n && chars[j].1 != '"' {
                j += 1;
            }
            let text = &s[byte_at(start)..byte_at(j)];
            i = j + 1;
            let Some(m) = constraint_of(text) else {
                continue;
            };
            clauses += 1;
            push_clause(&mut q, modifier, m);
            continue;
        }
        // A word: up to whitespace or a quote.
        let start = i;
        while i < n && !chars[i].1.is_whitespace() && chars[i].1 != '"' {
            i += 1;
        }
        let word = &s[byte_at(start)..byte_at(i)];
        if let Some(stem) = word.strip_suffix('*') {
            let stem = stem.trim_end_matches('*');
            let prefix: String = stem
                .trim_matches(|c: char| !is_word(c))
                .chars()
                .flat_map(char::to_lowercase)
                .collect();
            if !prefix.is_empty() {
                clauses += 1;
                prev = None;
                push_clause(&mut q, modifier, Matcher::Prefix(prefix));
                continue;
            }
        }
        let tokens = tokenize(word);
        if tokens.is_empty() {
            continue;
        }
        clauses += 1;
        if modifier == Modifier::None {
            let mut atoms = tokens.iter().filter(|t| t.kind == Kind::Atom);
            let first = atoms.next().map(|t| t.text.clone());
            let last = atoms
                .last()
                .map(|t| t.text.clone())
                .or_else(|| first.clone());
            if let (Some(p), Some(f)) = (prev.take(), first) {
                if !(stopwords::is_stopword(&p) && stopwords::is_stopword(&f)) {
                    let m = Matcher::Near(vec![p, f]);
                    if !near.contains(&m) {
                        near.push(m);
                    }
                }
            }
            prev = last;
        }
        match modifier {
            Modifier::MustNot => {
                if let Some(m) = constraint_of(word) {
                    q.must_not.push(m);
                }
            }
            Modifier::Must | Modifier::None => {
                if modifier == Modifier::Must {
                    if let Some(m) = constraint_of(word) {
                        q.must.push(m);
                    }
                }
                if let [t] = tokens.as_slice() {
                    if t.kind == Kind::Atom && stem::is_stemmable(&t.text) {
                        // A word that is its own stem still finds its other forms: `research`
                        // finds `researching` (indexed with `~research`).
                        stems.insert(stem::term(&t.text));
                    }
                }
                for t in tokens {
                    if t.kind == Kind::Stem {
                        // The stem as a word: `appointment` for `appointments`.
                        stems.insert(t.text[STEM_MARK_LEN..].to_owned());
                    }
                    push_should(&mut q, Matcher::Term(t.text));
                }
            }
        }
    }
    let mut own = BTreeSet::new();
    for m in &q.should {
        match m {
            Matcher::Term(t) => {
                own.insert(t.clone());
            }
            Matcher::Phrase(atoms) => own.extend(atoms.iter().cloned()),
            Matcher::Prefix(_) | Matcher::Near(_) => {}
        }
    }
    for s in &stems {
        push_should(&mut q, Matcher::Term(s.clone()));
    }
    for m in near {
        push_should(&mut q, m);
    }
    q.weigh(&own, stems);
    q
}

const STEM_MARK_LEN: usize = stem::STEM_MARK.len_utf8();

/// Adds a clause as its modifier says: `-` excludes, `+` requires (and scores), none scores.
fn push_clause(q: &mut Query, modifier: Modifier, m: Matcher) {
    match modifier {
        Modifier::MustNot => q.must_not.push(m),
        Modifier::Must => {
            q.must.push(m.clone());
            push_should(q, m);
        }
        Modifier::None => push_should(q, m),
    }
}

fn push_should(q: &mut Query, m: Matcher) {
    if !q.should.contains(&m) {
        q.should.push(m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Matcher::*;

    fn t(s: &str) -> Matcher {
        Term(s.into())
    }

    #[test]
    fn words_are_ored_tokens() {
        let q = parse("fix LoginSchema");
        assert_eq!(
            q.should,
            [
                t("fix"),
                t("loginschema"),
                t("login"),
                t("schema"),
                t("~fix"),
                Near(vec!["fix".into(), "login".into()])
            ]
        );
        assert!(q.must.is_empty() && q.must_not.is_empty());
        assert_eq!(
            parse("auth.ts auth").should,
            [
                t("auth.ts"),
                t("auth"),
                t("ts"),
                t("~auth"),
                Near(vec!["ts".into(), "auth".into()])
            ]
        );
    }

    /// Stems are searched with a lower weight; function words weigh less only beside
    /// other words.
    #[test]
    fn stems_and_function_words_are_lighter() {
        let q = parse("how did I book the appointments");
        assert_eq!(
            q.should,
            [
                t("how"),
                t("did"),
                t("i"),
                t("book"),
                t("the"),
                t("appointments"),
                t("~appoint"),
                t("appoint"),
                t("~book"),
                Near(vec!["i".into(), "book".into()]),
                Near(vec!["book".into(), "the".into()]),
                Near(vec!["the".into(), "appointments".into()])
            ]
        );
        let p = SearchParams::default();
        assert_eq!(q.weight("appointments", &p), 1.0);
        assert_eq!(q.weight("book", &p), 1.0);
        assert_eq!(q.weight("~appoint", &p), p.stem_weight);
        assert_eq!(q.weight("appoint", &p), p.stem_weight);
        assert_eq!(q.weight("the", &p), p.stopword_weight);
        // Only function words: they are the query.
        assert_eq!(parse("who are you").weight("who", &p), 1.0);
        // A stem that is also a word of the query keeps full weight.
        assert_eq!(parse("run running").weight("run", &p), 1.0);
        // A word that is its own stem searches the stem term too.
        assert_eq!(parse("research").should, [t("research"), t("~research")]);
        assert_eq!(parse("research").weight("~research", &p), p.stem_weight);
    }

    #[test]
    fn phrases_prefixes_and_modifiers() {
        let q = parse(r#""refresh token" auth* +login_schema -"old code" -legacy"#);
        assert_eq!(
            q.should,
            [
                Phrase(vec!["refresh".into(), "token".into()]),
                Prefix("auth".into()),
                t("login_schema"),
                t("login"),
                t("schema")
            ]
        );
        assert_eq!(q.must, [Phrase(vec!["login".into(), "schema".into()])]);
        assert_eq!(
            q.must_not,
            [Phrase(vec!["old".into(), "code".into()]), t("legacy")]
        );
        assert_eq!(parse("+\"one\"").must, [t("one")]);
        assert_eq!(parse("SRC/Auth*").should, [Prefix("src/auth".into())]);
    }

    #[test]
    fn hostile_queries_never_fail() {
        for s in [
            "",
            "   ",
            "\"",
            "\"\"",
            "\"unbalanced phrase",
            "-",
            "+",
            "*",
            "- + *",
            "+-",
            "-+x",
            "**",
            "🚀🚀",
            "a\"b",
            "--verbose",
        ] {
            let _ = parse(s);
        }
        assert!(parse("-").is_empty());
        assert!(parse("+ - * \" ").is_empty());
        assert!(parse("-only -negative").is_empty());
        assert_eq!(
            parse("\"unbalanced phrase").should,
            [Phrase(vec!["unbalanced".into(), "phrase".into()])]
        );
        assert_eq!(
            parse("--verbose").should,
            [t("verbose"), t("~verbos"), t("verbos")]
        );
        assert_eq!(parse("-+x").should, [t("x")]);
        assert!(parse(&"!?.,;".repeat(200_000)).is_empty());
        let many = "w ".repeat(10_000);
        assert!(parse(&many).should.len() <= MAX_CLAUSES);
        let mut multi = "é".repeat(MAX_QUERY_BYTES);
        multi.push('x');
        let _ = parse(&multi);
    }
}
