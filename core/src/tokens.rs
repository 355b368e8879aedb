//! Exact token counts with OpenAI's BPE encodings, identical to tiktoken's (checked against
//! tiktoken-rs by the tests and the tokenizer fuzz target). Counting runs on every message
//! written, so it uses toktok, an exact backtracking BPE several times faster than tiktoken;
//! its tables are compiled in and loaded once per process, on first use.

use crate::{Error, Result};
use once_cell::sync::Lazy;
use toktok::Tokenizer;

/// The encodings `mem_tokens` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    O200kBase,
    Cl100kBase,
}

impl Encoding {
    /// Parses an encoding name; `None` means the default, o200k_base.
    pub fn parse(name: Option<&str>) -> Result<Self> {
        match name.map(str::trim) {
            None | Some("") | Some("o200k_base") => Ok(Encoding::O200kBase),
            Some("cl100k_base") => Ok(Encoding::Cl100kBase),
            Some(other) => Err(Error::invalid(
                "encoding",
                format!("unknown encoding \"{other}\" (expected o200k_base or cl100k_base)"),
            )),
        }
    }

    /// The encoding's name, as tiktoken spells it.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    fn tokenizer(self) -> &'static Tokenizer {
        static O200K: Lazy<Tokenizer> = Lazy::new(|| builtin(Encoding::O200kBase));
        static CL100K: Lazy<Tokenizer> = Lazy::new(|| builtin(Encoding::Cl100kBase));
        match self {
            Encoding::O200kBase => &O200K,
            Encoding::Cl100kBase => &CL100K,
        }
    }
}

/// The compiled-in tables always load; a failure would be a build defect, caught by the
/// tests on every platform we build for.
fn builtin(e: Encoding) -> Tokenizer {
    Tokenizer::builtin(e.name()).expect("compiled-in BPE tables load")
}

/// Number of tokens in `text`. Special-token spellings in the text count as plain text, as
/// they would when the text is sent to a model as a message.
pub fn count(text: &str, encoding: Encoding) -> i64 {
    encoding.tokenizer().count(text.as_bytes()) as i64
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
            "fn main() { println!(\"{}\", x); }", "  \n\t", "LoginSchema", "refresh_tokens",
            "The quick brown fox", "I'm", "they'll", "'s", "日本語", "中文", "한국어", "ภาษาไทย",
            "العربية", "עברית", "🚀", "👩‍💻", "e\u{301}", "\u{200b}", "\u{feff}", "\u{10ffff}",
            "<|endoftext|>", "<|im_start|>", "12345678901234", "3.14", "src/auth/login.ts", "—",
            "\r\n", "ß", "İ", "ǅ", "   ", "!!!???", "\u{2028}",
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
