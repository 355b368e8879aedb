//! The encodings' pre-tokenizers: the regular expressions tiktoken splits text with before it
//! encodes each piece, for any text (`o200k_split` is the fast path for ASCII).
//!
//! tiktoken's expressions end with `\s+(?!\S)`, whitespace not followed by a non-space, a
//! look-ahead a finite automaton cannot run. It is written here as `\s+$` (the end of the
//! text) and `\s+\s` whose last character is handed back: the same pieces.
//!
//! Each search is anchored where the last piece ended and needs only where the piece ends, so
//! the expressions run as one forward lazy DFA: compiling it is half of what the general
//! regex engine compiles (which adds a reverse automaton for finding where matches start),
//! and a process's first count of text beyond ASCII waits for that compile.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::util::pool::Pool;
use regex_automata::{Anchored, Input};
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

/// o200k_base's alternatives, in tiktoken's order.
const O200K: &[&str] = &[
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"\s*[\r\n]+",
];

/// cl100k_base's alternatives, in tiktoken's order.
const CL100K: &[&str] = &[
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
    r"[^\r\n\p{L}\p{N}]?\p{L}+",
    r"\p{N}{1,3}",
    r" ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"\s*[\r\n]+",
];

/// A lazy DFA's caches, one per thread that searches with it at a time.
type Caches = Pool<Cache, Box<dyn Fn() -> Cache + Send + Sync + UnwindSafe + RefUnwindSafe>>;

/// A pre-tokenizer: the alternatives tried in order, then the whitespace ones of the
/// module's note.
pub(crate) struct Splitter {
    dfa: Arc<DFA>,
    caches: Caches,
    /// The pattern whose match hands its last character back (`\s+\s`).
    lookahead: usize,
}

impl Splitter {
    pub(crate) fn o200k() -> Splitter {
        Splitter::new(O200K)
    }

    pub(crate) fn cl100k() -> Splitter {
        Splitter::new(CL100K)
    }

    fn new(alternatives: &[&str]) -> Splitter {
        // One pattern for the alternatives that end a piece where they match, one whose last
        // character is handed back: the fewer patterns, the smaller the automaton's states.
        let ends = format!(r"{}|\s+$", alternatives.join("|"));
        // Constant expressions: they compile, or the crate is broken.
        let dfa = Arc::new(
            DFA::new_many(&[ends.as_str(), r"\s+\s", r"\s+"])
                .expect("the pre-tokenizer's expressions compile"),
        );
        let of = Arc::clone(&dfa);
        Splitter {
            dfa,
            caches: Pool::new(Box::new(move || of.create_cache())),
            lookahead: 1,
        }
    }

    /// Calls `piece` with each piece of `text`, in order.
    pub(crate) fn for_each_piece<'t>(&self, text: &'t str, mut piece: impl FnMut(&'t [u8])) {
        let mut at = 0;
        while at < text.len() {
            match self.piece_end(text, at) {
                Some(end) => {
                    piece(&text.as_bytes()[at..end]);
                    at = end;
                }
                None => at += text[at..].chars().next().map_or(1, char::len_utf8),
            }
        }
    }

    /// The end of the piece that starts at `at` (a character boundary), or `None` when no
    /// alternative takes the character there, which is then skipped, as tiktoken skips what
    /// its expression does not match.
    pub(crate) fn piece_end(&self, text: &str, at: usize) -> Option<usize> {
        // Every character starts a piece (the last alternatives take any space, letter,
        // digit or other character), so each search is anchored where the last piece
        // ended, with no backward pass to find where a match starts.
        let rest = &text[at..];
        let m = self
            .dfa
            .try_search_fwd(
                &mut self.caches.get(),
                &Input::new(rest).anchored(Anchored::Yes),
            )
            // A lazy DFA gives up only on quit bytes or a cache-clear limit; this one has
            // neither.
            .expect("the pre-tokenizer's search runs to its end")?;
        let mut end = m.offset();
        if m.pattern().as_usize() == self.lookahead {
            // Hand back the last character.
            end = rest[..end].char_indices().next_back().map_or(end, |(i, _)| i);
        }
        Some(at + end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::Encoding;
    use proptest::prelude::*;

    fn pieces<'t>(s: &Splitter, text: &'t str) -> Vec<&'t str> {
        let mut out = Vec::new();
        s.for_each_piece(text, |p| out.push(std::str::from_utf8(p).unwrap()));
        out
    }

    /// Text mixing every class the expressions tell apart: cased and uncased letters, marks,
    /// digits of several scripts, every kind of space and line break, contractions.
    fn text() -> impl Strategy<Value = String> {
        let alphabet: Vec<char> = " \t\n\r\x0b\x0c\u{85}\u{a0}\u{2028}\u{3000}'sStTrReEvVmMlLdD\
            aZ09/.(-_\x00\x7féÉßǅİ日本\u{301}\u{200b}١٢३🚀"
            .chars()
            .collect();
        proptest::collection::vec(proptest::sample::select(alphabet), 0..60)
            .prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        /// The same pieces as bpe-openai's pre-tokenizers, which implement the look-ahead
        /// their own way.
        #[test]
        fn same_pieces_as_bpe_openai(text in text()) {
            prop_assert_eq!(
                pieces(Encoding::O200kBase.splitter(), &text),
                bpe_openai::o200k_base().split(&text).collect::<Vec<_>>()
            );
            prop_assert_eq!(
                pieces(Encoding::Cl100kBase.splitter(), &text),
                bpe_openai::cl100k_base().split(&text).collect::<Vec<_>>()
            );
        }
    }
}
