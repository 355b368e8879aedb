//! agentmem-bench: agentmem's search against its natural peers, same data, same run.
//!
//! - SQLite: `dist/agentmem0` (mem_messages + mem_search) against FTS5
//!   over an external-content table kept by triggers, ranked by bm25 minus a recency term.
//! - Postgres: `CREATE EXTENSION agentmem` against a tsvector column + GIN + ts_rank_cd.
//!
//! Prints ingest msg/s, search p50/p95/p99, index size, the ratios agentmem/peer with their
//! targets, and recall overlap@10; then one agent step's observational-memory bookkeeping
//! and task memory against a recursive-CTE ready query. Writes the same markdown to
//! `benches/results/latest.md`. See benches/README.md.

mod corpus;
mod generator;
mod observer_bench;
mod om_bench;
mod pg_bench;
mod queries;
mod report;
mod sqlite_bench;
mod sys;
mod tasks_bench;

use report::{Comparison, Outcome};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Everything the engine runners need to know.
pub struct Settings {
    pub data_dir: PathBuf,
    pub extension: PathBuf,
    pub batch: usize,
    pub optimize: bool,
    pub fts_recency_factor: f64,
    /// Time budget for the timed queries of one engine (warm-up gets a quarter of it).
    pub budget: Duration,
    /// Time budget for one engine's ingest; past it, only the ingest rate is reported.
    pub ingest_budget: Duration,
    pub now_ms: i64,
    pub keep_files: bool,
    /// Measure the peers only.
    pub skip_ours: bool,
    /// Measure agentmem only.
    pub skip_peers: bool,
    /// Queries run cold per engine (caches emptied before each).
    pub cold: usize,
    /// Messages ingested through `mem_message_add` (a prefix, in a database of their own).
    pub add_sample: usize,
    /// Code-search questions scored per size (code corpus only).
    pub quality_questions: usize,
}

/// Which messages the benchmark writes.
#[derive(Clone, Copy, PartialEq)]
enum Corpus {
    /// Real code and docs of pinned crates (src/corpus.rs).
    Code,
    /// The seeded generator (src/generator.rs).
    Synthetic,
}

struct Args {
    corpus: Corpus,
    sizes: Vec<usize>,
    queries: usize,
    warmup: usize,
    backends: Vec<String>,
    seed: u64,
    out: PathBuf,
    quick: bool,
    /// Print this many generated messages and queries, then exit (to look at the data).
    sample: usize,
    settings: Settings,
}

const USAGE: &str = "\
agentmem-bench [options]

  --quick                 20k messages, 150 queries, 20 s query budget (about 2 minutes)
  --corpus code|synthetic real code and docs of pinned crates, built once into
                          target/bench-corpus/ (default), or the seeded generator
  --sizes N[,N…]          data set sizes in messages (default 200000,1000000)
  --queries N             timed queries per engine (default 500)
  --warmup N              untimed warm-up queries per engine (default 50)
  --backends LIST         sqlite,postgres (default both; postgres needs AGENTMEM_PG)
  --batch N               rows per insert transaction, ours and peers alike (default 1000)
  --budget-secs S         time budget for one engine's timed queries (default 25)
  --ingest-budget-secs S  time budget for one engine's ingest (default 300, quick 60); past it
                          only the ingest rate is reported for that engine and size
  --seed N                generator seed (default 42)
  --no-optimize           skip mem_optimize() / FTS5 'optimize' / VACUUM before searching
  --fts-recency-factor F  the FTS5 peer's recency factor (default 1e-7)
  --extension PATH        the SQLite extension (default $AGENTMEM_EXT or dist/agentmem0)
  --data-dir DIR          where the SQLite files go (default /tmp/agentmem-bench)
  --cold N                queries run cold per engine: caches emptied before each (default 20)
  --add-sample N          messages ingested through mem_message_add, on a prefix (default 50000)
  --quality-questions N   code-search questions scored per size (default 300)
  --skip-ours             measure the peers only
  --skip-peers            measure agentmem only
  --keep                  keep the SQLite files and the Postgres database afterwards
  --out FILE              report file (default benches/results/latest.md)
  --sample N              print N generated messages and queries of the first size, then exit

Environment: AGENTMEM_PG  libpq-style connection string, e.g.
  \"host=127.0.0.1 port=5499 user=postgres dbname=agentmem_test\"; the benchmark creates and
  drops its own database agentmem_bench on that server.
";

fn parse_args() -> Result<Args, String> {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let default_ext = std::env::var_os("AGENTMEM_EXT")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("dist").join("agentmem0"));
    let mut a = Args {
        corpus: Corpus::Code,
        sizes: vec![200_000, 1_000_000],
        queries: 500,
        warmup: 50,
        backends: vec!["sqlite".into(), "postgres".into()],
        seed: 42,
        out: PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("results")
            .join("latest.md"),
        quick: false,
        sample: 0,
        settings: Settings {
            data_dir: PathBuf::from("/tmp/agentmem-bench"),
            extension: default_ext,
            batch: 1000,
            optimize: true,
            fts_recency_factor: 1e-7,
            budget: Duration::from_secs(25),
            ingest_budget: Duration::from_secs(300),
            now_ms: generator::BASE_NOW_MS,
            keep_files: false,
            skip_ours: false,
            skip_peers: false,
            cold: 20,
            add_sample: 50_000,
            quality_questions: 300,
        },
    };
    let (mut sizes, mut queries, mut warmup, mut budget, mut ingest_budget) =
        (None, None, None, None, None);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        let num = |s: String, name: &str| {
            s.parse::<u64>()
                .map_err(|_| format!("{name}: not a number: {s}"))
        };
        match flag.as_str() {
            "--quick" => a.quick = true,
            "--corpus" => {
                a.corpus = match value("--corpus")?.as_str() {
                    "code" => Corpus::Code,
                    "synthetic" => Corpus::Synthetic,
                    other => return Err(format!("--corpus: code or synthetic, not {other}")),
                }
            }
            "--sizes" => {
                let v = value("--sizes")?;
                let mut list = Vec::new();
                for p in v.split(',').filter(|p| !p.is_empty()) {
                    list.push(num(p.replace('_', ""), "--sizes")? as usize);
                }
                sizes = Some(list);
            }
            "--queries" => queries = Some(num(value("--queries")?, "--queries")? as usize),
            "--warmup" => warmup = Some(num(value("--warmup")?, "--warmup")? as usize),
            "--backends" => {
                a.backends = value("--backends")?
                    .split(',')
                    .map(|s| s.trim().to_lowercase())
                    .collect();
                if let Some(b) = a
                    .backends
                    .iter()
                    .find(|b| *b != "sqlite" && *b != "postgres")
                {
                    return Err(format!("--backends: unknown backend {b}"));
                }
            }
            "--batch" => {
                a.settings.batch = (num(value("--batch")?, "--batch")? as usize).clamp(1, 10_000)
            }
            "--budget-secs" => budget = Some(num(value("--budget-secs")?, "--budget-secs")?),
            "--ingest-budget-secs" => {
                ingest_budget = Some(num(value("--ingest-budget-secs")?, "--ingest-budget-secs")?)
            }
            "--seed" => a.seed = num(value("--seed")?, "--seed")?,
            "--no-optimize" => a.settings.optimize = false,
            "--fts-recency-factor" => {
                let v = value("--fts-recency-factor")?;
                a.settings.fts_recency_factor = v
                    .parse()
                    .map_err(|_| format!("--fts-recency-factor: not a number: {v}"))?;
            }
            "--extension" => a.settings.extension = PathBuf::from(value("--extension")?),
            "--data-dir" => a.settings.data_dir = PathBuf::from(value("--data-dir")?),
            "--keep" => a.settings.keep_files = true,
            "--skip-ours" => a.settings.skip_ours = true,
            "--skip-peers" => a.settings.skip_peers = true,
            "--cold" => a.settings.cold = num(value("--cold")?, "--cold")? as usize,
            "--add-sample" => {
                a.settings.add_sample = num(value("--add-sample")?, "--add-sample")? as usize
            }
            "--quality-questions" => {
                a.settings.quality_questions =
                    num(value("--quality-questions")?, "--quality-questions")? as usize
            }
            "--sample" => a.sample = num(value("--sample")?, "--sample")? as usize,
            "--out" => a.out = PathBuf::from(value("--out")?),
            "-h" | "--help" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown option {other}\n\n{USAGE}")),
        }
    }
    if a.quick {
        a.sizes = vec![20_000];
        a.queries = 150;
        a.warmup = 20;
        a.settings.budget = Duration::from_secs(20);
        a.settings.ingest_budget = Duration::from_secs(60);
        a.settings.cold = 5;
        a.settings.add_sample = 5_000;
        a.settings.quality_questions = 100;
    }
    if let Some(b) = ingest_budget {
        a.settings.ingest_budget = Duration::from_secs(b);
    }
    if let Some(s) = sizes {
        a.sizes = s;
    }
    if let Some(q) = queries {
        a.queries = q;
    }
    if let Some(w) = warmup {
        a.warmup = w;
    }
    if let Some(b) = budget {
        a.settings.budget = Duration::from_secs(b);
    }
    if a.sizes.is_empty() || a.sizes.contains(&0) {
        return Err("--sizes: give positive sizes".into());
    }
    Ok(a)
}

/// One line on stderr per engine as it finishes, so a long run shows progress.
pub fn log_outcome(backend: &str, size: usize, engine: &str, r: &Outcome) {
    match r {
        Ok(r) if r.ingest_cut => eprintln!(
            "[{backend} {size}] {engine}: ingest {:.0} msg/s; ingest budget spent after {} messages, search not measured",
            r.ingest_rate(),
            r.ingest_msgs
        ),
        Ok(r) => eprintln!(
            "[{backend} {size}] {engine}: ingest {:.0} msg/s, p50 {:.3} ms, p95 {:.3} ms, {} queries{}, index {}",
            r.ingest_rate(),
            r.latency.p50_ms,
            r.latency.p95_ms,
            r.latency.n,
            if r.latency.cut_short { " (budget)" } else { "" },
            r.index_bytes.map(|b| format!("{:.1} MB", b as f64 / 1048576.0)).unwrap_or_else(|| "n/a".into())
        ),
        Err(e) if e.starts_with(engine) => eprintln!("[{backend} {size}] {e}"),
        Err(e) => eprintln!("[{backend} {size}] {engine}: {e}"),
    }
}

fn utc_now() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn dataset_line(ds: &generator::Dataset, corpus: Corpus) -> String {
    let mut words: Vec<usize> = ds
        .messages
        .iter()
        .map(|m| m.content.split_whitespace().count())
        .collect();
    words.sort_unstable();
    let n = words.len().max(1);
    let long = words.iter().filter(|&&w| w > 300).count();
    let roles = |r: generator::Role| ds.messages.iter().filter(|m| m.role == r).count() * 100 / n;
    format!(
        "{} {} messages in {} threads, {:.0} MB of text; words per message: median {}, p90 {}, \
         max {}, {:.1}% over 300; roles user/assistant/tool/system {}/{}/{}/{}%",
        match corpus {
            Corpus::Code => "code corpus:",
            Corpus::Synthetic => "synthetic:",
        },
        ds.messages.len(),
        ds.threads.len(),
        ds.total_bytes() as f64 / 1048576.0,
        words[n / 2],
        words[n * 9 / 10],
        words[n - 1],
        long as f64 * 100.0 / n as f64,
        roles(generator::Role::User),
        roles(generator::Role::Assistant),
        roles(generator::Role::Tool),
        roles(generator::Role::System),
    )
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("agentmem-bench: {e}");
            std::process::exit(2);
        }
    };
    let started = Instant::now();
    let s = &args.settings;
    if let Err(e) = std::fs::create_dir_all(&s.data_dir) {
        eprintln!(
            "agentmem-bench: cannot create {}: {e}",
            s.data_dir.display()
        );
        std::process::exit(1);
    }
    let pg_url = std::env::var("AGENTMEM_PG")
        .ok()
        .filter(|u| !u.trim().is_empty());

    let vocab = generator::Vocab::new(args.seed);
    let largest = args.sizes.iter().copied().max().unwrap_or(0);
    let (queries, warmup) = match args.corpus {
        Corpus::Synthetic => (
            queries::generate(args.seed, args.queries, &vocab),
            queries::generate(args.seed.wrapping_add(1_000_003), args.warmup, &vocab),
        ),
        Corpus::Code => match corpus::questions(largest, largest) {
            Ok(qs) => (
                corpus::queries(&qs, args.seed, args.queries),
                corpus::queries(&qs, args.seed.wrapping_add(1_000_003), args.warmup),
            ),
            Err(e) => {
                eprintln!("agentmem-bench: {e}");
                std::process::exit(1);
            }
        },
    };
    let dataset = |size: usize| -> generator::Dataset {
        match args.corpus {
            Corpus::Synthetic => generator::generate(args.seed, size, &vocab),
            Corpus::Code => corpus::messages(size, largest).unwrap_or_else(|e| {
                eprintln!("agentmem-bench: {e}");
                std::process::exit(1);
            }),
        }
    };

    if args.sample > 0 {
        let ds = dataset(args.sizes[0]);
        println!("{}\n", dataset_line(&ds, args.corpus));
        let step = ds
            .messages
            .len()
            .checked_div(args.sample)
            .unwrap_or(1)
            .max(1);
        for m in ds.messages.iter().step_by(step).take(args.sample) {
            println!(
                "--- {} thread {} {} at {}\n{}",
                m.id,
                m.thread,
                m.role.as_str(),
                m.created_at,
                m.content
            );
        }
        println!("--- queries");
        for q in queries.iter().take(args.sample) {
            println!("{q}");
        }
        return;
    }

    let mut comparisons: Vec<Comparison> = Vec::new();
    let mut data_lines = Vec::new();
    for &size in &args.sizes {
        let t = Instant::now();
        let ds = dataset(size);
        let line = dataset_line(&ds, args.corpus);
        eprintln!(
            "[data {size}] {line} (generated in {:.1} s)",
            t.elapsed().as_secs_f64()
        );
        data_lines.push(line);
        let questions: Vec<(String, Vec<usize>)> = match args.corpus {
            Corpus::Synthetic => Vec::new(),
            Corpus::Code => corpus::questions(size, largest)
                .unwrap_or_default()
                .into_iter()
                .take(s.quality_questions)
                .map(|q| (q.text, q.relevant))
                .collect(),
        };
        for backend in &args.backends {
            match backend.as_str() {
                "sqlite" => {
                    comparisons.push(sqlite_bench::run(&ds, &queries, &warmup, &questions, s))
                }
                _ => match &pg_url {
                    Some(url) => {
                        comparisons.push(pg_bench::run(url, &ds, &queries, &warmup, &questions, s))
                    }
                    None => {
                        let e = "AGENTMEM_PG not set".to_string();
                        comparisons.push(Comparison {
                            backend: "postgres",
                            peer_name: "tsvector",
                            size,
                            ours: Err(e.clone()),
                            peer: Err(e),
                        })
                    }
                },
            }
        }
    }

    let sqlite_version = rusqlite::version();
    let pg_version = pg_url
        .as_deref()
        .and_then(pg_bench::server_version)
        .unwrap_or_else(|| "n/a".into());
    let mut header = format!(
        "# agentmem benchmark\n\n\
         {} · {} CPUs · SQLite {sqlite_version} · PostgreSQL {pg_version} · seed {} · batch {} rows · \
         {} timed queries per engine after {} warm-up (budget {} s) · optimize {} · run took {:.0} s\n\n\
         Command: `agentmem-bench {}`\n\n## Data\n\n",
        utc_now(),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        args.seed,
        s.batch,
        args.queries,
        args.warmup,
        s.budget.as_secs(),
        if s.optimize { "on" } else { "off" },
        started.elapsed().as_secs_f64(),
        std::env::args().skip(1).collect::<Vec<_>>().join(" "),
    );
    for l in &data_lines {
        header.push_str(&format!("- {l}\n"));
    }
    header.push_str(&format!(
        "\nQueries (first 8 of {}): {}\n",
        queries.len(),
        queries
            .iter()
            .take(8)
            .map(|q| format!("`{q}`"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let mut text = report::render(&header, &comparisons);
    if !s.skip_ours {
        eprintln!("[om] observational-memory bookkeeping");
        text.push('\n');
        text.push_str(&om_bench::run(&s.extension, pg_url.as_deref(), args.quick));
        eprintln!("[tasks] ready queue, claims, closes");
        text.push('\n');
        text.push_str(&tasks_bench::run(
            &s.extension,
            pg_url.as_deref(),
            args.quick,
        ));
        eprintln!("[observer] events and finalize");
        text.push('\n');
        text.push_str(&observer_bench::run(
            &s.extension,
            pg_url.as_deref(),
            args.quick,
        ));
    }
    text.push_str(
        "\nLatency is per query, executing and fetching all rows, single connection. Ratios are \
         agentmem/peer: below 1 is faster for search latency, above 1 is faster for ingest; \
         latency ratios are over the queries both engines ran (`queries`). \
         overlap@10 is informational (the engines rank differently by design). A `(budget)` mark \
         means the per-engine time budget ended the timed queries early. See benches/README.md.\n",
    );
    println!("{text}");
    if let Some(dir) = args.out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(&args.out, &text) {
        Ok(()) => eprintln!("agentmem-bench: wrote {}", args.out.display()),
        Err(e) => eprintln!("agentmem-bench: cannot write {}: {e}", args.out.display()),
    }
}
