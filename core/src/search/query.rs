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

use super::tokenizer::{tokenize, Kind};

/// Largest number of dictionary terms one `prefix*` expands to.
pub const MAX_PREFIX_TERMS: usize = 64;
/// Largest number of clauses read from one query; the rest is ignored.
pub const MAX_CLAUSES: usize = 64;
/// Only this many bytes of a query are read.
pub const MAX_QUERY_BYTES: usize = 16 * 1024;

/// Something a document can contain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Matcher {
    /// One token.
    Term(String),
    /// Atoms at consecutive positions (two or more).
    Phrase(Vec<String>),
    /// Any dictionary term with this prefix.
    Prefix(String),
}

/// A parsed query: scoring clauses in canonical (query-text) order, and constraints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    /// Clauses that score. Terms are unique among the `Term` clauses.
    pub should: Vec<Matcher>,
    /// Every one of these must occur.
    pub must: Vec<Matcher>,
    /// None of these may occur.
    pub must_not: Vec<Matcher>,
}

impl Query {
    /// True when the query can match nothing (no scoring clause).
    pub fn is_empty(&self) -> bool {
        self.should.is_empty()
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
pub fn parse(query: &str) -> Query {
    let mut q = Query::default();
    let mut end = query.len().min(MAX_QUERY_BYTES);
    while !query.is_char_boundary(end) {
        end -= 1;
    }
    let s = &query[..end];
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
            match modifier {
                Modifier::MustNot => q.must_not.push(m),
                Modifier::Must => {
                    q.must.push(m.clone());
                    push_should(&mut q, m);
                }
                Modifier::None => push_should(&mut q, m),
            }
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
                let m = Matcher::Prefix(prefix);
                match modifier {
                    Modifier::MustNot => q.must_not.push(m),
                    Modifier::Must => {
                        q.must.push(m.clone());
                        push_should(&mut q, m);
                    }
                    Modifier::None => push_should(&mut q, m),
                }
                continue;
            }
        }
        let tokens = tokenize(word);
        if tokens.is_empty() {
            continue;
        }
        clauses += 1;
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
                for t in tokens {
                    push_should(&mut q, Matcher::Term(t.text));
                }
            }
        }
    }
    q
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
            [t("fix"), t("loginschema"), t("login"), t("schema")]
        );
        assert!(q.must.is_empty() && q.must_not.is_empty());
        assert_eq!(
            parse("auth.ts auth").should,
            [t("auth.ts"), t("auth"), t("ts")]
        );
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
        assert_eq!(parse("--verbose").should, [t("verbose")]);
        assert_eq!(parse("-+x").should, [t("x")]);
        assert!(parse(&"!?.,;".repeat(200_000)).is_empty());
        let many = "w ".repeat(10_000);
        assert!(parse(&many).should.len() <= MAX_CLAUSES);
        let mut multi = "é".repeat(MAX_QUERY_BYTES);
        multi.push('x');
        let _ = parse(&multi);
    }
}
