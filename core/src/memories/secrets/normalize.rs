//! The text the rules read: a secret disguised with look-alike letters (`ѕk-` with a Cyrillic
//! `ѕ`, full-width `ｓｋ-`), broken by invisible characters, or written as JSON `\uXXXX`
//! escapes still reads, to a model, as the secret it is. The rules are ASCII patterns, so the
//! text is first brought to the letters it shows, keeping for every byte where it came from:
//! findings must name positions in the original, which is what is refused or redacted.

use unicode_normalization::UnicodeNormalization;

/// The normalised text and, for each of its bytes, the byte range of the original it came
/// from (`None` when normalising changed nothing, the common case).
pub(super) struct Normalized<'a> {
    pub text: std::borrow::Cow<'a, str>,
    from: Option<Vec<(usize, usize)>>,
}

impl Normalized<'_> {
    /// The original byte range of the normalised range `start..end` (`start < end`).
    pub(super) fn original(&self, start: usize, end: usize) -> (usize, usize) {
        match &self.from {
            None => (start, end),
            Some(m) => (m[start].0, m[end - 1].1),
        }
    }
}

/// `text` in NFKC (applied per character, so each output maps to one input), without
/// invisible characters, with look-alike letters replaced by the Latin ones and JSON `\uXXXX`
/// escapes decoded.
pub(super) fn normalize(text: &str) -> Normalized<'_> {
    if text.is_ascii() && !text.contains("\\u") {
        return Normalized {
            text: text.into(),
            from: None,
        };
    }
    let mut out = String::with_capacity(text.len());
    let mut from = Vec::with_capacity(text.len());
    let mut at = 0;
    while at < text.len() {
        let (c, len) = unescape(&text[at..]).unwrap_or_else(|| {
            let c = text[at..].chars().next().expect("inside the text");
            (c, c.len_utf8())
        });
        if !invisible(c) {
            for n in std::iter::once(c).nfkc() {
                let n = latin(n);
                for _ in 0..n.len_utf8() {
                    from.push((at, at + len));
                }
                out.push(n);
            }
        }
        at += len;
    }
    Normalized {
        text: out.into(),
        from: Some(from),
    }
}

/// The character a JSON `\uXXXX` escape (or surrogate pair) at the start of `s` stands for,
/// and the escape's length.
fn unescape(s: &str) -> Option<(char, usize)> {
    let unit = |s: &str| {
        let hex = s.strip_prefix("\\u")?.get(..4)?;
        u32::from_str_radix(hex, 16).ok()
    };
    let hi = unit(s)?;
    if (0xD800..0xDC00).contains(&hi) {
        let lo = unit(&s[6..]).filter(|lo| (0xDC00..0xE000).contains(lo))?;
        let c = char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?;
        return Some((c, 12));
    }
    Some((char::from_u32(hi)?, 6))
}

/// Characters that show nothing: zero-width spaces and joiners, word joiner, byte-order
/// mark, soft hyphen.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}'
    )
}

/// The Latin letter a Cyrillic or Greek look-alike shows (the letters that render the same
/// in common fonts); any other character as it is.
fn latin(c: char) -> char {
    match c {
        'а' | 'α' => 'a',
        'с' | 'ϲ' => 'c',
        'ԁ' => 'd',
        'е' | 'ε' => 'e',
        'һ' => 'h',
        'і' | 'ι' => 'i',
        'ј' => 'j',
        'κ' => 'k',
        'ӏ' => 'l',
        'о' | 'ο' => 'o',
        'р' | 'ρ' => 'p',
        'ԛ' => 'q',
        'ѕ' => 's',
        'υ' => 'u',
        'ν' | 'ѵ' => 'v',
        'ԝ' => 'w',
        'х' | 'χ' => 'x',
        'у' => 'y',
        'А' | 'Α' => 'A',
        'В' | 'Β' => 'B',
        'С' | 'Ϲ' => 'C',
        'Е' | 'Ε' => 'E',
        'Н' | 'Η' => 'H',
        'І' | 'Ι' => 'I',
        'Ј' => 'J',
        'К' | 'Κ' => 'K',
        'М' | 'Μ' => 'M',
        'Ν' => 'N',
        'О' | 'Ο' => 'O',
        'Р' | 'Ρ' => 'P',
        'Ѕ' => 'S',
        'Т' | 'Τ' => 'T',
        'Х' | 'Χ' => 'X',
        'У' | 'Υ' => 'Y',
        'Ζ' => 'Z',
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_back_to_the_original() {
        let t = "x ѕk-\u{200B}ａ\\u0062 y";
        let n = normalize(t);
        assert_eq!(n.text, "x sk-ab y");
        let s = n.text.find("sk").unwrap();
        let (a, b) = n.original(s, s + "sk-ab".len());
        assert_eq!(&t[a..b], "ѕk-\u{200B}ａ\\u0062");
    }

    #[test]
    fn decodes_surrogate_pairs_and_leaves_bad_escapes() {
        assert_eq!(normalize("\\ud83d\\ude00 \\uZZZZ").text, "😀 \\uZZZZ");
    }
}
