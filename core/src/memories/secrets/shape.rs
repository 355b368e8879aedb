//! What a secret value looks like, for the rules whose context alone is not enough (a key
//! named `token`, a bare 40-character string): generated credentials are random, while the
//! false positives (identifiers, words, paths, placeholders, hex digests) are not.

/// Shannon entropy of `s` in bits per character (detect-secrets' high-entropy plugins use
/// the same measure).
pub(super) fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.log2()
        })
        .sum()
}

/// Which kinds of character `s` mixes: (lower, upper, digit, other).
fn classes(s: &str) -> (bool, bool, bool, bool) {
    let has = |f: fn(&u8) -> bool| s.bytes().any(|b| f(&b));
    (
        has(u8::is_ascii_lowercase),
        has(u8::is_ascii_uppercase),
        has(u8::is_ascii_digit),
        has(|b| !b.is_ascii_alphanumeric()),
    )
}

/// A generated key: letters of both cases and digits, not only hex digits, and entropy a
/// random string of that length has (hex digests and identifiers fail one or the other).
pub(super) fn random(s: &str) -> bool {
    let (lower, upper, digit, _) = classes(s);
    lower
        && upper
        && digit
        && !s.bytes().all(|b| b.is_ascii_hexdigit())
        && entropy(s) >= (s.len() as f64).log2().min(4.8) - 1.0
}

/// Filler where a key would be (`ghp_xxxxxxxx…`, `AKIA0000…`): a run of eight equal
/// characters, which a generated key all but never has.
pub(super) fn filler(s: &str) -> bool {
    s.as_bytes()
        .windows(8)
        .any(|w| w.iter().all(|&b| b == w[0]))
}

/// Mixes letters with digits or symbols (not the `_ - .` of identifiers), or has both cases
/// past the first letter: how a password or token differs from a word.
pub(super) fn mixed(s: &str) -> bool {
    let (lower, upper, digit, _) = classes(s);
    let other = s
        .bytes()
        .any(|b| b.is_ascii_punctuation() && !b"_-.".contains(&b));
    let letters = lower || upper;
    let inner_upper = s.bytes().skip(1).any(|b| b.is_ascii_uppercase());
    (letters && (digit || other)) || (lower && inner_upper)
}

/// A placeholder, template or reference rather than a value: `${DB_PASSWORD}`, `<token>`,
/// `{{ secret }}`, `%s`, `xxxx`, `****`, `your-api-key`, `changeme`, `[REDACTED]`.
pub(super) fn placeholder(v: &str) -> bool {
    let l = v.to_ascii_lowercase();
    let starts = ["$", "<", "{", "%", "[", "your"];
    let words = [
        "changeme",
        "change_me",
        "placeholder",
        "example",
        "redacted",
        "dummy",
        "fake",
        "replace",
        "secret_here",
        "xxx",
        "***",
        "...",
        "…",
        "todo",
        "none",
        "null",
        "undefined",
        "environ",
        "getenv",
        "env::var",
        "env!(",
    ];
    let stand_ins = ["pass", "password", "passwd", "secret", "token", "test"];
    stand_ins.contains(&l.as_str())
        || starts.iter().any(|p| l.starts_with(p))
        || words.iter().any(|w| l.contains(w))
        || l.ends_with('>')
        || l.bytes().all(|b| b == l.as_bytes()[0])
}

/// Program text rather than a literal: a call, field, path or type (`get_token()`,
/// `self.password`, `env::var`, `Option<String>`, `&str`), or a keyword or type name.
pub(super) fn code(v: &str) -> bool {
    const NAMES: &[&str] = &[
        "true", "false", "nil", "none", "null", "string", "str", "bool", "bytes", "int", "impl",
        "dyn", "mut", "self", "this", "new", "default", "required", "optional", "secret",
        "password", "token", "value", "object", "number", "any",
    ];
    let v = v.trim_start_matches(['&', '*', '!', '(']);
    let ident_end = v
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(v.len());
    let (ident, rest) = v.split_at(ident_end);
    let starts_ident = ident.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    NAMES.contains(&ident.to_ascii_lowercase().as_str())
        || v.starts_with('\'')
        || (starts_ident
            && ["::", ".", "(", "[", "<", "!(", "![", "!{", "->"]
                .iter()
                .any(|p| rest.starts_with(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_keys_from_digests_and_words() {
        assert!(random("wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"));
        assert!(!random("da39a3ee5e6b4b0d3255bfef95601890afd80709"));
        assert!(!random("tokio/src/runtime/scheduler/multi_thread"));
        assert!(mixed("hunter2") && mixed("pAssword") && !mixed("Manager"));
        assert!(code("self.password") && code("Option<String>") && code("&str"));
        assert!(!code("hunter2") && !code("S3cret!"));
        assert!(placeholder("${DB_PASSWORD}") && placeholder("<token>"));
        assert!(!placeholder("hunter2"));
    }
}
