//! Exact token counts with OpenAI's BPE encodings (tiktoken). The tables are decoded once
//! per process, on first use.

use crate::{Error, Result};
use tiktoken_rs::CoreBPE;

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

    fn bpe(self) -> &'static CoreBPE {
        match self {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        }
    }
}

/// Number of tokens in `text`. Special-token spellings in the text count as plain text, as
/// they would when the text is sent to a model as a message.
pub fn count(text: &str, encoding: Encoding) -> i64 {
    encoding.bpe().encode_ordinary(text).len() as i64
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

    #[test]
    fn unknown_encoding_is_named() {
        let e = Encoding::parse(Some("p50k")).unwrap_err().to_string();
        assert!(e.starts_with("encoding: unknown encoding \"p50k\""), "{e}");
    }
}
