//! Secrets recognised by their structure rather than a prefix: private keys (with or without
//! their PEM header), passwords inside URLs, authorization headers, connection-string keys,
//! webhook URLs, JSON Web Tokens, bot tokens, and a bare AWS secret access key (40 random
//! characters, told from hex digests and paths by [`shape::random`]).

use super::{shape, Hit, Rank};
use base64::Engine;
use once_cell::sync::Lazy;
use regex::Regex;

/// A structural rule: kind, pattern, the capture group that is the secret (0: the whole
/// match; n: the first of groups n… that took part), and a check on that group's text.
type Rule = (&'static str, &'static str, usize, fn(&str) -> bool);

const ANY: fn(&str) -> bool = |_| true;

const RULES: &[Rule] = &[
    (
        "private key",
        r"(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:(?s:.*?)-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|(?:\s*[A-Za-z0-9+/=]{16,})*)",
        0,
        |s| {
            // With its END line, a key needs a body (gitleaks: 64 characters or more).
            let body = 10 + s[5..].find("-----").unwrap_or(0);
            s.find("-----END").is_none_or(|end| end >= body + 64)
        },
    ),
    // The DER start of an unencrypted private key, base64: PKCS#1 and PKCS#8 (a SEQUENCE
    // then INTEGER 0), SEC1 EC (INTEGER 1, OCTET STRING), Ed25519 PKCS#8, OpenSSH's magic.
    // Certificates and public keys start otherwise.
    (
        "private key",
        r"(?:^|[^A-Za-z0-9+/])((?:MII[A-Za-z0-9+/]{2}[AQgw]IBA[AD]|MIG[A-Za-z0-9+/]AgEA[AM]|MH[A-Za-z0-9+/]CAQEE|MC4CAQAwBQYDK2Vw|b3BlbnNzaC1rZXktdjE)[A-Za-z0-9+/=]*(?:\s*[A-Za-z0-9+/=]{16,})*)",
        1,
        |s| s.bytes().filter(|b| !b.is_ascii_whitespace()).count() >= 64,
    ),
    (
        "URL credentials",
        r"\b[A-Za-z][A-Za-z0-9+.-]{1,30}://([^\s:@/?#'\x22<>]*:[^\s@/?#'\x22<>]+)@[A-Za-z0-9.\[\]_-]+",
        1,
        |s| {
            let pw = &s[s.find(':').unwrap_or(0) + 1..];
            !shape::placeholder(pw) && !pw.bytes().all(|b| b.is_ascii_digit())
        },
    ),
    (
        "authorization header",
        r#"(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|bot|apikey)\s+)?([A-Za-z0-9._~+/=-]{8,})"#,
        1,
        |s| shape::mixed(s) && !shape::placeholder(s),
    ),
    (
        "curl credentials",
        r#"\bcurl\b[^\n]*?\s(?:-u|--user)(?:=|[ \t]+)(?:"([^"\n]*:[^"\n]*)"|'([^'\n]*:[^'\n]*)'|([^\s"':]*:[^\s"']+))"#,
        1,
        |s| {
            let (user, pw) = s.rsplit_once(':').unwrap_or_default();
            let secret = if pw.is_empty() { user } else { pw };
            !shape::placeholder(secret) && !shape::code(secret) && user != pw
        },
    ),
    (
        "bearer token",
        r"\bBearer\s+([A-Za-z0-9._~+/-]{16,}=*)",
        1,
        |s| shape::mixed(s) && !shape::placeholder(s),
    ),
    (
        "basic auth credentials",
        r"\bBasic\s+([A-Za-z0-9+/]{8,}={0,2})",
        1,
        |s| {
            base64::engine::general_purpose::STANDARD
                .decode(s)
                .ok()
                .and_then(|d| String::from_utf8(d).ok())
                .is_some_and(|d| d.contains(':') && !d.chars().any(char::is_control))
        },
    ),
    (
        "Azure storage key",
        r"(?i)\b(?:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{20,}={0,2})",
        1,
        |s| !shape::placeholder(s),
    ),
    (
        "JSON Web Token",
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]{8,})?",
        0,
        jwt,
    ),
    (
        "Slack webhook",
        r"https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_+-]{20,}",
        0,
        ANY,
    ),
    (
        "Discord webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}",
        0,
        ANY,
    ),
    (
        "Microsoft Teams webhook",
        r"https://[\w-]+\.webhook\.office\.com/webhookb2/[\w@/-]{40,}",
        0,
        ANY,
    ),
    (
        "Discord bot token",
        r"\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b",
        0,
        shape::random,
    ),
    (
        "Telegram bot token",
        r"\b\d{8,10}:AA[A-Za-z0-9_-]{32,33}\b",
        0,
        ANY,
    ),
    (
        "Facebook access token",
        r"\b\d{15,16}(?:\||%7C)([A-Za-z0-9_-]{27,40})\b",
        1,
        shape::random,
    ),
    (
        "Sidekiq credentials",
        r#"(?i)\bBUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM["']?\s*[:=]\s*["']?([a-f0-9]{8}:[a-f0-9]{8})"#,
        1,
        ANY,
    ),
    ("Mailchimp API key", r"\b[0-9a-f]{32}-us\d{1,2}\b", 0, ANY),
    (
        "Azure AD client secret",
        r"(?:^|[\\'\x22`\s>=:(,)])([a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})(?:$|[\\'\x22`\s<),])",
        1,
        shape::random,
    ),
    (
        "Terraform Cloud token",
        r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}",
        0,
        ANY,
    ),
    // A bare AWS secret access key: exactly 40 characters of its alphabet, on their own.
    (
        "AWS secret access key",
        r"(?:^|[^A-Za-z0-9/+=_.-])([A-Za-z0-9/+]{40})(?:$|[^A-Za-z0-9/+=_-])",
        1,
        shape::random,
    ),
];

/// A JSON Web Token's header and claims are base64url JSON objects.
fn jwt(t: &str) -> bool {
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    t.split('.').take(2).all(|part| {
        engine
            .decode(part.trim_end_matches('='))
            .ok()
            .and_then(|d| serde_json::from_slice::<serde_json::Value>(&d).ok())
            .is_some_and(|v| v.is_object())
    })
}

static COMPILED: Lazy<Vec<Regex>> = Lazy::new(|| {
    RULES
        .iter()
        .map(|r| Regex::new(r.1).expect("secret patterns compile"))
        .collect()
});

/// Every structural secret in `text`.
pub(super) fn find(text: &str, out: &mut Vec<Hit>) {
    for (rule, re) in RULES.iter().zip(COMPILED.iter()) {
        for c in re.captures_iter(text) {
            let m = (rule.2..c.len())
                .find_map(|g| c.get(g))
                .expect("a secret group takes part");
            if (rule.3)(m.as_str()) {
                out.push(Hit::new(rule.0, m.start(), m.end(), Rank::Structure));
            }
        }
    }
}
