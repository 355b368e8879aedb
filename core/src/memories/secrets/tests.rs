//! The scanner against the adversarial probe's cases, ordinary text that must pass, redaction
//! and offsets, and the public corpus of `tests/fixtures/secrets/`.

use super::*;
use base64::Engine;

/// A fake key: `n` characters of `alphabet` from a fixed xorshift stream, so the tests hold
/// random-looking keys without shipping real ones.
fn fake(alphabet: &str, n: usize, seed: u64) -> String {
    let a = alphabet.as_bytes();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            a[(x % a.len() as u64) as usize] as char
        })
        .collect()
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const HEX: &str = "0123456789abcdef";

fn kinds(t: &str) -> Vec<&'static str> {
    scan(t).into_iter().map(|f| f.kind).collect()
}

/// The one finding of `t`, its kind and text.
fn one(t: &str) -> (&'static str, &str) {
    let f = scan(t);
    assert_eq!(f.len(), 1, "{t:?}: {f:?}");
    (f[0].kind, &t[f[0].start..f[0].end])
}

#[test]
fn finds_credential_urls() {
    for (t, secret) in [
        ("db at postgres://admin:S3cret@host/db", "admin:S3cret"),
        ("mysql://root:hunter2@db.internal:3306/app", "root:hunter2"),
        ("fetch https://user:pw@host/x", "user:pw"),
        ("REDIS_URL=redis://:s3cr3tpass@cache:6379/0", ":s3cr3tpass"),
        (
            "mongodb+srv://app:Tr0ub4dor@cluster0.mongodb.net/test",
            "app:Tr0ub4dor",
        ),
        ("amqp://guest:Gu3st-pass@rabbit:5672/", "guest:Gu3st-pass"),
    ] {
        assert_eq!(one(t), ("URL credentials", secret), "{t}");
    }
}

#[test]
fn finds_secret_named_keys_in_every_form() {
    let v = fake(ALNUM, 32, 1);
    for (t, kind, secret) in [
        (
            "DB_PASSWORD=hunter2".to_string(),
            "password",
            "hunter2".to_string(),
        ),
        (format!("SECRET_KEY={v}"), "secret", v.clone()),
        (format!("API_TOKEN={v}"), "secret", v.clone()),
        (format!("MY_SERVICE_KEY={v}"), "secret", v.clone()),
        (format!("WEBHOOK_SECRET='{v}'"), "secret", v.clone()),
        (format!("export DEPLOY_TOKEN={v}"), "secret", v.clone()),
        ("password: hunter2!".into(), "password", "hunter2!".into()),
        ("password: swordfish".into(), "password", "swordfish".into()),
        (format!("  api_key: {v}"), "secret", v.clone()),
        (
            r#"{"password": "correct horse battery staple"}"#.into(),
            "password",
            "correct horse battery staple".into(),
        ),
        (format!(r#"{{"api_key": "{v}"}}"#), "secret", v.clone()),
        (
            "the password is hunter2".into(),
            "password",
            "hunter2".into(),
        ),
        (
            "<password>Tr0ub4dor&3</password>".into(),
            "password",
            "Tr0ub4dor&3".into(),
        ),
        (
            format!("aws_secret_access_key = {}", fake(ALNUM, 40, 2)),
            "AWS secret access key",
            fake(ALNUM, 40, 2),
        ),
    ] {
        assert_eq!(one(&t), (kind, secret.as_str()), "{t}");
    }
}

#[test]
fn finds_vendor_tokens_with_their_names() {
    for (t, kind) in [
        (format!("sk_live_{}", fake(ALNUM, 24, 3)), "Stripe API key"),
        (format!("rk_live_{}", fake(ALNUM, 24, 4)), "Stripe API key"),
        (format!("sk_test_{}", fake(ALNUM, 24, 5)), "Stripe API key"),
        (format!("AIza{}", fake(ALNUM, 35, 6)), "Google API key"),
        (format!("npm_{}", fake(ALNUM, 36, 7)), "npm token"),
        (format!("hf_{}", fake(ALNUM, 34, 8)), "Hugging Face token"),
        (format!("ghp_{}", fake(ALNUM, 36, 9)), "GitHub token"),
        (format!("glpat-{}", fake(ALNUM, 20, 10)), "GitLab token"),
        (format!("SK{}", fake(HEX, 32, 11)), "Twilio API key"),
        (
            format!("SG.{}.{}", fake(ALNUM, 22, 12), fake(ALNUM, 43, 13)),
            "SendGrid API key",
        ),
        (
            format!("MTA{}.{}.{}", fake(ALNUM, 21, 14), fake(ALNUM, 6, 15), fake(ALNUM, 27, 16)),
            "Discord bot token",
        ),
        (
            format!("123456789:AA{}", fake(ALNUM, 33, 17)),
            "Telegram bot token",
        ),
        (format!("{}-us14", fake(HEX, 32, 18)), "Mailchimp API key"),
        (format!("sq0atp-{}", fake(ALNUM, 22, 19)), "Square token"),
        (format!("shpat_{}", fake(HEX, 32, 20)), "Shopify token"),
        (format!("sk-proj-{}", fake(ALNUM, 48, 21)), "OpenAI API key"),
        (format!("sk-{}", fake(ALNUM, 48, 22)), "OpenAI API key"),
        (format!("sk-ant-api03-{}AA", fake(ALNUM, 93, 23)), "Anthropic API key"),
        (format!("xoxb-1234567890-{}", fake(ALNUM, 24, 24)), "Slack token"),
        ("key AKIAABCDEFGHIJKLMNOP here".into(), "AWS access key id"),
        (
            format!("Authorization: Bearer {}", fake(ALNUM, 40, 25)),
            "authorization header",
        ),
        (format!("curl -H 'Authorization: Basic {}'", "YWRtaW46aHVudGVyMg=="), "authorization header"),
        (format!("Basic {}", "YWRtaW46aHVudGVyMg=="), "basic auth credentials"),
        (
            format!(
                "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={}==;EndpointSuffix=core.windows.net",
                fake(ALNUM, 86, 26)
            ),
            "Azure storage key",
        ),
        (format!("the key is {}", fake(ALNUM, 40, 27)), "AWS secret access key"),
    ] {
        assert_eq!(kinds(&t), [kind], "{t}");
    }
}

#[test]
fn finds_private_keys_without_their_header() {
    let body = format!("MIIEpAIBAAKCAQEA{}", fake(ALNUM, 60, 28));
    assert_eq!(
        kinds(&format!("key:\n{body}\n{}", fake(ALNUM, 64, 29))),
        ["private key"]
    );
    let lower = format!("-----begin rsa private key-----\n{}", fake(ALNUM, 64, 30));
    assert_eq!(kinds(&lower), ["private key"]);
    let whole = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
        fake(ALNUM, 64, 31)
    );
    assert_eq!(
        one(&format!("{whole} done")),
        ("private key", whole.as_str())
    );
}

#[test]
fn finds_split_disguised_and_encoded_keys() {
    let k = fake(ALNUM, 36, 32);
    let (a, b) = k.split_at(18);
    for t in [
        format!("ghp_{a}\n{b}"),
        format!("ghp_{a} {b}"),
        format!("ghp_{a}\u{200B}{b}"),
        format!("ghp_{a}\r\n{b}"),
    ] {
        assert_eq!(one(&t), ("GitHub token", t.as_str()));
    }
    let o = fake(ALNUM, 48, 33);
    for t in [
        format!("\u{0455}k-{o}"),
        format!("ｓｋ-{o}"),
        format!("sk-\\u00{:x}{}", o.as_bytes()[0], &o[1..]),
    ] {
        assert_eq!(one(&t), ("OpenAI API key", t.as_str()), "{t}");
    }
    assert_eq!(one("раssword=hunter2"), ("password", "hunter2"));
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("sk-proj-{o}"));
    let t = format!("config blob: {b64}");
    assert_eq!(one(&t), ("OpenAI API key", b64.as_str()));
}

#[test]
fn anthropic_keys_are_not_named_openai() {
    for t in [
        format!("sk-ant-api03-{}AA", fake(ALNUM, 93, 34)),
        format!("sk-ant-admin01-{}AA", fake(ALNUM, 93, 36)),
        format!("sk-ant-{}", fake(ALNUM, 40, 37)),
    ] {
        assert_eq!(kinds(&t), ["Anthropic API key"], "{t}");
    }
}

#[test]
fn leaves_ordinary_text_alone() {
    let png = base64::engine::general_purpose::STANDARD.encode(
        (0..300u32)
            .map(|i| (i * 7 % 256) as u8)
            .collect::<Vec<u8>>(),
    );
    for t in [
        "use a password manager; never commit .env files",
        "the AKIA prefix marks AWS access keys",
        "call graph_neighbors with max_depth 2",
        "sk-learn is not a key",
        "commit 3f786850e387550fdab836ed7e6dc881de23001b\nAuthor: A <a@b.c>",
        "id 123e4567-e89b-12d3-a456-426614174000",
        &format!("![logo](data:image/png;base64,{png})"),
        "let token = tokens.next()?; let password = prompt_password()?;",
        "pub struct Config { pub api_key: Option<String>, password_len: usize }",
        "password_min_length = 12",
        "password: expired",
        "DB_PASSWORD=${DB_PASSWORD}",
        "the password is stored in the keychain",
        "a bearer token is sent in the Authorization header",
        "src/runtime/scheduler/multi_thread/worker.rs",
        "see https://docs.rs/tokio/latest/tokio/index.html",
        "token: Token::Ident",
        "the Twilio account SID starts with AC",
        "sha1 da39a3ee5e6b4b0d3255bfef95601890afd80709",
    ] {
        assert!(scan(t).is_empty(), "{t}: {:?}", scan(t));
    }
}

#[test]
fn redaction_takes_the_whole_value() {
    let t = "password = 'two words here' and then";
    assert_eq!(
        redact(t, &scan(t)),
        "password = '[REDACTED:password]' and then"
    );
    let t = "login with password: hunter2 then AKIAABCDEFGHIJKLMNOP";
    let f = scan(t);
    assert_eq!(
        redact(t, &f),
        "login with password: [REDACTED:password] then [REDACTED:AWS access key id]"
    );
    assert_eq!(char_offset(t, f[0].start), 21);
}

#[test]
fn offsets_are_in_the_original_text() {
    let k = fake(ALNUM, 48, 35);
    let t = format!("ünïcode first, then ｓｋ-{k} and more");
    let f = scan(&t);
    assert_eq!(f.len(), 1);
    assert_eq!(&t[f[0].start..f[0].end], format!("ｓｋ-{k}"));
    assert_eq!(char_offset(&t, f[0].start), 20);
    assert_eq!(
        redact(&t, &f),
        "ünïcode first, then [REDACTED:OpenAI API key] and more"
    );
}

proptest::proptest! {
    /// Any text, with the pieces normalisation and the rules react to mixed in: no panic,
    /// and findings are ordered, disjoint ranges on character boundaries of the original.
    #[test]
    fn findings_are_ranges_of_the_original(parts in proptest::collection::vec(proptest::prop_oneof![
        proptest::strategy::Just("sk-".to_string()), proptest::strategy::Just("ghp_".to_string()),
        proptest::strategy::Just("\\u0073".to_string()), proptest::strategy::Just("\\ud83d\\ude00".to_string()),
        proptest::strategy::Just("\u{200B}".to_string()), proptest::strategy::Just("ｓ".to_string()),
        proptest::strategy::Just("password=".to_string()), proptest::strategy::Just("'".to_string()),
        proptest::strategy::Just("\n".to_string()), proptest::strategy::Just("-----BEGIN PRIVATE KEY-----".to_string()),
        "[A-Za-z0-9+/=]{0,48}", "\\PC{0,12}"], 0..16)) {
        let t: String = parts.concat();
        let mut at = 0;
        for f in scan(&t) {
            proptest::prop_assert!(at <= f.start && f.start < f.end && f.end <= t.len());
            proptest::prop_assert!(t.is_char_boundary(f.start) && t.is_char_boundary(f.end));
            at = f.end;
        }
    }
}

/// Every line of the corpus: `secret: true` found, `secret: false` not.
#[test]
fn the_public_corpus() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/secrets");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/fixtures/secrets exists")
        .map(|e| e.expect("readable").path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let (mut lines, mut wrong) = (0, Vec::new());
    for path in files {
        for line in std::fs::read_to_string(&path).expect("readable").lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("JSON lines");
            let text = v["text"].as_str().expect("text");
            let found = !scan(text).is_empty();
            if found != v["secret"].as_bool().expect("secret") {
                wrong.push(format!("{}: {line}", path.display()));
            }
            lines += 1;
        }
    }
    assert!(lines > 0);
    assert!(
        wrong.is_empty(),
        "{} of {lines} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
