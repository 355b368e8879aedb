//! Distances between vectors. Sums run over 8 independent float32 lanes, added in a fixed
//! order at the end: the compiler may not reassociate float additions, so this exact order is
//! what both the SQLite and the Postgres binary execute (the same bits on both), and 8 lanes
//! are what SIMD registers hold.

/// How a search measures distance; smaller is closer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) enum Metric {
    /// `1 − cos(q, v)`; a zero vector is at distance 1.
    Cosine,
    /// Euclidean distance.
    L2,
    /// `−(q · v)`, for vectors the model normalised.
    Dot,
}

impl Metric {
    pub(crate) const NAMES: &'static [&'static str] = &["cosine", "l2", "dot"];

    pub(crate) fn parse(name: &str) -> Option<Metric> {
        match name {
            "cosine" => Some(Metric::Cosine),
            "l2" => Some(Metric::L2),
            "dot" => Some(Metric::Dot),
            _ => None,
        }
    }
}

const LANES: usize = 8;

fn fold(acc: [f32; LANES]) -> f64 {
    acc.iter().fold(0.0f64, |s, x| s + f64::from(*x))
}

/// `(q · v, v · v)`, 8 lanes.
#[inline(always)]
fn dot_and_norm_lanes(q: &[f32], v: &[f32]) -> (f64, f64) {
    let mut dot = [0.0f32; LANES];
    let mut nn = [0.0f32; LANES];
    let (qc, vc) = (q.chunks_exact(LANES), v.chunks_exact(LANES));
    let (qr, vr) = (qc.remainder(), vc.remainder());
    for (a, b) in qc.zip(vc) {
        for i in 0..LANES {
            dot[i] += a[i] * b[i];
            nn[i] += b[i] * b[i];
        }
    }
    for (i, (a, b)) in qr.iter().zip(vr).enumerate() {
        dot[i] += a * b;
        nn[i] += b * b;
    }
    (fold(dot), fold(nn))
}

/// Squared Euclidean distance, 8 lanes.
#[inline(always)]
fn squared_l2_lanes(q: &[f32], v: &[f32]) -> f64 {
    let mut acc = [0.0f32; LANES];
    let (qc, vc) = (q.chunks_exact(LANES), v.chunks_exact(LANES));
    let (qr, vr) = (qc.remainder(), vc.remainder());
    for (a, b) in qc.zip(vc) {
        for i in 0..LANES {
            let d = a[i] - b[i];
            acc[i] += d * d;
        }
    }
    for (i, (a, b)) in qr.iter().zip(vr).enumerate() {
        let d = a - b;
        acc[i] += d * d;
    }
    fold(acc)
}

// The same loops compiled for AVX2, chosen at run time. Each lane still multiplies, then adds
// (no fused multiply-add), so the bits are those of the portable loops.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_and_norm_avx2(q: &[f32], v: &[f32]) -> (f64, f64) {
    dot_and_norm_lanes(q, v)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn squared_l2_avx2(q: &[f32], v: &[f32]) -> f64 {
    squared_l2_lanes(q, v)
}

#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    static AVX2: once_cell::sync::Lazy<bool> =
        once_cell::sync::Lazy::new(|| std::arch::is_x86_feature_detected!("avx2"));
    *AVX2
}

fn dot_and_norm(q: &[f32], v: &[f32]) -> (f64, f64) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2 (checked at run time).
        return unsafe { dot_and_norm_avx2(q, v) };
    }
    dot_and_norm_lanes(q, v)
}

fn squared_l2(q: &[f32], v: &[f32]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2 (checked at run time).
        return unsafe { squared_l2_avx2(q, v) };
    }
    squared_l2_lanes(q, v)
}

/// `v · v`, summed as every distance sums it (8 float32 lanes): what decides whether the
/// distances of `v` can be computed at all (see [`super::check_norm`]).
pub(crate) fn squared_norm(v: &[f32]) -> f64 {
    dot_and_norm(v, v).1
}

/// A query, prepared once for many distances.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Query {
    pub v: Vec<f32>,
    norm: f64,
    metric: Metric,
}

impl Query {
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn new(v: Vec<f32>, metric: Metric) -> Query {
        let (_, nn) = dot_and_norm(&v, &v);
        Query {
            norm: nn.sqrt(),
            v,
            metric,
        }
    }

    /// The distance from the query to `v` (same length).
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn distance(&self, v: &[f32]) -> f64 {
        match self.metric {
            Metric::L2 => squared_l2(&self.v, v).sqrt(),
            Metric::Dot => -dot_and_norm(&self.v, v).0,
            Metric::Cosine => {
                let (dot, nn) = dot_and_norm(&self.v, v);
                let denom = self.norm * nn.sqrt();
                if denom == 0.0 {
                    1.0
                } else {
                    1.0 - dot / denom
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_match_their_definitions() {
        let q: Vec<f32> = (0..19).map(|i| (i as f32 * 0.37).sin()).collect();
        let v: Vec<f32> = (0..19).map(|i| (i as f32 * 0.11).cos()).collect();
        let dot: f64 = q.iter().zip(&v).map(|(a, b)| f64::from(a * b)).sum();
        let nq: f64 = q.iter().map(|a| f64::from(a * a)).sum::<f64>().sqrt();
        let nv: f64 = v.iter().map(|a| f64::from(a * a)).sum::<f64>().sqrt();
        let l2: f64 = q
            .iter()
            .zip(&v)
            .map(|(a, b)| f64::from((a - b) * (a - b)))
            .sum::<f64>()
            .sqrt();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-5;
        assert!(close(Query::new(q.clone(), Metric::Dot).distance(&v), -dot));
        assert!(close(Query::new(q.clone(), Metric::L2).distance(&v), l2));
        assert!(close(
            Query::new(q.clone(), Metric::Cosine).distance(&v),
            1.0 - dot / (nq * nv)
        ));
        assert_eq!(Query::new(q, Metric::Cosine).distance(&[0.0; 19]), 1.0);
    }
}
