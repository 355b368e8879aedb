//! BM25 with a bounded multiplicative recency boost.
//!
//! ```text
//! idf(t)      = ln(1 + (N − n(t) + 0.5) / (n(t) + 0.5))               (always ≥ 0)
//! tf_part     = tf · (k1 + 1) / (tf + k1 · (1 − b + b · len / avgdl))
//! bm25(d)     = Σ over scoring clauses, in query order, of w(t) · idf(t) · tf_part(t, d)
//! w(t)        = 1, stem_weight for stems, stopword_weight for function words (query::weight)
//! recency(d)  = 1 + w · 2^(−max(0, now − created_at) / half_life)     (in [1, 1 + w])
//! score(d)    = bm25(d) · recency(d)
//! ```
//!
//! N, n(t) and avgdl are exact over the live documents (segments minus tombstones plus the
//! delta). Ties are broken by the larger document key.

use crate::json_opts::Opts;
use crate::{Error, Result};

/// Default recency weight: the newest document gets up to 30 % more than its BM25.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const DEFAULT_RECENCY_WEIGHT: f64 = 0.3;
/// Default half-life of the recency boost: 7 days in milliseconds.
pub(crate) const DEFAULT_HALF_LIFE_MS: f64 = 7.0 * 24.0 * 3600.0 * 1000.0;
/// Default weight of a stem (see [`super::stem`]).
pub(crate) const DEFAULT_STEM_WEIGHT: f64 = 0.5;
/// Default weight of a function word (see [`super::stopwords`]).
pub(crate) const DEFAULT_STOPWORD_WEIGHT: f64 = 0.2;
/// Default weight of two query words found next to each other (see [`super::query`]).
pub(crate) const DEFAULT_PROXIMITY_WEIGHT: f64 = 0.5;
/// Default number of hits.
pub(crate) const DEFAULT_LIMIT: usize = 10;
/// Largest `limit` accepted.
pub(crate) const MAX_LIMIT: usize = 100_000;

/// Per-call search settings.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct SearchParams {
    /// Number of hits to return (0 returns none).
    pub limit: usize,
    /// "Now" for the recency boost in Unix ms; `None` takes the database clock.
    pub now: Option<i64>,
    /// Weight `w` of the recency boost, ≥ 0 (0 turns it off).
    pub recency_weight: f64,
    /// Half-life of the recency boost in milliseconds, > 0.
    pub half_life_ms: f64,
    /// BM25 `k1`.
    pub k1: f64,
    /// BM25 `b`.
    pub b: f64,
    /// Weight of a query word's stem against the word itself, in [0, 1].
    pub stem_weight: f64,
    /// Weight of an English function word in a query that has other words, in [0, 1].
    pub stopword_weight: f64,
    /// Weight of two query words found next to each other in a document, in [0, 1].
    pub proximity_weight: f64,
}

impl Default for SearchParams {
    fn default() -> Self {
        SearchParams {
            limit: DEFAULT_LIMIT,
            now: None,
            recency_weight: DEFAULT_RECENCY_WEIGHT,
            half_life_ms: DEFAULT_HALF_LIFE_MS,
            k1: 1.2,
            b: 0.75,
            stem_weight: DEFAULT_STEM_WEIGHT,
            stopword_weight: DEFAULT_STOPWORD_WEIGHT,
            proximity_weight: DEFAULT_PROXIMITY_WEIGHT,
        }
    }
}

/// The options every searcher takes, by name.
pub(crate) const PARAM_OPTIONS: &[&str] = &[
    "limit",
    "now",
    "recency_weight",
    "half_life_days",
    "stem_weight",
    "stopword_weight",
    "proximity_weight",
];

impl SearchParams {
    /// The settings named in a searcher's options ([`PARAM_OPTIONS`]): `limit` (default
    /// `default_limit`, at most `max_limit`), `now`, the weights and `half_life_days`, checked.
    pub(crate) fn from_options(o: &Opts, default_limit: i64, max_limit: i64) -> Result<SearchParams> {
        let d = SearchParams::default();
        let mut params = SearchParams {
            limit: o.int("limit", default_limit, 0, max_limit)? as usize,
            now: o.opt_int("now")?,
            recency_weight: o.opt_f64("recency_weight")?.unwrap_or(d.recency_weight),
            stem_weight: o.opt_f64("stem_weight")?.unwrap_or(d.stem_weight),
            stopword_weight: o.opt_f64("stopword_weight")?.unwrap_or(d.stopword_weight),
            proximity_weight: o.opt_f64("proximity_weight")?.unwrap_or(d.proximity_weight),
            ..d
        };
        if let Some(d) = o.opt_f64("half_life_days")? {
            if !(d.is_finite() && d > 0.0) {
                return Err(Error::invalid(
                    "options.half_life_days",
                    "must be a positive number",
                ));
            }
            params.half_life_ms = d * 86_400_000.0;
        }
        params.validate().map_err(|e| match e {
            Error::InvalidArgument { arg, rule } => Error::invalid(format!("options.{arg}"), rule),
            other => other,
        })?;
        Ok(params)
    }

    /// Checks every setting; the error names the setting and the rule.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.limit > MAX_LIMIT {
            return Err(Error::invalid(
                "limit",
                format!("must be between 0 and {MAX_LIMIT}"),
            ));
        }
        if !(self.recency_weight.is_finite() && (0.0..=1000.0).contains(&self.recency_weight)) {
            return Err(Error::invalid(
                "recency_weight",
                "must be a number between 0 and 1000",
            ));
        }
        if !(self.half_life_ms.is_finite() && self.half_life_ms > 0.0) {
            return Err(Error::invalid(
                "half_life_ms",
                "must be a positive number of milliseconds",
            ));
        }
        if !(self.k1.is_finite() && (0.0..=100.0).contains(&self.k1)) {
            return Err(Error::invalid("k1", "must be a number between 0 and 100"));
        }
        if !(self.b.is_finite() && (0.0..=1.0).contains(&self.b)) {
            return Err(Error::invalid("b", "must be a number between 0 and 1"));
        }
        for (name, v) in [
            ("stem_weight", self.stem_weight),
            ("stopword_weight", self.stopword_weight),
            ("proximity_weight", self.proximity_weight),
        ] {
            check_weight(name, v)?;
        }
        Ok(())
    }
}

/// An analysis weight (`stem_weight`, `context_weight`, …): a number between 0 and 1.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn check_weight(name: &str, v: f64) -> Result<()> {
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(Error::invalid(name, "must be a number between 0 and 1"))
    }
}

/// Non-negative BM25 inverse document frequency of a term in `df` of `n` documents.
pub(crate) fn idf(n: u64, df: u64) -> f64 {
    let n = n as f64;
    let df = df as f64;
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The term-frequency part of BM25.
pub(crate) fn tf_part(tf: u32, len: u64, avgdl: f64, k1: f64, b: f64) -> f64 {
    let tf = tf as f64;
    let norm = if avgdl > 0.0 { len as f64 / avgdl } else { 1.0 };
    tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * norm))
}

/// The recency factor in `[1, 1 + w]`; non-decreasing in `created_at`.
pub(crate) fn recency(created_at: i64, now: i64, weight: f64, half_life_ms: f64) -> f64 {
    if weight == 0.0 {
        return 1.0;
    }
    let age = (now as i128 - created_at as i128).max(0) as f64;
    1.0 + weight * (-(age / half_life_ms)).exp2()
}

/// The statistics a query is scored with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Stats {
    pub docs: u64,
    pub total_len: u64,
}

impl Stats {
    pub(crate) fn avgdl(&self) -> f64 {
        if self.docs == 0 {
            0.0
        } else {
            self.total_len as f64 / self.docs as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idf_is_non_negative_and_decreasing() {
        assert!(idf(10, 10) > 0.0);
        assert!(idf(10, 1) > idf(10, 5));
        assert!(idf(1, 1) > 0.0);
    }

    #[test]
    fn recency_is_bounded_and_monotone() {
        let now = 1_000_000_000_000;
        assert_eq!(recency(now, now, 0.3, DEFAULT_HALF_LIFE_MS), 1.3);
        assert_eq!(recency(now + 5, now, 0.3, DEFAULT_HALF_LIFE_MS), 1.3);
        let week = recency(
            now - DEFAULT_HALF_LIFE_MS as i64,
            now,
            0.3,
            DEFAULT_HALF_LIFE_MS,
        );
        assert!((week - 1.15).abs() < 1e-12);
        assert!(recency(i64::MIN, i64::MAX, 0.3, 1.0) >= 1.0);
        assert_eq!(recency(0, 10, 0.0, 1.0), 1.0);
    }

    #[test]
    fn bad_params_are_named() {
        let p = SearchParams {
            half_life_ms: 0.0,
            ..Default::default()
        };
        assert!(p
            .validate()
            .unwrap_err()
            .to_string()
            .starts_with("half_life_ms"));
        let p = SearchParams {
            recency_weight: f64::NAN,
            ..Default::default()
        };
        assert!(p.validate().is_err());
        assert!(SearchParams::default().validate().is_ok());
    }
}
