//! The tokenizer for code and prose.
//!
//! Text is cut into *compounds*: runs of word characters (Unicode letters and digits, `_`)
//! joined by `.`, `-`, `/`, `\` or `::` when a word character follows the joiner. A compound
//! yields
//!
//! * its **whole** form (lower-cased, joiners kept) when it has more than one atom:
//!   `src/auth/login.ts`, `loginschema`, `login_schema`, `my-component`, `foo::bar`;
//! * each joiner-separated **piece** that itself has more than one atom, when the compound
//!   has several pieces: `loginschema` in `src/LoginSchema.ts`;
//! * its **atoms**: pieces split at `_` and at camel-case boundaries (`loginSchema`,
//!   `HTTPServer` → `http`, `server`), lower-cased. Han, Hiragana and Katakana characters are
//!   atoms on their own (those scripts do not separate words by spaces).
//!
//! Atoms take consecutive positions; a whole or piece token takes the position of its first
//! atom. Phrases are matched on atom positions, so `"login schema"` also finds `LoginSchema`.
//! A query for `login_schema` yields `login_schema`, `login`, `schema`: a document holding the
//! exact name matches all three and ranks above one that only has the parts.
//!
//! A compound of one atom that is an English word also yields its **stem** (`~test` for
//! `tests`, see [`super::stem`]) at the word's position; stems are not atoms, so phrases
//! and document lengths ignore them.

/// Atoms longer than this many bytes are cut (at a character boundary): hashes and base64
/// blobs stay searchable by their start without bloating the dictionary.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const MAX_ATOM_BYTES: usize = 64;
/// Whole and piece tokens longer than this are not emitted (their atoms still are).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const MAX_WHOLE_BYTES: usize = 128;

/// What a token stands for inside its compound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) enum Kind {
    /// The whole compound (`src/auth/login.ts`).
    Whole,
    /// One joiner-separated piece of several atoms (`login_schema` in `a/login_schema.rs`).
    Piece,
    /// A smallest part (`login`).
    Atom,
    /// The stem term of a standalone English word (`~test` for `tests`).
    Stem,
}

/// One token with its position and its byte span in the source text.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Token {
    pub text: String,
    pub pos: u32,
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

fn is_word(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// What a byte is to the scan: bits of [`WORD`], [`UPPER`], [`LOWER`], [`DIGIT`] for ASCII,
/// none for the bytes of wider characters. ASCII is most of an agent's text; one lookup judges
/// a byte where the `char` tests take several.
static ASCII: [u8; 256] = ascii_classes();
const WORD: u8 = 1;
const UPPER: u8 = 2;
const LOWER: u8 = 4;
const DIGIT: u8 = 8;

const fn ascii_classes() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_uppercase() {
            WORD | UPPER
        } else if c.is_ascii_lowercase() {
            WORD | LOWER
        } else if c.is_ascii_digit() {
            WORD | DIGIT
        } else if c == b'_' {
            WORD
        } else {
            0
        };
        b += 1;
    }
    t
}

/// Whether byte `b` is an ASCII character of `class`.
fn ascii_is(b: u8, class: u8) -> bool {
    ASCII[usize::from(b)] & class != 0
}

/// Whether the character at byte `i` of `text` is a word character, and its length in bytes.
fn word_at(text: &str, i: usize) -> (bool, usize) {
    match text.as_bytes()[i] {
        b @ 0..=0x7f => (ascii_is(b, WORD), 1),
        _ => {
            let c = char_at(text, i);
            (is_word(c), c.len_utf8())
        }
    }
}

/// The character starting at byte `i` of `text` (a character boundary before its end): one
/// byte read for ASCII, which is most of an agent's text.
fn char_at(text: &str, i: usize) -> char {
    match text.as_bytes()[i] {
        b @ 0..=0x7f => char::from(b),
        _ => text[i..]
            .chars()
            .next()
            .unwrap_or(char::REPLACEMENT_CHARACTER),
    }
}

/// Scripts written without spaces: each character is an atom.
fn is_ideograph(c: char) -> bool {
    (c as u32) >= 0x3040
        && matches!(c as u32,
        0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF    // CJK Extension A
        | 0x4E00..=0x9FFF    // CJK Unified Ideographs
        | 0xF900..=0xFAFF    // CJK Compatibility Ideographs
        | 0x20000..=0x2FFFF) // CJK Extensions B..
}

/// `s` lower-cased into `out` (replacing its content).
fn lower_into(s: &str, out: &mut String) {
    out.clear();
    if s.is_ascii() {
        out.push_str(s);
        out.make_ascii_lowercase();
    } else {
        out.extend(s.chars().flat_map(char::to_lowercase));
    }
}

/// Cuts `s` to at most `max` bytes, at a character boundary.
fn cut_at(s: &mut String, max: usize) {
    let end = crate::text::head_bytes(s, max).len();
    s.truncate(end);
}

/// Splits one piece (word characters only, `ascii` when every one is ASCII) into atom byte
/// ranges relative to `text`.
fn split_atoms(text: &str, base: usize, ascii: bool, out: &mut Vec<(usize, usize)>) {
    if ascii {
        split_ascii(text.as_bytes(), base, out);
    } else {
        split_chars(text, base, out);
    }
}

/// [`split_chars`] of a piece of ASCII word characters, read byte by byte: the same atoms.
fn split_ascii(piece: &[u8], base: usize, out: &mut Vec<(usize, usize)>) {
    let mut start: Option<usize> = None;
    let mut prev = 0u8;
    for (off, &b) in piece.iter().enumerate() {
        if b == b'_' {
            if let Some(s) = start.take() {
                out.push((base + s, base + off));
            }
        } else if let Some(s) = start {
            let lower = |c: &u8| ascii_is(*c, LOWER);
            let boundary = ascii_is(b, UPPER)
                && (lower(&prev)
                    || ascii_is(prev, DIGIT) && piece[s..off].iter().any(lower)
                    || ascii_is(prev, UPPER) && piece.get(off + 1).is_some_and(lower));
            if boundary {
                out.push((base + s, base + off));
                start = Some(off);
            }
        } else {
            start = Some(off);
        }
        prev = b;
    }
    if let Some(s) = start {
        out.push((base + s, base + piece.len()));
    }
}

/// Splits a piece into atoms at `_`, at camel-case boundaries (`loginSchema`, `HTTPServer`,
/// `utf8Decode`) and around each ideograph, by its characters.
fn split_chars(text: &str, base: usize, out: &mut Vec<(usize, usize)>) {
    let mut start: Option<usize> = None;
    let mut prev = '\0';
    let mut it = text.char_indices().peekable();
    while let Some((off, c)) = it.next() {
        let next = it.peek().map(|&(_, n)| n);
        if c == '_' {
            if let Some(s) = start.take() {
                out.push((base + s, base + off));
            }
        } else if is_ideograph(c) {
            if let Some(s) = start.take() {
                out.push((base + s, base + off));
            }
            out.push((base + off, base + off + c.len_utf8()));
        } else if let Some(s) = start {
            let boundary = (c.is_uppercase()
                && (prev.is_lowercase()
                    || prev.is_numeric() && s < off && has_lower(&text[s..off])))
                || (c.is_uppercase()
                    && prev.is_uppercase()
                    && next.is_some_and(char::is_lowercase));
            if boundary {
                out.push((base + s, base + off));
                start = Some(off);
            }
        } else {
            start = Some(off);
        }
        prev = c;
    }
    if let Some(s) = start {
        out.push((base + s, base + text.len()));
    }
}

fn has_lower(s: &str) -> bool {
    s.chars().any(char::is_lowercase)
}

/// Length in bytes of a joiner at the start of `rest` that is followed by a word character.
fn joiner_len(rest: &str) -> usize {
    let len = if rest.starts_with("::") {
        2
    } else {
        match rest.chars().next() {
            Some('.' | '-' | '/' | '\\') => 1,
            _ => return 0,
        }
    };
    match rest[len..].chars().next() {
        Some(c) if is_word(c) => len,
        _ => 0,
    }
}

/// Tokenizes `text` into every token (wholes, pieces, atoms, stems) with positions and spans.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn tokenize(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    tokenize_into(text, &mut out);
    out
}

/// Like [`tokenize`], appending to `out`.
pub(crate) fn tokenize_into(text: &str, out: &mut Vec<Token>) {
    scan(text, &mut |t, pos, start, end, kind| {
        out.push(Token {
            text: t.to_owned(),
            pos,
            start,
            end,
            kind,
        })
    });
}

/// Calls `emit(text, pos, start, end, kind)` for each token in [`tokenize`]'s order, the text
/// lent from a buffer the scan reuses: indexing allocates nothing per token.
pub(crate) fn scan(text: &str, emit: &mut dyn FnMut(&str, u32, usize, usize, Kind)) {
    let mut pos: u32 = 0;
    let mut i = 0;
    let bytes = text.len();
    let mut pieces: Vec<(usize, usize, bool)> = Vec::new();
    let mut atoms: Vec<(usize, usize)> = Vec::new();
    let mut piece_atoms: Vec<usize> = Vec::new();
    let mut buf = String::new();
    let mut stem_buf = String::new();
    while i < bytes {
        let (word, len) = word_at(text, i);
        if !word {
            i += len;
            continue;
        }
        // A compound starts at i.
        pieces.clear();
        let start = i;
        loop {
            let ps = i;
            let mut ascii = true;
            while i < bytes {
                // `word_at` inlined: an ASCII byte needs no length.
                let b = text.as_bytes()[i];
                if b < 0x80 {
                    if !ascii_is(b, WORD) {
                        break;
                    }
                    i += 1;
                    continue;
                }
                let c = char_at(text, i);
                if !is_word(c) {
                    break;
                }
                ascii = false;
                i += c.len_utf8();
            }
            pieces.push((ps, i, ascii));
            let j = joiner_len(&text[i..]);
            if j == 0 {
                break;
            }
            i += j;
        }
        let end = i;
        atoms.clear();
        piece_atoms.clear();
        for &(ps, pe, ascii) in &pieces {
            let before = atoms.len();
            split_atoms(&text[ps..pe], ps, ascii, &mut atoms);
            piece_atoms.push(atoms.len() - before);
        }
        if atoms.is_empty() {
            continue; // only underscores
        }
        let first_pos = pos;
        if atoms.len() > 1 {
            let (ws, we) = trim_underscores(text, start, end);
            lower_into(&text[ws..we], &mut buf);
            if buf.len() <= MAX_WHOLE_BYTES {
                emit(&buf, first_pos, ws, we, Kind::Whole);
            }
        }
        let mut a = 0;
        for (k, &(ps, pe, _)) in pieces.iter().enumerate() {
            let na = piece_atoms[k];
            if na > 1 && pieces.len() > 1 {
                let (ws, we) = trim_underscores(text, ps, pe);
                lower_into(&text[ws..we], &mut buf);
                if buf.len() <= MAX_WHOLE_BYTES {
                    emit(&buf, pos, ws, we, Kind::Piece);
                }
            }
            for &(s, e) in &atoms[a..a + na] {
                lower_into(&text[s..e], &mut buf);
                cut_at(&mut buf, MAX_ATOM_BYTES);
                emit(&buf, pos, s, e, Kind::Atom);
                if atoms.len() == 1 && super::stem::stem_into(&buf, &mut stem_buf) {
                    emit(&stem_buf, pos, s, e, Kind::Stem);
                }
                pos = pos.saturating_add(1);
            }
            a += na;
        }
    }
}

fn trim_underscores(text: &str, mut s: usize, mut e: usize) -> (usize, usize) {
    let b = text.as_bytes();
    while s < e && b[s] == b'_' {
        s += 1;
    }
    while e > s && b[e - 1] == b'_' {
        e -= 1;
    }
    (s, e)
}

/// The token texts only, in emission order.
#[cfg(test)]
pub(crate) fn token_texts(text: &str) -> Vec<String> {
    tokenize(text).into_iter().map(|t| t.text).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ascii_classes_are_the_char_tests() {
        for b in 0u8..0x80 {
            let c = char::from(b);
            assert_eq!(ascii_is(b, WORD), is_word(c), "{b:#x}");
            assert_eq!(ascii_is(b, UPPER), c.is_uppercase(), "{b:#x}");
            assert_eq!(ascii_is(b, LOWER), c.is_lowercase(), "{b:#x}");
            assert_eq!(ascii_is(b, DIGIT), c.is_numeric(), "{b:#x}");
            assert_eq!(word_at(&c.to_string(), 0), (is_word(c), 1), "{b:#x}");
        }
    }

    /// ASCII pieces: any word characters, or runs of camel case, digits and underscores.
    const PIECES: &str = "[A-Za-z0-9_]{0,24}|([A-Z]{1,3}[a-z]{0,3}[0-9]{0,2}_?){1,6}";

    proptest! {
        /// The byte-wise split of an ASCII piece finds the atoms the split by characters finds.
        #[test]
        fn ascii_split_is_the_char_split(piece in PIECES, base in 0usize..1000) {
            let (mut bytes, mut chars) = (Vec::new(), Vec::new());
            split_ascii(piece.as_bytes(), base, &mut bytes);
            split_chars(&piece, base, &mut chars);
            prop_assert_eq!(bytes, chars);
        }
    }

    fn texts(s: &str) -> Vec<String> {
        token_texts(s)
    }

    #[test]
    fn camel_case_is_whole_and_parts() {
        assert_eq!(texts("LoginSchema"), ["loginschema", "login", "schema"]);
        assert_eq!(
            texts("HTTPServerError"),
            ["httpservererror", "http", "server", "error"]
        );
        assert_eq!(texts("parseJSON"), ["parsejson", "parse", "json"]);
        assert_eq!(texts("utf8Decode"), ["utf8decode", "utf8", "decode"]);
    }

    #[test]
    fn snake_kebab_and_paths() {
        assert_eq!(
            texts("refresh_tokens"),
            ["refresh_tokens", "refresh", "tokens"]
        );
        assert_eq!(texts("my-component"), ["my-component", "my", "component"]);
        assert_eq!(
            texts("src/auth/login.ts"),
            ["src/auth/login.ts", "src", "auth", "login", "ts"]
        );
        assert_eq!(texts("Foo::bar"), ["foo::bar", "foo", "bar"]);
        assert_eq!(
            texts("src/LoginSchema.ts"),
            [
                "src/loginschema.ts",
                "src",
                "loginschema",
                "login",
                "schema",
                "ts"
            ]
        );
        assert_eq!(texts("__init__"), ["init"]);
        assert_eq!(texts("_private_fn"), ["private_fn", "private", "fn"]);
    }

    #[test]
    fn prose_and_trailing_punctuation() {
        assert_eq!(
            texts("It works. Then, ok!"),
            ["it", "works", "~work", "then", "ok"]
        );
        // Words inside identifiers are not stemmed.
        assert_eq!(
            texts("tests_passing"),
            ["tests_passing", "tests", "passing"]
        );
        assert_eq!(texts("see auth.ts."), ["see", "auth.ts", "auth", "ts"]);
        assert_eq!(texts("v1.2.3"), ["v1.2.3", "v1", "2", "3"]);
        assert_eq!(texts("Ünïcödé WÖRDS"), ["ünïcödé", "wörds"]);
        assert_eq!(
            texts("東京タワー"),
            ["東京タワー", "東", "京", "タ", "ワ", "ー"]
        );
    }

    #[test]
    fn positions_follow_atoms() {
        let t = tokenize("use LoginSchema now");
        let p: Vec<(String, u32)> = t.iter().map(|t| (t.text.clone(), t.pos)).collect();
        assert_eq!(
            p,
            [
                ("use".into(), 0),
                ("loginschema".into(), 1),
                ("login".into(), 1),
                ("schema".into(), 2),
                ("now".into(), 3)
            ]
        );
        assert_eq!(&"use LoginSchema now"[t[1].start..t[1].end], "LoginSchema");
    }

    #[test]
    fn hostile_input() {
        assert!(texts("").is_empty());
        assert!(texts("!!! ::: --- /// \"\" ''").is_empty());
        assert_eq!(texts("🚀 launch 🚀"), ["launch"]);
        assert!(texts("___").is_empty());
        let punct = "!@#$%^&*()-+=[]{};:'\",.<>/?\\|`~".repeat(40_000);
        assert!(texts(&punct).is_empty());
        let long = "a".repeat(1000);
        assert_eq!(texts(&long)[0].len(), MAX_ATOM_BYTES);
        let mixed: String = (0..5000)
            .map(|i| char::from_u32(i * 13 % 0x10FFFF).unwrap_or('x'))
            .collect();
        let _ = tokenize(&mixed);
    }
}
