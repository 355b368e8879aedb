//! The secret scanner: a memory outlives the session that wrote it, so a credential that
//! slipped into one would be recalled into every later prompt. Content is scanned before it
//! is stored; a finding is refused (naming the kind and where it starts, never the secret) or,
//! when the caller asks, replaced by `[REDACTED:<kind>]`.

use once_cell::sync::Lazy;
use regex::Regex;

/// A kind of secret and the pattern that finds it.
struct Kind {
    name: &'static str,
    pattern: Regex,
}

/// The seed's patterns plus the common credential formats.
static KINDS: Lazy<Vec<Kind>> = Lazy::new(|| {
    [
        (
            "private key",
            r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----",
        ),
        ("Anthropic API key", r"sk-ant-[A-Za-z0-9_-]{80,}"),
        ("OpenAI API key", r"sk-(?:proj-)?[A-Za-z0-9_-]{40,}"),
        (
            "GitHub token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,})",
        ),
        ("Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        (
            "Slack webhook",
            r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}",
        ),
        ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        (
            "AWS secret access key",
            r"(?i)aws_?secret_?access_?key\s*[:=]\s*['\x22]?[A-Za-z0-9/+=]{40}",
        ),
        (
            "JSON Web Token",
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        ),
        (
            "password",
            r#"(?i)\b(?:password|passwd|pwd)\s*[:=]\s*["']?[^\s"']+"#,
        ),
    ]
    .into_iter()
    .map(|(name, p)| Kind {
        name,
        pattern: Regex::new(p).expect("secret patterns compile"),
    })
    .collect()
});

/// A secret found in a text: its kind and where it is (byte range).
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub kind: &'static str,
    pub start: usize,
    pub end: usize,
}

/// Every secret in `text`, in order of position (overlapping findings: the earlier, then the
/// longer, wins).
pub fn scan(text: &str) -> Vec<Finding> {
    let mut all: Vec<Finding> = KINDS
        .iter()
        .flat_map(|k| {
            k.pattern.find_iter(text).map(|m| Finding {
                kind: k.name,
                start: m.start(),
                end: m.end(),
            })
        })
        .collect();
    all.sort_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut out: Vec<Finding> = Vec::new();
    for f in all {
        if out.last().is_none_or(|l| f.start >= l.end) {
            out.push(f);
        }
    }
    out
}

/// `text` with every finding replaced by `[REDACTED:<kind>]`.
pub fn redact(text: &str, findings: &[Finding]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in findings {
        out.push_str(&text[at..f.start]);
        out.push_str(&format!("[REDACTED:{}]", f.kind));
        at = f.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The character offset (0-based) of byte `at` in `text`: what an error reports.
pub fn char_offset(text: &str, at: usize) -> usize {
    text[..at].chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(t: &str) -> Vec<&'static str> {
        scan(t).into_iter().map(|f| f.kind).collect()
    }

    #[test]
    fn finds_the_common_credentials() {
        let gh = format!("token ghp_{}", "a".repeat(36));
        assert_eq!(kinds(&gh), ["GitHub token"]);
        assert_eq!(
            kinds("key AKIAABCDEFGHIJKLMNOP here"),
            ["AWS access key id"]
        );
        assert_eq!(kinds("xoxb-1234567890-abcdefghij"), ["Slack token"]);
        assert_eq!(kinds("db password = hunter2"), ["password"]);
        assert_eq!(
            kinds("-----BEGIN RSA PRIVATE KEY-----\nMII"),
            ["private key"]
        );
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        assert_eq!(kinds(jwt), ["JSON Web Token"]);
        assert_eq!(kinds(&format!("sk-{}", "A".repeat(48))), ["OpenAI API key"]);
        assert_eq!(
            kinds(&format!("sk-ant-{}", "b".repeat(95))),
            ["Anthropic API key"]
        );
    }

    #[test]
    fn leaves_ordinary_text_alone() {
        for t in [
            "use a password manager; never commit .env files",
            "the AKIA prefix marks AWS access keys",
            "call graph_neighbors with max_depth 2",
            "sk-learn is not a key",
        ] {
            assert!(scan(t).is_empty(), "{t}");
        }
    }

    #[test]
    fn redaction_keeps_the_rest() {
        let t = "login with password: hunter2 then AKIAABCDEFGHIJKLMNOP";
        let f = scan(t);
        assert_eq!(
            redact(t, &f),
            "login with [REDACTED:password] then [REDACTED:AWS access key id]"
        );
        assert_eq!(char_offset(t, f[0].start), 11);
    }
}
