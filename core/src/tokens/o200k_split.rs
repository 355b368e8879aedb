//! o200k_base's pre-tokenizer, for ASCII text, byte by byte.
//!
//! Every message written is counted in o200k_base tokens, and most of an agent's messages are
//! ASCII (code, paths, shell output). The encoding splits text with a regular expression before
//! it encodes each piece; on ASCII that expression reduces to a handful of byte classes, which a
//! direct scan decides several times faster than the general regex engine. Pieces are exactly
//! the ones the regex yields (the tests compare the two on random ASCII).
//!
//! The expression, alternatives tried in order at the end of the previous piece:
//!
//! 1. `[^\r\n\p{L}\p{N}]?[\p{Lu}…]*[\p{Ll}…]+('s|'t|'re|'ve|'m|'ll|'d)?` (case-insensitive suffix)
//! 2. `[^\r\n\p{L}\p{N}]?[\p{Lu}…]+[\p{Ll}…]*('s|…)?`
//! 3. `\p{N}{1,3}`
//! 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
//! 5. `\s*[\r\n]+`
//! 6. `\s+(?!\S)`, then 7. `\s+`

/// ASCII byte classes of the expression.
fn is_upper(b: u8) -> bool {
    b.is_ascii_uppercase()
}

fn is_lower(b: u8) -> bool {
    b.is_ascii_lowercase()
}

/// `\s` on ASCII: tab, line feed, vertical tab, form feed, carriage return, space.
fn is_space(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | b' ')
}

fn is_newline(b: u8) -> bool {
    matches!(b, b'\r' | b'\n')
}

/// `[^\s\p{L}\p{N}]`: punctuation, symbols and control characters.
fn is_other(b: u8) -> bool {
    !b.is_ascii_alphanumeric() && !is_space(b)
}

/// `[^\r\n\p{L}\p{N}]`: the optional first byte of a word piece.
fn is_word_prefix(b: u8) -> bool {
    !b.is_ascii_alphanumeric() && !is_newline(b)
}

/// End of the run of bytes matching `class` from `i`.
fn run(t: &[u8], mut i: usize, class: fn(u8) -> bool) -> usize {
    while i < t.len() && class(t[i]) {
        i += 1;
    }
    i
}

/// End of an optional contraction suffix (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`, `'d`, any case)
/// at `i`.
fn contraction(t: &[u8], i: usize) -> usize {
    if t.get(i) != Some(&b'\'') {
        return i;
    }
    let lower = |k: usize| t.get(k).map(u8::to_ascii_lowercase);
    match (lower(i + 1), lower(i + 2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => i + 2,
        (Some(b'r' | b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => i + 3,
        _ => i,
    }
}

/// End of the piece that starts at `i` (`i < t.len()`, `t` ASCII).
fn piece_end(t: &[u8], i: usize) -> usize {
    let b = t[i];
    // 1 and 2: an optional prefix byte, then letters.
    let letters = if is_word_prefix(b) { i + 1 } else { i };
    let upper_end = run(t, letters, is_upper);
    let lower_end = run(t, upper_end, is_lower);
    if lower_end > upper_end || upper_end > letters {
        return contraction(t, lower_end);
    }
    // 3: up to three digits.
    if b.is_ascii_digit() {
        let mut e = i + 1;
        while e < t.len() && e < i + 3 && t[e].is_ascii_digit() {
            e += 1;
        }
        return e;
    }
    // 4: an optional space, symbols, then line breaks and slashes.
    let symbols = if b == b' ' && t.get(i + 1).is_some_and(|&c| is_other(c)) {
        i + 1
    } else {
        i
    };
    if symbols < t.len() && is_other(t[symbols]) {
        let e = run(t, symbols, is_other);
        return run(t, e, |c| is_newline(c) || c == b'/');
    }
    // Only whitespace is left: b is a space byte.
    let spaces_end = run(t, i, is_space);
    // 5: whitespace up to and including its last line break.
    if let Some(last) = t[i..spaces_end].iter().rposition(|&c| is_newline(c)) {
        return i + last + 1;
    }
    // 6: whitespace not followed by a non-space keeps its last byte for the next piece; at
    // the end of the text, or when it is one byte long (7), it is taken whole.
    if spaces_end == t.len() || spaces_end - i == 1 {
        spaces_end
    } else {
        spaces_end - 1
    }
}

/// Calls `f` with each piece of `text`, in order. `text` must be ASCII.
pub(crate) fn for_each_piece<'t>(text: &'t [u8], mut f: impl FnMut(&'t [u8])) {
    debug_assert!(text.is_ascii());
    let mut i = 0;
    while i < text.len() {
        let e = piece_end(text, i);
        f(&text[i..e]);
        i = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ours(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_piece(text.as_bytes(), |p| {
            out.push(std::str::from_utf8(p).unwrap())
        });
        out
    }

    fn regex(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        crate::tokens::Encoding::O200kBase.splitter().for_each_piece(text, |p| {
            out.push(std::str::from_utf8(p).unwrap())
        });
        out
    }

    #[test]
    fn known_pieces() {
        for text in [
            "",
            "hello world",
            "  foo\n\n  bar  ",
            "HTTPServer fooBar don't WE'LL I'M they've",
            "x = 12345; // see src/auth/login.ts\r\n\r\n*/\n/x",
            "\t\tindent\x0b\x0cform (paren) 'quoted' ''s",
            " 1 22 333 4444",
            "a\x00b\x7fc",
            "   ",
            " \n",
            "end with space ",
        ] {
            assert_eq!(ours(text), regex(text), "{text:?}");
        }
    }

    /// Bytes drawn to hit every class and the contraction letters often.
    fn ascii_text() -> impl Strategy<Value = String> {
        let alphabet: Vec<char> = " \t\n\r\x0b\x0c'sStTrReEvVmMlLdDaZ09/.(-_\x00\x7f"
            .chars()
            .collect();
        proptest::collection::vec(
            prop_oneof![
                4 => proptest::sample::select(alphabet),
                1 => (0u8..128).prop_map(char::from),
            ],
            0..80,
        )
        .prop_map(|v| v.into_iter().collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn same_pieces_as_the_regex(text in ascii_text()) {
            prop_assert_eq!(ours(&text), regex(&text));
        }
    }
}
