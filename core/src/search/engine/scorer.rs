//! Everything a score or an upper bound needs, fixed for one search.

use crate::search::scoring::{recency, tf_part};

pub(crate) struct Scorer {
    pub k1: f64,
    pub b: f64,
    pub avgdl: f64,
    pub now: i64,
    pub w: f64,
    pub half_life: f64,
}

impl Scorer {
    pub(crate) fn tf(&self, tf: u32, len: u32) -> f64 {
        tf_part(tf, u64::from(len), self.avgdl, self.k1, self.b)
    }

    pub(crate) fn rec(&self, created: i64) -> f64 {
        recency(created, self.now, self.w, self.half_life)
    }

    /// The bound of a term's contribution, from the largest tf, the smallest length and the
    /// newest `created_at` it can meet.
    pub(crate) fn ub(&self, idf: f64, max_tf: u32, min_len: u32, max_created: i64) -> f64 {
        idf * self.tf(max_tf, min_len) * self.rec(max_created)
    }
}
