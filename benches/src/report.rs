//! Measurements, their summary statistics, and the markdown report.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// What one engine measured on one data set.
#[derive(Default, Clone)]
pub struct EngineResult {
    pub ingest_secs: f64,
    pub ingest_msgs: usize,
    /// The ingest time budget ran out before every message was in: only ingest is measured.
    pub ingest_cut: bool,
    /// Time of the engine's own merge/optimise step after ingest (not part of ingest msg/s).
    pub optimize_secs: Option<f64>,
    /// Bytes of the search index alone (ours: mem_idx_* tables; peers: FTS5 shadow tables, or
    /// the tsvector column plus its GIN index).
    pub index_bytes: Option<u64>,
    /// Bytes of the whole database (for context).
    pub db_bytes: Option<u64>,
    pub latency: Latency,
    /// Each timed query's latency in ms, in query order (for ratios over a common prefix).
    pub samples_ms: Vec<f64>,
    /// Top-10 message ids per timed query, in the order the queries ran.
    pub hits: Vec<Vec<String>>,
    /// Queries with every cache of the engine emptied before each (and the OS page cache when
    /// permitted: see `cold_note`).
    pub cold: Option<Latency>,
    /// Bytes read per query, warm and cold (SQLite: from the database file; Postgres: shared
    /// buffer pages touched × 8 KiB, from EXPLAIN BUFFERS).
    pub read_warm: Option<f64>,
    pub read_cold: Option<f64>,
    /// Bytes the ingest wrote per message (SQLite: to the database and WAL files; Postgres:
    /// WAL bytes).
    pub write_per_msg: Option<f64>,
    /// Messages per second through `mem_message_add` (ours only, on a prefix).
    pub add_rate: Option<f64>,
    /// Code-search quality on the corpus' questions.
    pub quality: Option<Quality>,
}

/// Retrieval quality over questions with known answers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quality {
    pub n: usize,
    /// Share of the relevant messages in the top 5 / 10, averaged over questions.
    pub r5: f64,
    pub r10: f64,
    /// Mean reciprocal rank of the first relevant message within the top 10.
    pub mrr10: f64,
}

/// The corpus position of a message id (`00000000-0000-7000-8000-{position:012x}`).
pub fn position_of(id: &str) -> Option<usize> {
    usize::from_str_radix(id.rsplit('-').next()?, 16).ok()
}

/// Quality of `search` (top 10 ids) on `(question, relevant positions)`.
pub fn quality(
    questions: &[(String, Vec<usize>)],
    budget: std::time::Duration,
    mut search: impl FnMut(&str) -> Result<Vec<String>, String>,
) -> Result<Quality, String> {
    let mut q = Quality::default();
    let started = std::time::Instant::now();
    for (text, relevant) in questions {
        if q.n > 0 && started.elapsed() > budget {
            break; // the questions scored so far are a prefix, reported as `questions`
        }
        let ids = search(text)?;
        let ranked: Vec<usize> = ids.iter().filter_map(|i| position_of(i)).collect();
        let within = |k: usize| {
            ranked
                .iter()
                .take(k)
                .filter(|p| relevant.contains(p))
                .count() as f64
                / relevant.len() as f64
        };
        q.r5 += within(5);
        q.r10 += within(10);
        if let Some(r) = ranked.iter().take(10).position(|p| relevant.contains(p)) {
            q.mrr10 += 1.0 / (r + 1) as f64;
        }
        q.n += 1;
    }
    if q.n > 0 {
        let n = q.n as f64;
        q.r5 /= n;
        q.r10 /= n;
        q.mrr10 /= n;
    }
    Ok(q)
}

/// Runs each query cold: `one` empties the engine's caches, runs the query and returns its
/// time in ms and the bytes it read. Returns the latency and the mean bytes read.
pub fn time_cold(
    queries: &[String],
    mut one: impl FnMut(&str) -> Result<(f64, u64), String>,
) -> Result<(Latency, f64), String> {
    let mut ms = Vec::with_capacity(queries.len());
    let mut bytes = 0u64;
    for q in queries {
        let (t, b) = one(q).map_err(|e| format!("cold query {q:?}: {e}"))?;
        ms.push(t);
        bytes += b;
    }
    let n = ms.len().max(1) as f64;
    Ok((Latency::from_samples(ms, 0, false), bytes as f64 / n))
}

impl EngineResult {
    pub fn ingest_rate(&self) -> f64 {
        self.ingest_msgs as f64 / self.ingest_secs.max(1e-9)
    }

    /// The result of an ingest the time budget cut short: search is not measured.
    pub fn ingest_only(ingest_secs: f64, ingest_msgs: usize) -> EngineResult {
        EngineResult {
            ingest_secs,
            ingest_msgs,
            ingest_cut: true,
            ..EngineResult::default()
        }
    }
}

/// Either a measurement or the reason there is none.
pub type Outcome = Result<EngineResult, String>;

#[derive(Default, Clone)]
pub struct Latency {
    pub n: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub mean_ms: f64,
    pub mean_hits: f64,
    /// The time budget ran out before every query ran.
    pub cut_short: bool,
}

impl Latency {
    pub fn from_samples(mut ms: Vec<f64>, total_hits: usize, cut_short: bool) -> Latency {
        if ms.is_empty() {
            return Latency {
                cut_short,
                ..Latency::default()
            };
        }
        ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let q = |p: f64| {
            // Nearest-rank percentile.
            let rank = ((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len());
            ms[rank - 1]
        };
        Latency {
            n: ms.len(),
            p50_ms: q(0.50),
            p95_ms: q(0.95),
            p99_ms: q(0.99),
            mean_ms: ms.iter().sum::<f64>() / ms.len() as f64,
            mean_hits: total_hits as f64 / ms.len() as f64,
            cut_short,
        }
    }
}

/// What `time_queries` returns: the summary, each query's latency, and each query's ids.
pub type Timed = (Latency, Vec<f64>, Vec<Vec<String>>);

/// Runs `warmup` untimed, then `queries` timed one by one (each including fetching all its rows)
/// until they are done or `budget` is spent.
pub fn time_queries<F>(
    queries: &[String],
    warmup: &[String],
    budget: Duration,
    mut search: F,
) -> Result<Timed, String>
where
    F: FnMut(&str) -> Result<Vec<String>, String>,
{
    // Warm-up gets a quarter of the budget (at most 10 s): it only has to touch the index.
    let warm_budget = (budget / 4).min(Duration::from_secs(10));
    let started = Instant::now();
    for q in warmup {
        if started.elapsed() > warm_budget {
            break;
        }
        search(q).map_err(|e| format!("query {q:?}: {e}"))?;
    }
    let started = Instant::now();
    let mut samples = Vec::with_capacity(queries.len());
    let mut hits = Vec::with_capacity(queries.len());
    let mut total = 0;
    let mut cut_short = false;
    for (i, q) in queries.iter().enumerate() {
        if i > 0 && started.elapsed() > budget {
            cut_short = true;
            break;
        }
        let t = Instant::now();
        let ids = search(q).map_err(|e| format!("query {q:?}: {e}"))?;
        samples.push(t.elapsed().as_secs_f64() * 1e3);
        total += ids.len();
        hits.push(ids);
    }
    Ok((
        Latency::from_samples(samples.clone(), total, cut_short),
        samples,
        hits,
    ))
}

/// Mean overlap@10 of two engines' results over the queries both ran: |A ∩ B| / max(|A|, |B|),
/// queries where both returned nothing skipped.
pub fn overlap(a: &[Vec<String>], b: &[Vec<String>]) -> Option<f64> {
    let mut sum = 0.0;
    let mut n = 0;
    for (x, y) in a.iter().zip(b) {
        let denom = x.len().max(y.len());
        if denom == 0 {
            continue;
        }
        let sx: HashSet<&String> = x.iter().collect();
        let common = y.iter().filter(|id| sx.contains(id)).count();
        sum += common as f64 / denom as f64;
        n += 1;
    }
    (n > 0).then(|| sum / n as f64)
}

/// One backend at one size: ours against its peer.
pub struct Comparison {
    pub backend: &'static str,
    pub peer_name: &'static str,
    pub size: usize,
    pub ours: Outcome,
    pub peer: Outcome,
}

/// The targets (docs/search.md, "Targets").
pub struct Targets {
    pub p50_max: f64,
    pub p95_max: Option<f64>,
    pub ingest_min: f64,
    pub size_max: f64,
}

pub fn targets(backend: &str) -> Targets {
    match backend {
        "sqlite" => Targets {
            p50_max: 0.1,
            p95_max: Some(0.2),
            ingest_min: 0.7,
            size_max: 2.0,
        },
        _ => Targets {
            p50_max: 0.1,
            p95_max: None,
            ingest_min: 0.7,
            size_max: 2.0,
        },
    }
}

fn kb(b: Option<f64>) -> String {
    b.map(|b| format!("{:.1}", b / 1024.0))
        .unwrap_or_else(|| "–".into())
}

/// Cold queries, bytes read per query and bytes written per message, per engine.
fn io_table(out: &mut String, comparisons: &[Comparison]) {
    out.push_str("\n## Cold cache and I/O\n\n");
    out.push_str("| backend | messages | engine | cold p50 ms | cold p95 ms | KiB read/query warm | KiB read/query cold | KiB written/message |\n");
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|\n");
    for c in comparisons {
        for (name, r) in [("agentmem", &c.ours), (c.peer_name, &c.peer)] {
            let Ok(r) = r else { continue };
            if r.ingest_cut {
                continue;
            }
            let (p50, p95) = r
                .cold
                .as_ref()
                .map(|l| (format!("{:.2}", l.p50_ms), format!("{:.2}", l.p95_ms)))
                .unwrap_or_else(|| ("–".into(), "–".into()));
            let _ = writeln!(
                out,
                "| {} | {} | {name} | {p50} | {p95} | {} | {} | {} |",
                c.backend,
                size_label(c.size),
                kb(r.read_warm),
                kb(r.read_cold),
                kb(r.write_per_msg),
            );
        }
    }
}

/// Ingest through plain INSERT and through mem_message_add.
fn ingest_table(out: &mut String, comparisons: &[Comparison]) {
    out.push_str("\n## Ingest paths (messages/s)\n\n");
    out.push_str("| backend | messages | agentmem INSERT | agentmem mem_message_add (prefix) | peer INSERT | INSERT ratio | mem_message_add ratio |\n");
    out.push_str("|---|---|---:|---:|---:|---|---|\n");
    for c in comparisons {
        let (Ok(o), Ok(p)) = (&c.ours, &c.peer) else {
            continue;
        };
        let t = targets(c.backend);
        let add = o
            .add_rate
            .map(|a| {
                (
                    format!("{a:.0}"),
                    ratio_cell(a / p.ingest_rate(), Some(("≥", t.ingest_min)), false),
                )
            })
            .unwrap_or_else(|| ("–".into(), "–".into()));
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} | {} | {:.0} | {} | {} |",
            c.backend,
            size_label(c.size),
            o.ingest_rate(),
            add.0,
            p.ingest_rate(),
            ratio_cell(
                o.ingest_rate() / p.ingest_rate(),
                Some(("≥", t.ingest_min)),
                false
            ),
            add.1,
        );
    }
}

/// Code-search quality (questions from the crates' doc comments, answers known).
fn quality_table(out: &mut String, comparisons: &[Comparison]) {
    if !comparisons
        .iter()
        .any(|c| matches!(&c.ours, Ok(r) if r.quality.is_some()))
    {
        return;
    }
    out.push_str("\n## Code-search quality (doc-comment questions, top 10; peers rank by BM25 alone: FTS5 `rank`, `ts_rank_cd`)\n\n");
    out.push_str("| backend | messages | engine | questions | R@5 | R@10 | MRR@10 |\n");
    out.push_str("|---|---|---|---:|---:|---:|---:|\n");
    for c in comparisons {
        for (name, r) in [("agentmem", &c.ours), (c.peer_name, &c.peer)] {
            if let Ok(EngineResult {
                quality: Some(q), ..
            }) = r
            {
                let _ = writeln!(
                    out,
                    "| {} | {} | {name} | {} | {:.3} | {:.3} | {:.3} |",
                    c.backend,
                    size_label(c.size),
                    q.n,
                    q.r5,
                    q.r10,
                    q.mrr10
                );
            }
        }
    }
}

fn mb(b: Option<u64>) -> String {
    b.map(|b| format!("{:.1}", b as f64 / 1048576.0))
        .unwrap_or_else(|| "n/a".into())
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "PASS"
    } else {
        "FAIL"
    }
}

fn ratio_cell(ratio: f64, target: Option<(&str, f64)>, lower_is_better: bool) -> String {
    match target {
        Some((label, t)) => {
            let ok = if lower_is_better {
                ratio <= t
            } else {
                ratio >= t
            };
            format!("{ratio:.3}× ({label} {t}×: {})", verdict(ok))
        }
        None => format!("{ratio:.3}×"),
    }
}

fn size_label(n: usize) -> String {
    if n >= 1_000_000 && n.is_multiple_of(1_000_000) {
        format!("{}M", n / 1_000_000)
    } else if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

fn engine_row(out: &mut String, c: &Comparison, name: &str, r: &Outcome) {
    match r {
        Ok(r) if r.ingest_cut => {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.0} | ingest budget spent after {} messages: search not measured | | | | | | | | |",
                c.backend,
                size_label(c.size),
                name,
                r.ingest_rate(),
                r.ingest_msgs
            );
        }
        Ok(r) => {
            let l = &r.latency;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.0} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {}{} | {:.1} | {} | {} |",
                c.backend,
                size_label(c.size),
                name,
                r.ingest_rate(),
                r.optimize_secs.map(|s| format!("{s:.1}")).unwrap_or_else(|| "–".into()),
                l.p50_ms,
                l.p95_ms,
                l.p99_ms,
                l.mean_ms,
                l.n,
                if l.cut_short { " (budget)" } else { "" },
                l.mean_hits,
                mb(r.index_bytes),
                mb(r.db_bytes),
            );
        }
        Err(e) => {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {e} | | | | | | | | | |",
                c.backend,
                size_label(c.size),
                name
            );
        }
    }
}

/// The markdown report: a measurements table, a ratios table with the targets, and notes.
pub fn render(header: &str, comparisons: &[Comparison]) -> String {
    let mut out = String::new();
    out.push_str(header);
    out.push_str("\n## Measurements\n\n");
    out.push_str("| backend | messages | engine | ingest msg/s | optimize s | p50 ms | p95 ms | p99 ms | mean ms | queries | mean hits | index MB | db MB |\n");
    out.push_str("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for c in comparisons {
        engine_row(&mut out, c, "agentmem", &c.ours);
        engine_row(&mut out, c, c.peer_name, &c.peer);
    }

    out.push_str("\n## Ratios agentmem / peer (targets: docs/search.md)\n\n");
    out.push_str("| backend | messages | peer | ingest | search p50 | search p95 | search p99 | cold p50 | queries | index size | overlap@10 |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---:|---|---:|\n");
    for c in comparisons {
        let t = targets(c.backend);
        match (&c.ours, &c.peer) {
            (Ok(o), Ok(p)) if o.ingest_cut || p.ingest_cut => {
                let ingest = o.ingest_rate() / p.ingest_rate();
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | search not measured (ingest budget spent) | | | | | | |",
                    c.backend,
                    size_label(c.size),
                    c.peer_name,
                    ratio_cell(ingest, Some(("≥", t.ingest_min)), false),
                );
            }
            (Ok(o), Ok(p)) => {
                let ingest = o.ingest_rate() / p.ingest_rate();
                // Latency ratios over the queries both engines ran (a budget may stop one early).
                let n = o.samples_ms.len().min(p.samples_ms.len());
                let lo = Latency::from_samples(o.samples_ms[..n].to_vec(), 0, false);
                let lp = Latency::from_samples(p.samples_ms[..n].to_vec(), 0, false);
                let p50 = lo.p50_ms / lp.p50_ms.max(1e-9);
                let p95 = lo.p95_ms / lp.p95_ms.max(1e-9);
                let p99 = lo.p99_ms / lp.p99_ms.max(1e-9);
                let size = match (o.index_bytes, p.index_bytes) {
                    (Some(a), Some(b)) if b > 0 => {
                        ratio_cell(a as f64 / b as f64, Some(("≤", t.size_max)), true)
                    }
                    _ => "n/a".into(),
                };
                let cold = match (&o.cold, &p.cold) {
                    (Some(a), Some(b)) => ratio_cell(a.p50_ms / b.p50_ms.max(1e-9), None, true),
                    _ => "–".into(),
                };
                let ov = overlap(&o.hits, &p.hits)
                    .map(|v| format!("{:.2}", v))
                    .unwrap_or_else(|| "n/a".into());
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {n} | {} | {} |",
                    c.backend,
                    size_label(c.size),
                    c.peer_name,
                    ratio_cell(ingest, Some(("≥", t.ingest_min)), false),
                    ratio_cell(p50, Some(("≤", t.p50_max)), true),
                    ratio_cell(p95, t.p95_max.map(|m| ("≤", m)), true),
                    ratio_cell(p99, None, true),
                    cold,
                    size,
                    ov
                );
            }
            (Err(e), _) | (_, Err(e)) => {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {e} | | | | | | | |",
                    c.backend,
                    size_label(c.size),
                    c.peer_name
                );
            }
        }
    }
    ingest_table(&mut out, comparisons);
    io_table(&mut out, comparisons);
    quality_table(&mut out, comparisons);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_nearest_rank() {
        let l = Latency::from_samples((1..=100).map(|x| x as f64).collect(), 0, false);
        assert_eq!((l.p50_ms, l.p95_ms, l.p99_ms), (50.0, 95.0, 99.0));
    }

    #[test]
    fn overlap_counts_common_ids() {
        let a = vec![vec!["1".to_string(), "2".into()], vec![]];
        let b = vec![vec!["2".to_string(), "3".into(), "4".into()], vec![]];
        assert!((overlap(&a, &b).unwrap() - 1.0 / 3.0).abs() < 1e-12);
    }
}
