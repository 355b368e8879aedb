//! Agent-style search queries: 1–6 words mixing identifiers and prose, drawn from the
//! generator's vocabulary, deterministic for a seed.
//!
//! The mix (by share of queries):
//! - 20% one identifier that exists whole (`validateLoginSchema`, `refresh_tokens`,
//!   `UserService::find_by_email`), half popular, half from the rare tail;
//! - 25% an identifier with 1–3 prose words (`fix LoginSchema validation`);
//! - 15% a file path with 0–2 words (`src/auth/login.ts failing test`);
//! - 15% error talk (`TypeError undefined userId`, `ECONNREFUSED redis timeout`);
//! - 25% prose of 2–6 words, sometimes with a rare word (`why does refresh fail after deploy`).
//!
//! Prose words come from the same Zipf law as the conversations (so common words such as
//! `error`, `test` and `fix` are common in queries too), except that function words (`the`,
//! `to`, `a`, …) are kept in only a quarter of the draws: agents mostly leave them out, but not
//! always.
//!
//! Queries are plain text, exactly what an agent would type; each engine turns them into its
//! own query syntax (see `sqlite_bench::fts5_match` and `pg_bench`).

use crate::generator::{Rng, Vocab};

#[rustfmt::skip]
const ERROR_WORDS: &[&str] = &[
    "TypeError", "ReferenceError", "KeyError", "AttributeError", "ECONNREFUSED", "ENOENT",
    "panicked", "unwrap", "undefined", "NoneType", "E0382", "E0308", "IntegrityError", "ZodError",
    "Traceback", "timeout", "401", "500", "FAILED", "deadlock",
];

#[rustfmt::skip]
const ASK_WORDS: &[&str] = &[
    "fix", "why", "where", "failing", "error", "bug", "test", "broken", "update", "refactor", "how",
    "does", "validation", "crash", "slow", "missing", "config", "migration", "login", "token",
    "cache", "deploy",
];

/// Generates `n` queries for the vocabulary; `seed` selects the set (warm-up queries use a
/// different seed from the timed ones).
pub fn generate(seed: u64, n: usize, v: &Vocab) -> Vec<String> {
    let mut rng = Rng::fork(seed, 0x0E21E5);
    (0..n).map(|_| one(&mut rng, v)).collect()
}

fn ident(rng: &mut Rng, v: &Vocab) -> String {
    if rng.chance(0.5) {
        v.idents.sample(rng).to_string()
    } else {
        v.idents.sample_tail(rng, 0.8).to_string()
    }
}

/// Function words agents mostly leave out of search queries (kept in 1 of 4 draws).
#[rustfmt::skip]
const FUNCTION_WORDS: &[&str] = &[
    "the", "to", "a", "and", "is", "it", "this", "in", "of", "that", "we", "for", "i", "you", "be",
    "on", "not", "with", "so", "but", "if", "are", "an", "at", "by", "me", "do", "there",
];

fn prose_word(rng: &mut Rng, v: &Vocab) -> String {
    match rng.below(10) {
        0 => v.rare.sample(rng).to_string(),
        1..=4 => rng.pick(ASK_WORDS).to_string(),
        _ => loop {
            let w = v.prose.sample(rng);
            if !FUNCTION_WORDS.contains(&w) || rng.chance(0.25) {
                break w.to_string();
            }
        },
    }
}

fn one(rng: &mut Rng, v: &Vocab) -> String {
    let r = rng.f64();
    let mut words: Vec<String> = Vec::new();
    if r < 0.20 {
        words.push(ident(rng, v));
    } else if r < 0.45 {
        let extra = rng.range(1, 3);
        words.push(ident(rng, v));
        for _ in 0..extra {
            words.push(prose_word(rng, v));
        }
        rotate(rng, &mut words);
    } else if r < 0.60 {
        words.push(v.paths.sample(rng).to_string());
        for _ in 0..rng.below(3) {
            words.push(prose_word(rng, v));
        }
        rotate(rng, &mut words);
    } else if r < 0.75 {
        words.push(rng.pick(ERROR_WORDS).to_string());
        words.push(if rng.chance(0.6) {
            ident(rng, v)
        } else {
            v.snakes.sample(rng).to_string()
        });
        if rng.chance(0.5) {
            words.push(prose_word(rng, v));
        }
    } else {
        let n = rng.range(2, 6);
        for _ in 0..n {
            words.push(prose_word(rng, v));
        }
    }
    words.truncate(6);
    words.join(" ")
}

fn rotate(rng: &mut Rng, words: &mut [String]) {
    if words.len() > 1 {
        let k = rng.below(words.len());
        words.rotate_left(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_to_six_words_deterministic() {
        let v = Vocab::new(1);
        let a = generate(5, 300, &v);
        assert_eq!(a, generate(5, 300, &v));
        assert!(a
            .iter()
            .all(|q| (1..=6).contains(&q.split_whitespace().count())));
        assert_ne!(a, generate(6, 300, &v));
    }
}
