//! Credentials that announce themselves: a vendor prefix (`ghp_`, `sk-ant-`, `AKIA`,
//! `glpat-`, `xoxb-` …) then a body of a known alphabet and length. The formats follow the
//! public rule sets (gitleaks' `config/gitleaks.toml`, detect-secrets' plugins); the
//! patterns are written here. A body may be broken by one space or line break where a key
//! was wrapped or pasted in pieces, as long as each piece before a break is long enough not
//! to be a word.

use super::{shape, Hit, Rank};
use once_cell::sync::Lazy;
use regex::Regex;

/// The characters a token's body is made of.
#[derive(Clone, Copy)]
enum Body {
    /// `[A-Za-z0-9]`
    Alnum,
    /// `[A-Za-z0-9_]`
    Word,
    /// `[A-Za-z0-9_-]`
    Dash,
    /// `[A-Za-z0-9_.-]`
    DotDash,
    /// `[0-9a-fA-F]`
    Hex,
    /// `[0-9a-f]`
    LowerHex,
    /// `[A-Z0-9]`
    Upper,
    /// `[A-Za-z0-9_.=+/-]`: base64 of either alphabet and dotted compounds.
    Any,
}

impl Body {
    fn has(self, b: u8) -> bool {
        let alnum = b.is_ascii_alphanumeric();
        match self {
            Body::Alnum => alnum,
            Body::Word => alnum || b == b'_',
            Body::Dash => alnum || b == b'_' || b == b'-',
            Body::DotDash => alnum || matches!(b, b'_' | b'-' | b'.'),
            Body::Hex => b.is_ascii_hexdigit(),
            Body::LowerHex => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
            Body::Upper => b.is_ascii_digit() || b.is_ascii_uppercase(),
            Body::Any => alnum || matches!(b, b'_' | b'-' | b'.' | b'=' | b'+' | b'/'),
        }
    }
}

/// What the body must also satisfy, where prefix and alphabet are not distinctive enough.
#[derive(Clone, Copy)]
enum Check {
    None,
    /// Looks generated (see [`shape::random`]).
    Random,
    /// Has a digit.
    Digit,
    /// The whole token (prefix included) matches this pattern.
    Shape(&'static str),
}

/// A token format: its kind, prefixes, body alphabet, body length range and check.
type Format = (
    &'static str,
    &'static [&'static str],
    Body,
    usize,
    usize,
    Check,
);

/// The formats, the more specific first where prefixes overlap (`sk-ant-` before `sk-`).
#[rustfmt::skip]
const FORMATS: &[Format] = &[
    ("Anthropic API key", &["sk-ant-"], Body::Dash, 32, 200, Check::None),
    ("OpenRouter API key", &["sk-or-v1-"], Body::LowerHex, 64, 64, Check::None),
    ("OpenAI API key", &["sk-proj-", "sk-svcacct-", "sk-admin-"], Body::Dash, 40, 250, Check::None),
    ("OpenAI API key", &["sk-"], Body::Dash, 32, 200, Check::Random),
    ("Stripe API key", &["sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"], Body::Alnum, 10, 247, Check::None),
    ("Stripe webhook secret", &["whsec_"], Body::Alnum, 32, 64, Check::None),
    ("Google API key", &["AIza"], Body::Dash, 35, 35, Check::None),
    ("Google OAuth client secret", &["GOCSPX-"], Body::Dash, 28, 28, Check::None),
    ("GitHub token", &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"], Body::Alnum, 36, 255, Check::None),
    ("GitHub token", &["github_pat_"], Body::Word, 60, 255, Check::None),
    ("GitLab token", &["glpat-", "glrt-"], Body::DotDash, 20, 300, Check::None),
    ("GitLab token", &["gldt-", "glft-", "glsoat-", "glffct-", "glcbt-", "GR1348941"], Body::Dash, 20, 300, Check::None),
    ("GitLab token", &["glptt-"], Body::Dash, 40, 300, Check::None),
    ("GitLab token", &["glimt-"], Body::Dash, 25, 300, Check::None),
    ("GitLab token", &["glagent-"], Body::Dash, 50, 300, Check::None),
    ("GitLab token", &["gloas-"], Body::Dash, 64, 300, Check::None),
    ("Slack token", &["xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xapp-"], Body::Dash, 20, 250, Check::Shape(r"^xox[a-z]-\d{6,}-[A-Za-z0-9-]+$|^xoxe-\d-[A-Za-z0-9]{140,}$|^xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+$")),
    ("Slack token", &["xoxe.xoxp-", "xoxe.xoxb-"], Body::Dash, 140, 250, Check::None),
    ("AWS access key id", &["AKIA", "ASIA", "ABIA", "ACCA"], Body::Upper, 16, 16, Check::None),
    ("AWS access key id", &["A3T"], Body::Upper, 17, 17, Check::None),
    ("npm token", &["npm_"], Body::Alnum, 36, 36, Check::None),
    ("Hugging Face token", &["hf_", "api_org_"], Body::Alnum, 34, 40, Check::Shape(r"[a-z].*[A-Z]|[A-Z].*[a-z]")),
    ("PyPI token", &["pypi-AgEIcHlwaS5vcmc", "pypi-AgENdGVzdC5weXBpLm9yZw"], Body::Dash, 50, 1000, Check::None),
    ("SendGrid API key", &["SG."], Body::DotDash, 66, 66, Check::Shape(r"^SG\.[\w-]{22}\.[\w-]{43}$")),
    ("Twilio API key", &["SK"], Body::Hex, 32, 32, Check::Digit),
    ("Twilio account SID", &["AC"], Body::LowerHex, 32, 32, Check::Digit),
    ("Square token", &["sq0atp-", "sq0csp-"], Body::Dash, 22, 60, Check::None),
    ("Square token", &["EAAA"], Body::Dash, 60, 60, Check::Random),
    ("Shopify token", &["shpat_", "shpca_", "shppa_", "shpss_"], Body::Hex, 32, 32, Check::None),
    ("DigitalOcean token", &["dop_v1_", "doo_v1_", "dor_v1_"], Body::Hex, 64, 64, Check::None),
    ("Databricks token", &["dapi"], Body::Hex, 32, 32, Check::Digit),
    ("Doppler token", &["dp.pt.", "dp.st.", "dp.ct.", "dp.sa."], Body::Alnum, 40, 50, Check::None),
    ("Dynatrace token", &["dt0c01."], Body::DotDash, 89, 89, Check::None),
    ("Linear API key", &["lin_api_"], Body::Alnum, 40, 40, Check::None),
    ("Postman API key", &["PMAK-"], Body::Dash, 59, 59, Check::None),
    ("Pulumi token", &["pul-"], Body::Hex, 40, 40, Check::None),
    ("RubyGems API key", &["rubygems_"], Body::Hex, 48, 48, Check::None),
    ("Sentry token", &["sntryu_"], Body::Hex, 64, 64, Check::None),
    ("Sentry token", &["sntrys_eyJ"], Body::Any, 60, 600, Check::None),
    ("Vault token", &["hvs.", "hvb."], Body::Dash, 90, 300, Check::None),
    ("Vault token", &["s."], Body::Alnum, 24, 24, Check::Random),
    ("Heroku API key", &["HRKU-AA"], Body::Dash, 58, 58, Check::None),
    ("Perplexity API key", &["pplx-"], Body::Alnum, 48, 48, Check::None),
    ("Grafana token", &["glc_eyJ"], Body::Any, 29, 400, Check::None),
    ("Grafana token", &["glsa_"], Body::Word, 41, 41, Check::None),
    ("Artifactory token", &["AKCp"], Body::Alnum, 69, 69, Check::None),
    ("Artifactory token", &["cmVmd"], Body::Alnum, 59, 59, Check::Random),
    ("Atlassian API token", &["ATATT3"], Body::Any, 186, 186, Check::None),
    ("Notion token", &["ntn_"], Body::Alnum, 46, 46, Check::None),
    ("Notion token", &["secret_"], Body::Alnum, 43, 43, Check::Random),
    ("PlanetScale token", &["pscale_tkn_", "pscale_pw_", "pscale_oauth_"], Body::DotDash, 32, 64, Check::None),
    ("age secret key", &["AGE-SECRET-KEY-1"], Body::Upper, 58, 58, Check::None),
    ("Alibaba access key id", &["LTAI"], Body::Alnum, 20, 20, Check::Digit),
    ("EasyPost API key", &["EZAK", "EZTK"], Body::Alnum, 54, 54, Check::None),
    ("Shippo API key", &["shippo_live_", "shippo_test_"], Body::Hex, 40, 40, Check::None),
    ("Brevo API key", &["xkeysib-"], Body::Dash, 81, 81, Check::None),
    ("Flutterwave key", &["FLWSECK_TEST-", "FLWSECK-"], Body::Dash, 34, 34, Check::None),
    ("Duffel token", &["duffel_test_", "duffel_live_"], Body::Any, 43, 43, Check::None),
    ("Frame.io token", &["fio-u-"], Body::Any, 64, 64, Check::None),
    ("Mapbox secret token", &["sk.eyJ"], Body::DotDash, 80, 300, Check::None),
    ("1Password service token", &["ops_eyJ"], Body::Any, 250, 4000, Check::None),
    ("Prefect API key", &["pnu_"], Body::Alnum, 36, 36, Check::None),
    ("ReadMe API key", &["rdme_"], Body::Alnum, 70, 70, Check::None),
    ("Scalingo token", &["tk-us-"], Body::Dash, 48, 48, Check::None),
    ("Clojars token", &["CLOJARS_"], Body::Alnum, 60, 60, Check::None),
    ("Fly.io token", &["fo1_"], Body::Dash, 43, 43, Check::None),
    ("Fly.io token", &["fm1a_", "fm1r_", "fm2_"], Body::Any, 100, 4000, Check::None),
    ("Groq API key", &["gsk_"], Body::Alnum, 52, 52, Check::None),
    ("xAI API key", &["xai-"], Body::Alnum, 80, 80, Check::None),
    ("Replicate token", &["r8_"], Body::Alnum, 37, 37, Check::Random),
    ("Contentful token", &["CFPAT-"], Body::Dash, 43, 43, Check::None),
    ("Netlify token", &["nfp_"], Body::Alnum, 36, 36, Check::None),
    ("Supabase token", &["sbp_"], Body::Hex, 40, 40, Check::None),
    ("Tailscale key", &["tskey-"], Body::Dash, 30, 100, Check::Digit),
    ("Buildkite token", &["bkua_"], Body::Hex, 40, 40, Check::None),
    ("Adobe client secret", &["p8e-"], Body::Alnum, 32, 32, Check::Digit),
    ("LangSmith API key", &["lsv2_pt_", "lsv2_sk_"], Body::Word, 40, 60, Check::None),
    ("Yandex API key", &["AQVN"], Body::Dash, 35, 38, Check::Random),
    ("Sourcegraph token", &["sgp_local_", "sgp_"], Body::Word, 40, 57, Check::Digit),
    ("42 Intra token", &["s-s4t2ud-", "s-s4t2af-"], Body::LowerHex, 64, 64, Check::None),
    ("Facebook access token", &["EAAM", "EAAC"], Body::Alnum, 100, 400, Check::Random),
    ("Artifactory token", &["AP"], Body::Alnum, 10, 80, Check::Shape(r"^AP[0-9A-F]")),
    ("Airtable token", &["pat"], Body::DotDash, 79, 79, Check::Shape(r"^pat[A-Za-z0-9]{14}\.[a-f0-9]{64}$")),
];

/// One pattern finding where any prefix starts; which format it is is decided after.
static PREFIXES: Lazy<Regex> = Lazy::new(|| {
    let mut all: Vec<&str> = FORMATS.iter().flat_map(|f| f.1.iter().copied()).collect();
    all.sort_by_key(|p| std::cmp::Reverse(p.len()));
    let alt: Vec<String> = all.iter().map(|p| regex::escape(p)).collect();
    Regex::new(&alt.join("|")).expect("prefixes compile")
});

static SHAPES: Lazy<Vec<Option<Regex>>> = Lazy::new(|| {
    FORMATS
        .iter()
        .map(|f| match f.5 {
            Check::Shape(p) => Some(Regex::new(p).expect("token shapes compile")),
            _ => None,
        })
        .collect()
});

/// A piece of a wrapped key before a break must be at least this long.
const MIN_PIECE: usize = 6;

/// Every prefixed token in `text`.
pub(super) fn find(text: &str, out: &mut Vec<Hit>) {
    let b = text.as_bytes();
    for m in PREFIXES.find_iter(text) {
        if m.start() > 0 && b[m.start() - 1].is_ascii_alphanumeric() {
            continue;
        }
        let hit = FORMATS.iter().enumerate().find_map(|(i, f)| {
            let p = f.1.iter().find(|p| text[m.start()..].starts_with(**p))?;
            let end = body_end(b, m.start() + p.len(), f)?;
            let body = &text[m.start() + p.len()..end];
            let ok = !shape::filler(body)
                && match f.5 {
                    Check::None => true,
                    Check::Random => shape::random(body),
                    Check::Digit => body.bytes().any(|c| c.is_ascii_digit()),
                    Check::Shape(_) => {
                        let whole: String = text[m.start()..end].split_whitespace().collect();
                        SHAPES[i].as_ref().is_some_and(|r| r.is_match(&whole))
                    }
                };
            ok.then_some(Hit::new(f.0, m.start(), end, Rank::Format))
        });
        out.extend(hit);
    }
}

/// Where the body of format `f` that starts at `at` ends, if its length fits; one space or
/// line break is crossed while the body is still too short and the piece before it long.
fn body_end(b: &[u8], mut at: usize, f: &Format) -> Option<usize> {
    let (body, min, max) = (f.2, f.3, f.4);
    let (mut len, mut piece) = (0, 0);
    loop {
        while at < b.len() && body.has(b[at]) && len < max {
            at += 1;
            len += 1;
            piece += 1;
        }
        let gap = match b.get(at..at + 2) {
            Some(b"\r\n") => 2,
            _ if matches!(b.get(at), Some(b' ' | b'\n' | b'\t')) => 1,
            _ => 0,
        };
        let next = b.get(at + gap).is_some_and(|&c| body.has(c));
        if len >= min || piece < MIN_PIECE || gap == 0 || !next {
            break;
        }
        at += gap;
        piece = 0;
    }
    if len > 0 && matches!(body, Body::DotDash | Body::Any) && b[at - 1] == b'.' {
        at -= 1;
        len -= 1;
    }
    let more = b.get(at).is_some_and(|&c| body.has(c));
    (len >= min && len <= max && !more).then_some(at)
}
