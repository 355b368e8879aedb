//! o200k_base's pre-tokenizer, for ASCII text, byte by byte.
//!
//! Every message written is counted in o200k_base tokens, and most of an agent's messages are
//! ASCII (code, paths, shell output). The encoding splits text with a regular expression before
//! it encodes each piece; on ASCII that expression reduces to a handful of byte classes, which a
//! direct scan decides several times faster than the general regex engine. Pieces are exactly
//! the ones the regex yields (the tests compare the two on random ASCII, and on ASCII mixed
//! with characters outside it, which the regex decides).
//!
//! The expression, alternatives tried in order at the end of the previous piece:
//!
//! 1. `[^\r\n\p{L}\p{N}]?[\p{Lu}…]*[\p{Ll}…]+('s|'t|'re|'ve|'m|'ll|'d)?` (case-insensitive suffix)
//! 2. `[^\r\n\p{L}\p{N}]?[\p{Lu}…]+[\p{Ll}…]*('s|…)?`
//! 3. `\p{N}{1,3}`
//! 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
//! 5. `\s*[\r\n]+`
//! 6. `\s+(?!\S)`, then 7. `\s+`

/// What each byte is to the expression: bits of the classes below, so that a byte is judged
/// by one lookup (the scan reads every byte of every message written).
static CLASSES: [u8; 256] = classes();
const UPPER: u8 = 1;
const LOWER: u8 = 2;
const DIGIT: u8 = 4;
/// `\s` on ASCII: tab, line feed, vertical tab, form feed, carriage return, space.
const SPACE: u8 = 8;
const NEWLINE: u8 = 16;
/// `[^\s\p{L}\p{N}]`: punctuation, symbols and control characters.
const OTHER: u8 = 32;
/// `[^\r\n\p{L}\p{N}]`: the optional first byte of a word piece.
const PREFIX: u8 = 64;
const SLASH: u8 = 128;

const fn classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let space = matches!(b, b'\t'..=b'\r' | b' ');
        let newline = matches!(b, b'\r' | b'\n');
        let alnum = b.is_ascii_alphanumeric();
        t[i] = bit(b.is_ascii_uppercase(), UPPER)
            | bit(b.is_ascii_lowercase(), LOWER)
            | bit(b.is_ascii_digit(), DIGIT)
            | bit(space, SPACE)
            | bit(newline, NEWLINE)
            | bit(!alnum && !space, OTHER)
            | bit(!alnum && !newline, PREFIX)
            | bit(b == b'/', SLASH);
        i += 1;
    }
    t
}

/// `class` when `on`, else no class.
const fn bit(on: bool, class: u8) -> u8 {
    if on {
        class
    } else {
        0
    }
}

/// Whether byte `b` is of any of `classes`.
fn is(b: u8, classes: u8) -> bool {
    CLASSES[usize::from(b)] & classes != 0
}

/// End of the run of bytes of `classes` from `i`.
fn run(t: &[u8], mut i: usize, classes: u8) -> usize {
    while i < t.len() && is(t[i], classes) {
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
    let letters = if is(b, PREFIX) { i + 1 } else { i };
    let upper_end = run(t, letters, UPPER);
    let lower_end = run(t, upper_end, LOWER);
    if lower_end > upper_end || upper_end > letters {
        return contraction(t, lower_end);
    }
    // 3: up to three digits.
    if is(b, DIGIT) {
        let mut e = i + 1;
        while e < t.len() && e < i + 3 && is(t[e], DIGIT) {
            e += 1;
        }
        return e;
    }
    // 4: an optional space, symbols, then line breaks and slashes.
    let symbols = if b == b' ' && t.get(i + 1).is_some_and(|&c| is(c, OTHER)) {
        i + 1
    } else {
        i
    };
    if symbols < t.len() && is(t[symbols], OTHER) {
        let e = run(t, symbols, OTHER);
        return run(t, e, NEWLINE | SLASH);
    }
    // Only whitespace is left: b is a space byte.
    let spaces_end = run(t, i, SPACE);
    // 5: whitespace up to and including its last line break.
    if let Some(last) = t[i..spaces_end].iter().rposition(|&c| is(c, NEWLINE)) {
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

/// Calls `f` with each piece of `text`, in order. Pieces in ASCII text are found by the byte
/// scan; `general` (the encoding's full pre-tokenizer, see [`super::split::Splitter::piece_end`])
/// finds those the scan cannot decide: a piece that starts at a character outside ASCII, or
/// one whose end the scan would decide by reading near one. Chat text is mostly ASCII with a
/// curly quote or an emoji here and there; only the pieces around those take the slow path.
pub(crate) fn for_each_piece<'t>(
    text: &'t str,
    general: impl Fn(&'t str, usize) -> Option<usize>,
    mut f: impl FnMut(&'t [u8]),
) {
    let t = text.as_bytes();
    let first_wide = |from: usize| from + t[from..].iter().take_while(|b| b.is_ascii()).count();
    let mut i = 0;
    // The first byte outside ASCII at or after `i` (`t.len()` when there is none).
    let mut wide = first_wide(0);
    while i < t.len() {
        if wide < i {
            wide = first_wide(i);
        }
        if i < wide {
            // The scan reads at most two bytes past the end it returns (a contraction's
            // letters), so an end more than two bytes before `wide` was decided on ASCII
            // alone, as the expression decides it.
            let e = piece_end(&t[..wide], i);
            if wide == t.len() || e + 2 < wide {
                f(&t[i..e]);
                i = e;
                continue;
            }
        }
        match general(text, i) {
            Some(e) => {
                f(&t[i..e]);
                i = e;
            }
            None => i += text[i..].chars().next().map_or(1, char::len_utf8),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ours(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let general = crate::tokens::Encoding::O200kBase.splitter();
        for_each_piece(
            text,
            |t, at| general.piece_end(t, at),
            |p| out.push(std::str::from_utf8(p).unwrap()),
        );
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
            "it\u{2019}s caf\u{e9} na\u{ef}ve \u{1f680}\u{1f680} ok",
            "word\u{a0} \u{a0}x  \u{3000}y\n\u{85}z",
            "don'\u{17f} K\u{212a} 12\u{663}4 \u{301}a",
            "\u{e9}",
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

    /// ASCII with a character from outside it now and then: every class the expression
    /// tells apart (letters of both cases, marks, digits, spaces and line breaks, the letters
    /// that fold to a contraction's), beside every ASCII class.
    fn mixed_text() -> impl Strategy<Value = String> {
        let wide: Vec<char> = "\u{e9}\u{c9}\u{df}\u{1c5}\u{130}\u{17f}\u{212a}\u{65e5}\u{301}\
            \u{200b}\u{663}\u{967}\u{a0}\u{85}\u{2028}\u{3000}\u{2019}\u{1f680}"
            .chars()
            .collect();
        proptest::collection::vec(
            prop_oneof![
                6 => ascii_text().prop_map(|s| s.chars().take(4).collect::<String>()),
                1 => proptest::sample::select(wide).prop_map(String::from),
            ],
            0..30,
        )
        .prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn same_pieces_as_the_regex(text in ascii_text()) {
            prop_assert_eq!(ours(&text), regex(&text));
        }

        #[test]
        fn same_pieces_as_the_regex_around_wide_characters(text in mixed_text()) {
            prop_assert_eq!(ours(&text), regex(&text));
        }
    }
}
