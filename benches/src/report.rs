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

/// The targets of issue 3.
pub struct Targets {
    pub p50_max: f64,
    pub p95_max: Option<f64>,
    pub ingest_min: f64,
}

pub fn targets(backend: &str) -> Targets {
    match backend {
        "sqlite" => Targets {
            p50_max: 0.1,
            p95_max: Some(0.2),
            ingest_min: 0.7,
        },
        _ => Targets {
            p50_max: 0.05,
            p95_max: None,
            ingest_min: 0.7,
        },
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

    out.push_str("\n## Ratios agentmem / peer (targets from issue 3)\n\n");
    out.push_str("| backend | messages | peer | ingest | search p50 | search p95 | search p99 | queries | index size | overlap@10 |\n");
    out.push_str("|---|---|---|---|---|---|---|---:|---|---:|\n");
    for c in comparisons {
        let t = targets(c.backend);
        match (&c.ours, &c.peer) {
            (Ok(o), Ok(p)) if o.ingest_cut || p.ingest_cut => {
                let ingest = o.ingest_rate() / p.ingest_rate();
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | search not measured (ingest budget spent) | | | | | |",
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
                    (Some(a), Some(b)) if b > 0 => format!("{:.3}×", a as f64 / b as f64),
                    _ => "n/a".into(),
                };
                let ov = overlap(&o.hits, &p.hits)
                    .map(|v| format!("{:.2}", v))
                    .unwrap_or_else(|| "n/a".into());
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {} | {n} | {} | {} |",
                    c.backend,
                    size_label(c.size),
                    c.peer_name,
                    ratio_cell(ingest, Some(("≥", t.ingest_min)), false),
                    ratio_cell(p50, Some(("≤", t.p50_max)), true),
                    ratio_cell(p95, t.p95_max.map(|m| ("≤", m)), true),
                    ratio_cell(p99, None, true),
                    size,
                    ov
                );
            }
            (Err(e), _) | (_, Err(e)) => {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {e} | | | | | | |",
                    c.backend,
                    size_label(c.size),
                    c.peer_name
                );
            }
        }
    }
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
