//! Secrets recognised by what they are called: a value given to a key that names a secret,
//! in any of the forms an agent pastes (`.env` lines, `export X=…`, YAML `key: value`, JSON
//! `"api_key": "…"`, code `password = '…'`, `<password>…</password>`, URL queries), and prose
//! such as "the password is hunter2". The whole value is the finding: a quoted value up to its
//! closing quote, a bare one up to the next space.
//!
//! The name alone would flag every `token: Token` and `password_length = 8`, so the key is
//! read word by word (a trailing `_id`, `_path`, `_len` … names something else) and the value
//! must look like a literal secret, not code, a placeholder or an ordinary word.

use super::{shape, Hit, Rank};
use once_cell::sync::Lazy;
use regex::Regex;

/// A key containing a secret-ish stem, its optional closing quote or bracket, and the
/// assignment or comparison operator.
static ASSIGN: Lazy<Regex> = Lazy::new(|| {
    Regex::new(
        r#"(?i)(?:^|[^A-Za-z0-9_.$-])["']?([A-Za-z0-9_.$-]*(?:pass|pwd|secret|token|key|cred|auth|contrase)[A-Za-z0-9_.-]*)["']?\]?[ \t]*(?::{1,3}=|\?=|=>|===?|!==?|:|=)[ \t]*@?"#,
    )
    .expect("assignment pattern compiles")
});

/// `<password>…</password>` and the like.
static ELEMENT: Lazy<Regex> = Lazy::new(|| {
    Regex::new(r"<([A-Za-z][\w:.-]{0,60})>([^<\s][^<]{0,200})</([A-Za-z][\w:.-]{0,60})>")
        .expect("element pattern compiles")
});

/// "the password is hunter2", "my API key for prod is …", "token: …" in a sentence.
static PROSE: Lazy<Regex> = Lazy::new(|| {
    Regex::new(
        r#"(?i)\b(password|passphrase|passcode|passwd|pwd|api[ _-]?key|secret key|access token|auth token|token|secret)\s+(?:(?:for|of|to|on)\s+(?:the\s+)?[\w.@/-]+\s+)?(?:is|was|reads|=|:)\s+(?:set\s+to\s+|now\s+)?(["'`]?)([^\s"'`]+)"#,
    )
    .expect("prose pattern compiles")
});

/// What a secret-ish key names, if it names a secret value.
#[derive(Clone, Copy, PartialEq)]
enum Class {
    Password,
    Secret,
    AwsSecret,
}

impl Class {
    fn kind(self) -> &'static str {
        match self {
            Class::Password => "password",
            Class::Secret => "secret",
            Class::AwsSecret => "AWS secret access key",
        }
    }
}

/// Words that, last in a key, make it name something about a secret rather than the secret:
/// `token_type`, `password_length`, `api_key_id`, `secret_path`.
#[rustfmt::skip]
const ABOUT: &[&str] = &[
    "id", "ids", "name", "names", "type", "types", "file", "files", "path", "paths", "dir",
    "url", "uri", "endpoint", "host", "len", "length", "size", "count", "max", "min", "limit",
    "field", "fields", "header", "prefix", "suffix", "env", "var", "hint", "format", "regex",
    "pattern", "policy", "expiry", "expires", "expiration", "ttl", "timeout", "at", "kind",
    "mode", "hash", "hashed", "digest", "source", "provider", "store", "manager", "label",
    "template", "required", "enabled", "valid", "schema", "column", "index", "version",
    "algorithm", "alg", "usage", "scope", "scopes", "location", "ref", "arn", "flag", "rule",
    "option", "options", "config", "command", "cmd", "helper", "prompt", "input", "form",
    "reset", "strength", "visible", "class", "style", "fn", "func", "callback", "handler",
    "error", "errors", "message", "msg", "set", "get", "check", "changed", "map", "list",
    "kinds", "stream", "tree", "range", "span", "pos", "start", "end", "offset", "parser",
    "iter", "node", "nodes", "ring", "pair",
    // A file name (`src/token.rs:183:`) in tool output.
    "rs", "py", "js", "ts", "go", "md", "json", "toml", "yml", "yaml", "txt", "c", "h", "java",
    "rb", "sh", "lock", "cfg", "ini", "html", "css", "pem", "crt", "log",
];

/// Words before `key` that make it a credential (`api_key`, `signing_key`), where a bare
/// `key` is a map key, a primary key or a keyboard key.
#[rustfmt::skip]
const KEY_OF: &[&str] = &[
    "api", "access", "private", "secret", "signing", "encryption", "master", "client",
    "account", "service", "db", "database", "app", "auth", "license", "shared", "storage",
    "consumer", "session", "subscription", "x", "admin", "root", "deploy", "gpg", "crypto",
    "cipher", "hmac", "jwt", "webhook", "openai", "anthropic", "stripe", "aws", "azure", "gcp",
];

/// Lower-case words that, given bare to a password key, are the variable holding it or say
/// something about it (`password: expired`).
#[rustfmt::skip]
const NOT_PASSWORDS: &[&str] = &[
    "input", "hashed", "plaintext", "string", "config", "params", "prompt", "buffer", "entered",
    "stored", "encrypted", "encoded", "decoded", "provided", "supplied", "credentials",
    "invalid", "incorrect", "expired", "changed", "protected", "missing", "hidden", "masked",
    "redacted", "unset", "disabled", "enabled", "wrong", "empty", "unknown", "correct",
];

/// The key's words, lower case: split at `_ - . $` and at lower-to-upper case changes.
fn words(key: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in key.chars() {
        if matches!(c, '_' | '-' | '.' | '$') {
            out.extend((!cur.is_empty()).then(|| std::mem::take(&mut cur)));
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    out.extend((!cur.is_empty()).then_some(cur));
    out
}

/// Whether `key` names a secret value, and which.
fn classify(key: &str) -> Option<Class> {
    let w = words(key);
    let last = w.last()?;
    if ABOUT.contains(&last.as_str()) || matches!(w[0].as_str(), "public" | "publishable" | "pub") {
        return None;
    }
    let has = |f: &dyn Fn(&str) -> bool| w.iter().any(|x| f(x));
    if has(&|x| x == "aws") && has(&|x| x.contains("secret")) {
        return Some(Class::AwsSecret);
    }
    if has(&|x| {
        matches!(x, "pass" | "pwd" | "passphrase" | "passcode" | "pword")
            || x.contains("password")
            || x.contains("passwd")
            || x.starts_with("contrase")
    }) {
        return Some(Class::Password);
    }
    let upper_snake = key.contains('_') && !key.bytes().any(|b| b.is_ascii_lowercase());
    let secret = has(&|x| {
        (x.contains("secret") && x != "secrets")
            || x.ends_with("token")
            || x.starts_with("cred")
            || x.ends_with("apikey")
            || (x.len() > 3 && x.ends_with("key") && KEY_OF.iter().any(|k| x == format!("{k}key")))
    }) || w
        .windows(2)
        .any(|p| p[1] == "key" && KEY_OF.contains(&p[0].as_str()))
        || (upper_snake && w.len() >= 2 && matches!(last.as_str(), "key" | "auth"))
        || (last == "auth" && w.len() >= 2);
    secret.then_some(Class::Secret)
}

/// Whether `v`, given to a key of class `c`, looks like the secret itself.
fn credible(v: &str, c: Class, quoted: bool) -> bool {
    // A bare name is a variable or a type (`password: SecretString`), except a lower-case
    // word given as a password (`password: swordfish`).
    let name = v.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_');
    let word = c == Class::Password
        && v.len() >= 6
        && v.bytes().all(|b| b.is_ascii_lowercase())
        && !NOT_PASSWORDS.contains(&v);
    if !v.bytes().any(|b| b.is_ascii_alphanumeric())
        || shape::placeholder(v)
        || shape::code(v)
        || (name && !quoted && !word)
    {
        return false;
    }
    match c {
        Class::Password => {
            let alnum = v.bytes().all(|b| b.is_ascii_alphanumeric());
            v.chars().count() >= 4
                && (quoted || word || shape::mixed(v) || (alnum && v.len() >= 12))
        }
        Class::Secret | Class::AwsSecret => {
            let letters = v.bytes().any(|b| b.is_ascii_alphabetic());
            let digits = v.bytes().any(|b| b.is_ascii_digit());
            let symbols = v
                .bytes()
                .any(|b| b.is_ascii_punctuation() && !b"_-.".contains(&b));
            v.len() >= 8
                && !v.contains(char::is_whitespace)
                && !v.contains("://")
                && ((letters && (digits || symbols))
                    || shape::random(v)
                    || shape::entropy(v) >= 4.0)
        }
    }
}

/// The value starting at `at`: the text inside quotes up to the closing one, else up to the
/// next space (or `&` in a URL query; less trailing punctuation). Returns its range and
/// whether it was quoted.
fn value(text: &str, at: usize, query: bool) -> Option<(usize, usize, bool)> {
    let rest = &text[at..];
    let q = rest.chars().next()?;
    if matches!(q, '"' | '\'' | '`') {
        let body = &rest[1..];
        let mut esc = false;
        for (i, c) in body.char_indices() {
            match c {
                '\n' => return None,
                '\\' if !esc => esc = true,
                _ if c == q && !esc => return (i > 0).then_some((at + 1, at + 1 + i, true)),
                _ => esc = false,
            }
        }
        return None;
    }
    let len = rest
        .find(|c: char| {
            c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '`') || (query && c == '&')
        })
        .unwrap_or(rest.len());
    let mut v = &rest[..len];
    loop {
        let t = v.trim_end_matches([',', ';', '.']);
        let t = match t.chars().last() {
            Some(c @ (')' | ']' | '}')) => {
                let open = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if t.matches(open).count() < t.matches(c).count() {
                    &t[..t.len() - 1]
                } else {
                    t
                }
            }
            _ => t,
        };
        if t.len() == v.len() {
            break;
        }
        v = t;
    }
    (!v.is_empty()).then_some((at, at + v.len(), false))
}

/// Every secret given to a secret-named key, and every one told in prose.
pub(super) fn find(text: &str, out: &mut Vec<Hit>) {
    for c in ASSIGN.captures_iter(text) {
        let key = c.get(1).expect("the key group takes part");
        let Some(class) = classify(key.as_str().trim_start_matches('-')) else {
            continue;
        };
        let at = c.get(0).expect("whole match").end();
        // `token::path` is a path, not `token: value`.
        if text[..at].ends_with(':') && text[at..].starts_with(':') {
            continue;
        }
        let query = text[..key.start()].ends_with(['?', '&']);
        if let Some((s, e, quoted)) = value(text, at, query) {
            if credible(&text[s..e], class, quoted) {
                out.push(Hit::new(class.kind(), s, e, Rank::Context));
            }
        }
    }
    for c in ELEMENT.captures_iter(text) {
        let (open, v, close) = (&c[1], c.get(2).expect("value"), &c[3]);
        if let Some(class) = classify(open).filter(|_| open == close) {
            if credible(v.as_str().trim(), class, true) {
                out.push(Hit::new(class.kind(), v.start(), v.end(), Rank::Context));
            }
        }
    }
    for c in PROSE.captures_iter(text) {
        let class = classify(&c[1].replace(' ', "_")).unwrap_or(Class::Password);
        let v = c.get(3).expect("value");
        let quoted = !c[2].is_empty();
        let t = v
            .as_str()
            .trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
        let symbols = t
            .bytes()
            .any(|b| b.is_ascii_punctuation() && !b"_-.".contains(&b));
        let strong = t.bytes().any(|b| b.is_ascii_alphabetic())
            && (t.bytes().any(|b| b.is_ascii_digit()) || symbols || quoted);
        if t.len() >= 6 && strong && !t.contains("://") && credible(t, class, quoted) {
            out.push(Hit::new(
                class.kind(),
                v.start(),
                v.start() + t.len(),
                Rank::Context,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_keys_word_by_word() {
        assert!(classify("DB_PASSWORD") == Some(Class::Password));
        assert!(classify("API_TOKEN") == Some(Class::Secret));
        assert!(classify("STRIPE_KEY") == Some(Class::Secret));
        assert!(classify("apiKey") == Some(Class::Secret));
        assert!(classify("aws_secret_access_key") == Some(Class::AwsSecret));
        for k in [
            "password_length",
            "token_type",
            "api_key_id",
            "key",
            "primary_key",
            "tokens",
        ] {
            assert!(classify(k).is_none(), "{k}");
        }
    }
}
