//! A deterministic generator of coding-agent conversations.
//!
//! Everything comes from a seeded PRNG and word lists in this file: no external data. The same
//! seed and size always give the same messages, byte for byte, in the same order.
//!
//! Shape of the data:
//! - threads of 20–200 messages; roles user, assistant and tool in the rhythm of an agent loop
//!   (user asks, assistant answers or calls tools, tools print, assistant reports);
//! - every thread has a topic (a handful of identifiers, file paths and error kinds it keeps
//!   coming back to), so terms are bursty within a thread as in real sessions;
//! - content mixes code identifiers (camelCase, PascalCase, snake_case, kebab-case,
//!   SCREAMING_CASE, `Foo::bar`), file paths, stack traces (JavaScript, Python, Rust), error
//!   messages, shell output (tests, builds, git, grep, ls), code snippets and prose;
//! - lengths: most messages 20–300 tokens, tool outputs with a long tail (up to ~4000 tokens);
//! - created_at spread over 90 days before [`BASE_NOW_MS`], messages in a thread seconds to
//!   minutes apart; the whole set is sorted by created_at (an agent's database grows in time).
//!
//! Term frequencies follow Zipf laws over pools of identifiers, paths and words, with a long
//! tail of rare made-up words (project jargon, names), so queries meet both very common and
//! very rare terms.

use std::fmt::Write as _;

/// The fixed "now" of the generated world (2025-10-01T00:00:00Z), in Unix epoch milliseconds.
pub const BASE_NOW_MS: i64 = 1_759_276_800_000;
/// Conversations are spread over this many days before `BASE_NOW_MS`.
pub const SPAN_DAYS: i64 = 90;
const DAY_MS: i64 = 86_400_000;

// ---------------------------------------------------------------------------------------------
// PRNG: SplitMix64 to seed xoshiro256**.

#[derive(Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    /// A generator for an independent stream (e.g. one per thread), derived from this seed.
    pub fn fork(seed: u64, stream: u64) -> Rng {
        Rng::new(seed ^ stream.wrapping_mul(0xD6E8_FEB8_6659_FD93).rotate_left(17))
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n). `n` must be > 0.
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Uniform in [lo, hi] (inclusive).
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn pick_str(&mut self, items: &[&'static str]) -> &'static str {
        items[self.below(items.len())]
    }

    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.f64().max(1e-12);
        let u2 = self.f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// Log-normal with the given median and spread (sigma of the underlying normal).
    pub fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        median * (sigma * self.normal()).exp()
    }
}

/// Zipf-distributed ranks over `n` items (exponent `s`), sampled by binary search on the CDF.
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    pub fn new(n: usize, s: f64) -> Zipf {
        let mut cdf = Vec::with_capacity(n);
        let mut acc = 0.0;
        for k in 1..=n {
            acc += 1.0 / (k as f64).powf(s);
            cdf.push(acc);
        }
        for c in &mut cdf {
            *c /= acc;
        }
        Zipf { cdf }
    }

    pub fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.f64();
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1)
    }
}

/// A pool of strings with a Zipf popularity (index 0 is the most common).
pub struct Pool {
    pub items: Vec<String>,
    zipf: Zipf,
}

impl Pool {
    fn new(items: Vec<String>, s: f64) -> Pool {
        let zipf = Zipf::new(items.len(), s);
        Pool { items, zipf }
    }

    pub fn sample(&self, rng: &mut Rng) -> &str {
        &self.items[self.zipf.sample(rng)]
    }

    /// An item from the rarest `fraction` of the pool (uniform there).
    pub fn sample_tail(&self, rng: &mut Rng, fraction: f64) -> &str {
        let n = self.items.len();
        let start = n - ((n as f64 * fraction) as usize).clamp(1, n);
        &self.items[rng.range(start, n - 1)]
    }
}

// ---------------------------------------------------------------------------------------------
// Word lists.

#[rustfmt::skip]
const NOUNS: &[&str] = &[
    "user", "auth", "login", "token", "session", "refresh", "cache", "config", "request",
    "response", "handler", "router", "schema", "model", "service", "client", "server", "query",
    "index", "search", "message", "thread", "task", "queue", "worker", "job", "event", "stream",
    "buffer", "parser", "lexer", "view", "component", "state", "store", "action", "reducer", "hook",
    "context", "provider", "payload", "header", "cookie", "password", "hash", "email", "account",
    "profile", "permission", "role", "policy", "validator", "error", "retry", "timeout",
    "connection", "pool", "migration", "table", "column", "row", "record", "field", "value", "key",
    "map", "list", "item", "node", "edge", "graph", "tree", "path", "file", "upload", "image",
    "thumbnail", "invoice", "payment", "order", "cart", "product", "price", "currency", "report",
    "metric", "log", "trace", "span", "test", "mock", "fixture", "build", "deploy", "release",
    "version", "feature", "flag", "env", "secret", "tenant", "org", "team", "member", "invite",
    "notification", "webhook", "subscription", "plan", "billing", "quota", "limit", "rate", "batch",
    "chunk", "page", "cursor", "offset", "filter", "sort", "form", "input", "button", "modal",
    "dialog", "layout", "theme", "style", "route", "middleware", "controller", "repository",
    "entity", "dto", "mapper", "adapter", "factory", "builder", "registry", "scheduler", "cron",
    "lock", "lease", "snapshot", "backup", "socket", "channel", "api", "graphql", "resolver",
    "mutation", "loader", "db", "sql", "orm", "prisma", "redis", "kafka", "s3", "bucket", "blob",
    "embedding", "vector", "prompt", "agent", "tool", "memory",
];

#[rustfmt::skip]
const VERBS: &[&str] = &[
    "get", "set", "create", "update", "delete", "fetch", "load", "save", "parse", "validate",
    "handle", "build", "render", "compute", "resolve", "init", "reset", "sync", "flush", "merge",
    "split", "encode", "decode", "serialize", "normalize", "refresh", "check", "ensure", "find",
    "list", "apply", "register", "dispatch", "emit", "subscribe", "connect", "close", "open",
    "read", "write", "send", "receive", "process", "transform", "convert", "format", "sanitize",
    "authenticate", "authorize", "invalidate", "retry", "schedule", "cancel", "start", "stop",
    "use", "with", "to", "from", "is", "has", "should", "can",
];

#[rustfmt::skip]
const SUFFIXES: &[&str] = &[
    "Service", "Schema", "Provider", "Handler", "Controller", "Client", "Store", "Manager",
    "Factory", "Error", "Config", "Options", "Props", "State", "Context", "Repository", "Helper",
    "Util", "Validator", "Middleware", "Hook", "Query", "Mutation", "Type", "Model", "Response",
    "Request", "Event", "Listener", "Worker", "Job", "Spec", "Test", "Impl", "Builder",
];

#[rustfmt::skip]
const DIRS: &[&str] = &[
    "src", "lib", "app", "server", "client", "components", "utils", "api", "routes", "models",
    "services", "tests", "db", "migrations", "config", "hooks", "pages", "store", "auth", "core",
    "internal", "pkg", "cmd", "handlers", "middleware", "schemas", "types", "scripts", "packages",
    "web", "ui", "workers", "jobs", "billing", "search", "common", "shared", "features",
];

#[rustfmt::skip]
const EXTS: &[&str] = &[
    "ts", "ts", "ts", "tsx", "tsx", "js", "rs", "rs", "py", "py", "go", "json", "sql", "md", "yaml",
    "toml", "css", "sh",
];

/// Common English and agent-talk words, roughly in frequency order.
#[rustfmt::skip]
const PROSE: &[&str] = &[
    "the", "to", "a", "and", "is", "it", "this", "in", "of", "that", "we", "for", "i", "you", "be",
    "on", "not", "with", "can", "should", "now", "so", "but", "if", "are", "when", "let", "me",
    "what", "fix", "test", "error", "need", "from", "then", "at", "by", "have", "file", "check",
    "will", "do", "there", "an", "function", "use", "just", "all", "one", "make", "also", "still",
    "why", "failing", "works", "because", "instead", "again", "add", "change", "look", "here",
    "see", "update", "bug", "issue", "run", "try", "how", "code", "new", "into", "after", "before",
    "which", "missing", "wrong", "value", "return", "call", "problem", "seems", "actually", "like",
    "think", "only", "type", "case", "null", "undefined", "empty", "data", "import", "export",
    "async", "await", "const", "string", "number", "object", "array", "first", "last", "next",
    "previous", "same", "different", "correct", "expected", "actual", "passes", "fails", "broken",
    "working", "done", "ready", "looks", "good", "great", "thanks", "please", "sure", "okay",
    "right", "well", "about", "would", "could", "might", "other", "some", "any", "every", "each",
    "more", "less", "than", "too", "very", "much", "many", "where", "who", "our", "their", "its",
    "was", "were", "been", "being", "has", "had", "does", "did", "doing", "get", "got", "keep",
    "keeps", "remove", "removed", "added", "changed", "updated", "refactor", "rename", "move",
    "extract", "inline", "cleanup", "logic", "flow", "path", "handler", "request", "response",
    "server", "client", "database", "query", "index", "cache", "token", "session", "login", "user",
    "password", "email", "account", "page", "button", "form", "modal", "screen", "mobile",
    "desktop", "browser", "production", "staging", "local", "dev", "deploy", "release", "build",
    "ci", "pipeline", "lint", "format", "types", "typecheck", "compile", "compiler", "runtime",
    "memory", "leak", "slow", "fast", "latency", "timeout", "retry", "race", "condition",
    "deadlock", "concurrent", "parallel", "migration", "schema", "column", "table", "foreign",
    "unique", "constraint", "transaction", "rollback", "commit", "branch", "merge", "rebase",
    "conflict", "diff", "patch", "review", "comment", "docs", "readme", "example", "snippet",
    "stack", "trace", "log", "logs", "warning", "crash", "panic", "exception", "throws", "thrown",
    "catch", "handle", "edge", "cases", "regression", "flaky", "intermittent", "reproduce", "repro",
    "steps", "version", "upgrade", "downgrade", "dependency", "package", "lockfile", "node",
    "python", "rust", "typescript", "react", "nextjs", "postgres", "sqlite", "redis", "docker",
    "kubernetes", "config", "env", "variable", "secret", "key", "permission", "denied",
    "unauthorized", "forbidden", "validation", "invalid", "valid", "required", "optional",
    "default", "option", "setting", "feature", "flag", "toggle", "enable", "disable", "support",
    "handle", "ignore", "skip", "mock", "stub", "fixture", "snapshot", "coverage", "unit",
    "integration", "e2e", "endpoint", "route", "middleware", "payload", "header", "status", "code",
    "message", "output", "input", "result", "results", "list", "item", "items", "count", "total",
    "sum", "limit", "offset", "cursor", "pagination", "sorting", "filtering", "search", "ranking",
];

#[rustfmt::skip]
const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "zu", "ren", "tor", "vex", "qui", "bra", "del", "fin", "gor", "hal", "jun",
    "kel", "mar", "nox", "pel", "ros", "sol", "tam", "ur", "vin", "wex", "yor", "zel", "ax", "bel",
    "cor", "dra", "eth", "fyn", "gal", "hex", "ix", "jor", "lum", "mor", "nyx", "or",
];

#[rustfmt::skip]
const JS_ERRORS: &[&str] = &[
    "TypeError: Cannot read properties of undefined (reading '{c}')",
    "TypeError: {c} is not a function", "ReferenceError: {c} is not defined",
    "Error: ENOENT: no such file or directory, open '{p}'",
    "SyntaxError: Unexpected token '}' in {p}", "Error: connect ECONNREFUSED 127.0.0.1:{n}",
    "UnhandledPromiseRejection: Error: Request failed with status code {h}",
    "Error: Cannot find module '{k}' imported from {p}", "ZodError: {c}: Required",
    "Error: Invariant failed: {P} must be initialised before {c}",
];
#[rustfmt::skip]
const PY_ERRORS: &[&str] = &[
    "KeyError: '{s}'", "AttributeError: 'NoneType' object has no attribute '{s}'",
    "ModuleNotFoundError: No module named '{s}'",
    "ValueError: invalid literal for int() with base 10: '{s}'",
    "sqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint \"{s}_key\"",
    "psycopg2.errors.UndefinedTable: relation \"{s}\" does not exist",
    "AssertionError: assert {n} == {m}",
];
#[rustfmt::skip]
const RS_ERRORS: &[&str] = &[
    "error[E0382]: borrow of moved value: `{s}`",
    "error[E0308]: mismatched types: expected `{P}`, found `Option<{P}>`",
    "error[E0425]: cannot find value `{s}` in this scope",
    "error[E0599]: no method named `{s}` found for struct `{P}`",
    "thread 'main' panicked at {p}:{n}:{m}: called `Option::unwrap()` on a `None` value",
    "error: could not compile `{k}` due to {m} previous errors",
];

// ---------------------------------------------------------------------------------------------
// Vocabulary.

/// All pools the conversations and the queries draw from.
pub struct Vocab {
    /// Identifiers of every style, most common first.
    pub idents: Pool,
    /// camelCase function names (also inside `idents`).
    pub funcs: Pool,
    /// PascalCase type names (also inside `idents`).
    pub types: Pool,
    /// snake_case names (also inside `idents`).
    pub snakes: Pool,
    /// File paths.
    pub paths: Pool,
    /// Prose words, most common first.
    pub prose: Pool,
    /// Made-up rare words (project jargon, names, hosts).
    pub rare: Pool,
    /// Package / crate names (kebab-case).
    pub packages: Pool,
}

fn cap(w: &str) -> String {
    let mut c = w.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// A deterministic shuffle of a list, then Zipf popularity by position.
fn shuffled(mut v: Vec<String>, rng: &mut Rng) -> Vec<String> {
    v.sort();
    v.dedup();
    for i in (1..v.len()).rev() {
        let j = rng.below(i + 1);
        v.swap(i, j);
    }
    v
}

impl Vocab {
    pub fn new(seed: u64) -> Vocab {
        let mut rng = Rng::fork(seed, 0xA11CE);
        let noun = |rng: &mut Rng| *rng.pick(NOUNS);
        let verb = |rng: &mut Rng| rng.pick_str(VERBS);

        let mut funcs = Vec::new();
        for _ in 0..9000 {
            let mut s = verb(&mut rng).to_string();
            s.push_str(&cap(noun(&mut rng)));
            if rng.chance(0.45) {
                s.push_str(&cap(noun(&mut rng)));
            }
            funcs.push(s);
        }
        let mut types = Vec::new();
        for _ in 0..7000 {
            let mut s = cap(noun(&mut rng));
            if rng.chance(0.6) {
                s.push_str(&cap(noun(&mut rng)));
            }
            s.push_str(rng.pick_str(SUFFIXES));
            types.push(s);
        }
        let mut snakes = Vec::new();
        for _ in 0..7000 {
            let mut s = noun(&mut rng).to_string();
            s.push('_');
            s.push_str(if rng.chance(0.5) {
                verb(&mut rng)
            } else {
                noun(&mut rng)
            });
            if rng.chance(0.4) {
                s.push('_');
                s.push_str(noun(&mut rng));
            }
            snakes.push(s);
        }
        let mut kebabs = Vec::new();
        for _ in 0..3000 {
            kebabs.push(format!("{}-{}", noun(&mut rng), noun(&mut rng)));
        }
        let mut screams = Vec::new();
        for _ in 0..1500 {
            screams.push(format!(
                "{}_{}_{}",
                rng.pick(&["MAX", "MIN", "DEFAULT", "ENABLE", "DISABLE", "API", "DB"]),
                noun(&mut rng).to_uppercase(),
                rng.pick(&["COUNT", "SIZE", "MS", "URL", "KEY", "TIMEOUT", "LIMIT", "PATH"])
            ));
        }
        let funcs = shuffled(funcs, &mut rng);
        let types = shuffled(types, &mut rng);
        let snakes = shuffled(snakes, &mut rng);
        let kebabs = shuffled(kebabs, &mut rng);
        let screams = shuffled(screams, &mut rng);

        // Qualified names `Type::method`, built from popular types and snake names.
        let mut quals = Vec::new();
        for i in 0..2500 {
            quals.push(format!("{}::{}", types[i % 800], snakes[(i * 7) % 3000]));
        }
        let quals = shuffled(quals, &mut rng);

        // All identifiers, interleaved so every style has common and rare members.
        let mut idents = Vec::new();
        let lists: [&Vec<String>; 6] = [&funcs, &types, &snakes, &kebabs, &screams, &quals];
        let longest = lists.iter().map(|l| l.len()).max().unwrap_or(0);
        for i in 0..longest {
            for l in lists {
                if let Some(x) = l.get(i) {
                    idents.push(x.clone());
                }
            }
        }

        let mut paths = Vec::new();
        for i in 0..9000 {
            let depth = rng.range(1, 3);
            let mut p = String::new();
            for _ in 0..depth {
                p.push_str(rng.pick_str(DIRS));
                p.push('/');
            }
            let ext = *rng.pick(EXTS);
            let stem = match i % 4 {
                0 => funcs[i % funcs.len()].clone(),
                1 => kebabs[i % kebabs.len()].clone(),
                2 => snakes[i % snakes.len()].clone(),
                _ => types[i % types.len()].clone(),
            };
            if ext == "tsx" || rng.chance(0.2) {
                let _ = write!(p, "{}.{}", cap(&stem), ext);
            } else {
                let _ = write!(p, "{stem}.{ext}");
            }
            paths.push(p);
        }
        let paths = shuffled(paths, &mut rng);

        let mut rare = Vec::new();
        for _ in 0..60_000 {
            let n = rng.range(2, 4);
            let mut w = String::new();
            for _ in 0..n {
                w.push_str(rng.pick_str(SYLLABLES));
            }
            if rng.chance(0.15) {
                let _ = write!(w, "{}", rng.below(100));
            }
            rare.push(w);
        }
        let rare = shuffled(rare, &mut rng);

        let mut packages = Vec::new();
        for (i, kebab) in kebabs.iter().take(600).enumerate() {
            packages.push(if i % 3 == 0 {
                kebab.clone()
            } else {
                format!(
                    "{}-{}",
                    noun(&mut rng),
                    rng.pick(&["core", "utils", "sdk", "cli", "api", "ui"])
                )
            });
        }
        let packages = shuffled(packages, &mut rng);

        Vocab {
            idents: Pool::new(idents, 1.05),
            funcs: Pool::new(funcs, 1.0),
            types: Pool::new(types, 1.0),
            snakes: Pool::new(snakes, 1.0),
            paths: Pool::new(paths, 1.0),
            prose: Pool::new(PROSE.iter().map(|s| s.to_string()).collect(), 0.9),
            rare: Pool::new(rare, 1.1),
            packages: Pool::new(packages, 1.0),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Messages.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    Tool,
    System,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::System => "system",
        }
    }
}

pub struct Message {
    /// Deterministic id, shared by every engine (UUID-shaped, version nibble 7).
    pub id: String,
    /// Index of the thread in `Dataset::threads`.
    pub thread: u32,
    pub role: Role,
    pub content: String,
    pub created_at: i64,
}

pub struct Thread {
    pub resource_id: String,
    pub title: String,
}

pub struct Dataset {
    pub threads: Vec<Thread>,
    /// All messages, sorted by created_at (ties by thread, then position).
    pub messages: Vec<Message>,
}

impl Dataset {
    pub fn total_bytes(&self) -> usize {
        self.messages.iter().map(|m| m.content.len()).sum()
    }

    /// The largest created_at.
    #[cfg(test)]
    pub fn max_created_at(&self) -> i64 {
        self.messages
            .iter()
            .map(|m| m.created_at)
            .max()
            .unwrap_or(BASE_NOW_MS)
    }
}

/// The terms a thread keeps returning to.
struct Topic {
    idents: Vec<String>,
    paths: Vec<String>,
    rare: Vec<String>,
    package: String,
}

/// Writes text to a message until it reaches about `target` tokens (whitespace words).
struct Writer<'a> {
    v: &'a Vocab,
    t: &'a Topic,
    rng: &'a mut Rng,
    out: String,
    words: usize,
}

impl<'a> Writer<'a> {
    fn push(&mut self, s: &str) {
        self.words += s.split_whitespace().count();
        self.out.push_str(s);
    }

    fn ident(&mut self) -> String {
        if self.rng.chance(0.55) {
            self.rng.pick(&self.t.idents).clone()
        } else {
            self.v.idents.sample(self.rng).to_string()
        }
    }
    fn func(&mut self) -> String {
        if self.rng.chance(0.3) {
            self.rng.pick(&self.t.idents).clone()
        } else {
            self.v.funcs.sample(self.rng).to_string()
        }
    }
    fn typ(&mut self) -> String {
        self.v.types.sample(self.rng).to_string()
    }
    fn snake(&mut self) -> String {
        self.v.snakes.sample(self.rng).to_string()
    }
    fn path(&mut self) -> String {
        if self.rng.chance(0.6) {
            self.rng.pick(&self.t.paths).clone()
        } else {
            self.v.paths.sample(self.rng).to_string()
        }
    }
    fn word(&mut self) -> String {
        let r = self.rng.f64();
        if r < 0.02 {
            self.rng.pick(&self.t.rare).clone()
        } else if r < 0.04 {
            self.v.rare.sample(self.rng).to_string()
        } else {
            self.v.prose.sample(self.rng).to_string()
        }
    }

    /// One prose sentence of 5–22 words with identifiers and paths sprinkled in.
    fn sentence(&mut self) {
        let n = self.rng.range(5, 22);
        let mut s = String::new();
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            let r = self.rng.f64();
            let w = if r < 0.10 {
                format!("`{}`", self.ident())
            } else if r < 0.14 {
                self.path()
            } else {
                self.word()
            };
            if i == 0 {
                s.push_str(&cap(&w));
            } else {
                s.push_str(&w);
            }
        }
        s.push_str(self.rng.pick_str(&[". ", ". ", "? ", "! ", ": ", ".\n"]));
        self.push(&s);
    }

    fn error_line(&mut self) -> String {
        let tpl = match self.rng.below(3) {
            0 => *self.rng.pick(JS_ERRORS),
            1 => *self.rng.pick(PY_ERRORS),
            _ => *self.rng.pick(RS_ERRORS),
        };
        let (c, s, p, pt, k) = (
            self.func(),
            self.snake(),
            self.path(),
            self.typ(),
            self.t.package.clone(),
        );
        let (n, m) = (
            self.rng.range(1, 900).to_string(),
            self.rng.range(1, 80).to_string(),
        );
        let h = self
            .rng
            .pick(&[
                "400", "401", "403", "404", "409", "422", "500", "502", "503",
            ])
            .to_string();
        tpl.replace("{c}", &c)
            .replace("{s}", &s)
            .replace("{p}", &p)
            .replace("{P}", &pt)
            .replace("{k}", &k)
            .replace("{n}", &n)
            .replace("{m}", &m)
            .replace("{h}", &h)
    }

    fn stack_trace(&mut self, frames: usize) {
        let mut s = self.error_line();
        s.push('\n');
        match self.rng.below(3) {
            0 => {
                for _ in 0..frames {
                    let (f, p) = (self.func(), self.path());
                    let _ = writeln!(
                        s,
                        "    at {f} ({p}:{}:{})",
                        self.rng.range(1, 400),
                        self.rng.range(1, 60)
                    );
                }
            }
            1 => {
                s.insert_str(0, "Traceback (most recent call last):\n");
                for _ in 0..frames {
                    let (f, p) = (self.snake(), self.path());
                    let _ = writeln!(s, "  File \"{p}\", line {}, in {f}", self.rng.range(1, 900));
                    let (a, b) = (self.snake(), self.snake());
                    let _ = writeln!(s, "    {a} = self.{b}({a})");
                }
            }
            _ => {
                s.push_str("stack backtrace:\n");
                for i in 0..frames {
                    let (t, f, p) = (self.typ(), self.snake(), self.path());
                    let _ = writeln!(
                        s,
                        "  {i:>2}: {}::{t}::{f}",
                        self.t.package.replace('-', "_")
                    );
                    let _ = writeln!(
                        s,
                        "             at ./{p}:{}:{}",
                        self.rng.range(1, 900),
                        self.rng.range(1, 80)
                    );
                }
            }
        }
        self.push(&s);
    }

    fn code(&mut self) {
        let lines = self.rng.range(4, 18);
        let mut s = String::from("```\n");
        let (f, t) = (self.func(), self.typ());
        if self.rng.chance(0.5) {
            let arg = self.snake();
            let _ = writeln!(s, "export async function {f}({arg}: {t}) {{");
            for _ in 0..lines {
                let (a, b, c) = (self.func(), self.ident(), self.snake());
                let _ = match self.rng.below(4) {
                    0 => writeln!(s, "  const {c} = await {a}({arg}.{c});"),
                    1 => writeln!(
                        s,
                        "  if (!{c}) throw new Error(\"{b} {} {}\");",
                        self.word(),
                        self.word()
                    ),
                    2 => writeln!(s, "  // {} {} {}", self.word(), self.word(), b),
                    _ => writeln!(s, "  return {a}({c}, {{ {b}: true }});"),
                };
            }
            s.push_str("}\n");
        } else {
            let arg = self.snake();
            let _ = writeln!(
                s,
                "pub fn {}(&self, {arg}: &{t}) -> Result<{}, Error> {{",
                self.snake(),
                self.typ()
            );
            for _ in 0..lines {
                let (a, b, c) = (self.snake(), self.typ(), self.snake());
                let _ = match self.rng.below(4) {
                    0 => writeln!(s, "    let {c} = self.{a}({arg})?;"),
                    1 => writeln!(s, "    let {c} = {b}::{a}(&{arg}).map_err(Error::from)?;"),
                    2 => writeln!(s, "    // {} {} {}", self.word(), self.word(), self.word()),
                    _ => writeln!(s, "    Ok({b}::new({c}))"),
                };
            }
            s.push_str("}\n");
        }
        s.push_str("```\n");
        self.push(&s);
    }

    fn shell(&mut self, lines: usize) {
        let mut s = String::new();
        match self.rng.below(6) {
            0 => {
                s.push_str("$ npm test\n");
                for _ in 0..lines {
                    let p = self.path();
                    if self.rng.chance(0.85) {
                        let _ = writeln!(
                            s,
                            "  ✓ should {} {} {} ({} ms)",
                            self.word(),
                            self.func(),
                            self.word(),
                            self.rng.range(1, 900)
                        );
                    } else {
                        let _ = writeln!(
                            s,
                            "FAIL {p}\n  ● {} › {}\n    {}",
                            self.typ(),
                            self.func(),
                            self.error_line()
                        );
                    }
                }
                let _ = writeln!(
                    s,
                    "Tests: {} failed, {} passed, {} total",
                    self.rng.range(0, 5),
                    lines,
                    lines + 3
                );
            }
            1 => {
                let _ = writeln!(s, "$ cargo test -p {}", self.t.package);
                for _ in 0..lines {
                    let (a, b) = (self.snake(), self.snake());
                    let ok = if self.rng.chance(0.9) { "ok" } else { "FAILED" };
                    let _ = writeln!(s, "test {a}::tests::{b} ... {ok}");
                }
                let _ = writeln!(
                    s,
                    "test result: ok. {lines} passed; 0 failed; finished in {}.{:02}s",
                    self.rng.below(9),
                    self.rng.below(100)
                );
            }
            2 => {
                let _ = writeln!(
                    s,
                    "$ git status\nOn branch {}\nChanges not staged for commit:",
                    self.rng.pick(&self.t.idents).to_lowercase()
                );
                for _ in 0..lines.min(30) {
                    let p = self.path();
                    let _ = writeln!(s, "\tmodified:   {p}");
                }
            }
            3 => {
                let q = self.ident();
                let _ = writeln!(s, "$ rg -n \"{q}\"");
                for _ in 0..lines {
                    let (p, a, b) = (self.path(), self.func(), self.snake());
                    let _ = writeln!(s, "{p}:{}:  const {b} = {a}({q});", self.rng.range(1, 800));
                }
            }
            4 => {
                let _ = writeln!(s, "$ ls -la {}", self.rng.pick(DIRS));
                for _ in 0..lines {
                    let p = self.path();
                    let name = p.rsplit('/').next().unwrap_or(&p).to_string();
                    let _ = writeln!(
                        s,
                        "-rw-r--r--  1 dev  staff  {:>6} Sep {:>2} {:02}:{:02} {name}",
                        self.rng.range(80, 90000),
                        self.rng.range(1, 30),
                        self.rng.below(24),
                        self.rng.below(60)
                    );
                }
            }
            _ => {
                let _ = writeln!(
                    s,
                    "$ npm run build\n> {}@{}.{}.0 build\n> tsc -p .",
                    self.t.package,
                    self.rng.below(4),
                    self.rng.below(20)
                );
                for _ in 0..lines {
                    let (p, e) = (self.path(), self.error_line());
                    let _ = writeln!(
                        s,
                        "{p}({},{}): error TS{}: {e}",
                        self.rng.range(1, 600),
                        self.rng.range(1, 80),
                        self.rng.range(2000, 2800)
                    );
                }
            }
        }
        self.push(&s);
    }

    fn file_dump(&mut self, lines: usize) {
        let p = self.path();
        let mut s = format!("{p}\n");
        for i in 0..lines {
            let (a, b, c) = (self.ident(), self.func(), self.snake());
            let _ = match self.rng.below(5) {
                0 => writeln!(s, "{:>4}  import {{ {a} }} from '{}';", i + 1, self.path()),
                1 => writeln!(s, "{:>4}  const {c} = {b}({a});", i + 1),
                2 => writeln!(
                    s,
                    "{:>4}  // {} {} {} {}",
                    i + 1,
                    self.word(),
                    self.word(),
                    self.word(),
                    self.word()
                ),
                3 => writeln!(
                    s,
                    "{:>4}  if ({c} === undefined) {{ return {b}(); }}",
                    i + 1
                ),
                _ => writeln!(
                    s,
                    "{:>4}  export const {} = {{ {c}: {} }};",
                    i + 1,
                    a,
                    self.rng.below(1000)
                ),
            };
        }
        self.push(&s);
    }
}

/// Target length in tokens for a message of this role.
fn target_tokens(role: Role, rng: &mut Rng) -> usize {
    let t = match role {
        Role::User | Role::System => rng.lognormal(22.0, 0.7),
        Role::Assistant => rng.lognormal(55.0, 0.7),
        Role::Tool => {
            if rng.chance(0.06) {
                // The long tail: big test runs, file dumps, logs.
                rng.lognormal(700.0, 0.6)
            } else {
                rng.lognormal(50.0, 0.8)
            }
        }
    };
    (t as usize).clamp(6, 3000)
}

fn message_text(v: &Vocab, t: &Topic, role: Role, rng: &mut Rng) -> String {
    let target = target_tokens(role, rng);
    let mut w = Writer {
        v,
        t,
        rng,
        out: String::new(),
        words: 0,
    };
    match role {
        Role::User | Role::System => {
            while w.words < target {
                if w.rng.chance(0.12) && target > 40 {
                    let e = w.error_line();
                    w.push(&format!("I get this:\n{e}\n"));
                } else if w.rng.chance(0.05) && target > 60 {
                    let frames = w.rng.range(3, 8);
                    w.stack_trace(frames);
                } else {
                    w.sentence();
                }
            }
        }
        Role::Assistant => {
            while w.words < target {
                let r = w.rng.f64();
                if r < 0.15 && target > 50 {
                    w.code();
                } else if r < 0.22 {
                    let (f, p) = (w.func(), w.path());
                    w.push(&format!("I'll update `{f}` in {p}. "));
                } else {
                    w.sentence();
                }
            }
        }
        Role::Tool => {
            while w.words < target {
                let lines = ((target - w.words) / 7).clamp(2, 150);
                match w.rng.below(4) {
                    0 => w.shell(lines),
                    1 => w.file_dump(lines),
                    2 => w.stack_trace(lines.min(14)),
                    _ => w.shell(lines / 2 + 1),
                }
            }
        }
    }
    w.out
}

/// UUID-shaped deterministic id for the message at position `i` of the sorted set.
fn message_id(i: usize) -> String {
    format!("00000000-0000-7000-8000-{:012x}", i)
}

/// Generates `size` messages.
pub fn generate(seed: u64, size: usize, vocab: &Vocab) -> Dataset {
    let mut master = Rng::fork(seed, 0x7EAD);
    let n_resources = (size / 2000).max(4);
    let mut threads = Vec::new();
    let mut raw: Vec<(i64, u32, u32, Role, String)> = Vec::with_capacity(size);
    let span = SPAN_DAYS * DAY_MS;
    while raw.len() < size {
        let tno = threads.len() as u32;
        let mut rng = Rng::fork(seed, 1 + tno as u64);
        let len = (rng.range(20, 200)).min(size - raw.len());
        let topic = Topic {
            idents: (0..6)
                .map(|_| vocab.idents.sample(&mut rng).to_string())
                .collect(),
            paths: (0..4)
                .map(|_| vocab.paths.sample(&mut rng).to_string())
                .collect(),
            rare: (0..3)
                .map(|_| vocab.rare.sample(&mut rng).to_string())
                .collect(),
            package: vocab.packages.sample(&mut rng).to_string(),
        };
        let title = format!(
            "{} {} in {}",
            cap(rng.pick_str(VERBS)),
            topic.idents[0],
            topic.paths[0]
        );
        let resource = format!("project-{}", master.below(n_resources));
        threads.push(Thread {
            resource_id: resource,
            title,
        });

        // Leave room at the end of the span so the thread fits before BASE_NOW_MS.
        let mut at = BASE_NOW_MS - span + (rng.f64() * (span - DAY_MS) as f64) as i64;
        let mut role = Role::User;
        for pos in 0..len {
            let text = message_text(vocab, &topic, role, &mut rng);
            raw.push((at, tno, pos as u32, role, text));
            // Next role and the pause before it.
            let (next, pause_ms) = match role {
                Role::User | Role::System => (
                    if rng.chance(0.3) {
                        Role::Tool
                    } else {
                        Role::Assistant
                    },
                    rng.range(2_000, 20_000),
                ),
                Role::Tool => (
                    if rng.chance(0.35) {
                        Role::Tool
                    } else {
                        Role::Assistant
                    },
                    rng.range(300, 8_000),
                ),
                Role::Assistant => (
                    if rng.chance(0.5) {
                        Role::Tool
                    } else {
                        Role::User
                    },
                    rng.range(3_000, 240_000),
                ),
            };
            role = next;
            at += pause_ms as i64;
        }
    }
    raw.sort_by_key(|m| (m.0, m.1, m.2));
    let messages = raw
        .into_iter()
        .enumerate()
        .map(|(i, (created_at, thread, _, role, content))| Message {
            id: message_id(i),
            thread,
            role,
            content,
            created_at,
        })
        .collect();
    Dataset { threads, messages }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_shaped() {
        let v = Vocab::new(7);
        let a = generate(7, 3000, &v);
        let b = generate(7, 3000, &Vocab::new(7));
        assert_eq!(a.messages.len(), 3000);
        assert!(a
            .messages
            .iter()
            .zip(&b.messages)
            .all(|(x, y)| x.content == y.content && x.created_at == y.created_at));
        assert!(a
            .messages
            .windows(2)
            .all(|w| w[0].created_at <= w[1].created_at));
        let span = a.max_created_at() - a.messages[0].created_at;
        assert!(span > 60 * DAY_MS, "spread over ~90 days");
        assert!(a.max_created_at() <= BASE_NOW_MS);
    }
}
