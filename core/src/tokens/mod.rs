//! Exact token counts with OpenAI's BPE encodings, identical to tiktoken's (checked against
//! tiktoken-rs by the tests and the tokenizer fuzz target). Counting runs on every message
//! written: text is split by the encoding's pre-tokenizer ([`split`], or [`o200k_split`] for
//! ASCII), and each piece counted by its merge ranks ([`ranks`]) once, then remembered in a
//! small memo per thread. The ranks ship as pairs of lower ranks, 1.3 MB for both encodings,
//! and are built into a hash table at a process's first count.

pub(crate) mod o200k_split;
mod ranks;
mod split;

use crate::{Error, Result};
use ranks::Ranks;
use split::Splitter;
use std::sync::OnceLock;

/// The encodings `mem_tokens` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) enum Encoding {
    O200kBase,
    Cl100kBase,
}

impl Encoding {
    /// Parses an encoding name; `None` means the default, o200k_base.
    pub(crate) fn parse(name: Option<&str>) -> Result<Self> {
        match name.map(str::trim) {
            None | Some("") | Some("o200k_base") => Ok(Encoding::O200kBase),
            Some("cl100k_base") => Ok(Encoding::Cl100kBase),
            Some(other) => Err(Error::invalid(
                "encoding",
                format!("unknown encoding \"{other}\" (expected o200k_base or cl100k_base)"),
            )),
        }
    }

    fn ranks(self) -> &'static Ranks {
        static O200K: OnceLock<Ranks> = OnceLock::new();
        static CL100K: OnceLock<Ranks> = OnceLock::new();
        match self {
            Encoding::O200kBase => Ranks::of(
                &O200K,
                include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.ranks")),
            ),
            Encoding::Cl100kBase => Ranks::of(
                &CL100K,
                include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.ranks")),
            ),
        }
    }

    fn splitter(self) -> &'static Splitter {
        static O200K: OnceLock<Splitter> = OnceLock::new();
        static CL100K: OnceLock<Splitter> = OnceLock::new();
        match self {
            Encoding::O200kBase => O200K.get_or_init(Splitter::o200k),
            Encoding::Cl100kBase => CL100K.get_or_init(Splitter::cl100k),
        }
    }
}

/// Number of tokens in `text`. Special-token spellings in the text count as plain text, as
/// they would when the text is sent to a model as a message.
///
/// The text is split by the encoding's pre-tokenizer and each piece is encoded on its own (as
/// tiktoken does), so a piece's count never depends on its neighbors: short pieces — words,
/// identifiers, indentation, punctuation, which repeat all through an agent's messages — are
/// counted once and remembered in a small direct-mapped memo per thread.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn count(text: &str, encoding: Encoding) -> i64 {
    let ranks = encoding.ranks();
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        let memo = &mut memo[encoding as usize];
        let mut n = 0usize;
        let piece = |b: &[u8]| {
            n += memo.get_or(b, || ranks.count(b) as u32) as usize;
        };
        if encoding == Encoding::O200kBase {
            o200k_split::for_each_piece(text, |t, at| encoding.splitter().piece_end(t, at), piece);
        } else {
            encoding.splitter().for_each_piece(text, piece);
        }
        n as i64
    })
}

/// Builds the tables of the default encoding (o200k_base) now, if no count has yet: its merge
/// ranks, then its pre-tokenizer of text beyond ASCII (which the context line of every code
/// chunk needs). A host that knows it is about to write (`agentmem index`, having found a
/// changed file) calls it on another thread, so that its first count does not wait for the
/// build; a count that comes while it runs waits for it instead of building again.
pub fn prepare_tables() {
    Encoding::O200kBase.ranks();
    Encoding::O200kBase.splitter();
}

/// Pieces longer than this are not remembered.
const PIECE_BYTES: usize = 23;
/// Remembered counts per encoding and thread (1 MiB, allocated on first use).
const SLOTS: usize = 1 << 15;

type Memo = crate::memo::Memo<PIECE_BYTES, u32>;

thread_local! {
    static MEMO: std::cell::RefCell<[Memo; 2]> = std::cell::RefCell::new([Memo::new(SLOTS), Memo::new(SLOTS)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_counts() {
        assert_eq!(count("", Encoding::O200kBase), 0);
        assert_eq!(count("hello world", Encoding::O200kBase), 2);
        assert_eq!(count("hello world", Encoding::Cl100kBase), 2);
        // Special-token text is counted as ordinary text, never as one special token.
        assert!(count("<|endoftext|>", Encoding::Cl100kBase) > 1);
    }

    /// Same counts as tiktoken on text of every kind: code, prose, scripts, emoji, combining
    /// marks, invisible characters, special-token spellings.
    #[test]
    fn counts_equal_tiktoken() {
        let pieces = [
            "fn main() { println!(\"{}\", x); }",
            "  \n\t",
            "LoginSchema",
            "refresh_tokens",
            "The quick brown fox",
            "I'm",
            "they'll",
            "'s",
            "日本語",
            "中文",
            "한국어",
            "ภาษาไทย",
            "العربية",
            "עברית",
            "🚀",
            "👩‍💻",
            "e\u{301}",
            "\u{200b}",
            "\u{feff}",
            "\u{10ffff}",
            "<|endoftext|>",
            "<|im_start|>",
            "12345678901234",
            "3.14",
            "src/auth/login.ts",
            "—",
            "\r\n",
            "ß",
            "İ",
            "ǅ",
            "   ",
            "!!!???",
            "\u{2028}",
        ];
        let refs = [
            (Encoding::O200kBase, tiktoken_rs::o200k_base_singleton()),
            (Encoding::Cl100kBase, tiktoken_rs::cl100k_base_singleton()),
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            let mut s = String::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for k in 0..(x % 12) {
                let r = x.rotate_left(k as u32 * 5);
                s.push_str(pieces[(r % pieces.len() as u64) as usize]);
                if r & 64 != 0 {
                    s.push(' ');
                }
            }
            for (e, bpe) in &refs {
                assert_eq!(
                    count(&s, *e),
                    bpe.encode_ordinary(&s).len() as i64,
                    "{e:?} {s:?}"
                );
            }
        }
    }

    #[test]
    fn unknown_encoding_is_named() {
        let e = Encoding::parse(Some("p50k")).unwrap_err().to_string();
        assert!(e.starts_with("encoding: unknown encoding \"p50k\""), "{e}");
    }
}
