//! Client vectors: one float32 vector per (owner, model) from the client's embedding model —
//! the database runs no model — and their exact top-k search.
//!
//! * [`cache`]: decoded chunks kept in memory by build;
//! * [`math`]: the distances, summed in a fixed lane order so that both backends (two
//!   binaries) give the same bits;
//! * [`store`]: `mem_embed_set`, the row triggers, and the packing of every 256 vectors of a
//!   model into one chunk row, which is what a search scans;
//! * [`search`]: `mem_vector_search`.

pub(crate) mod cache;
internal!(math);
internal!(search);
internal!(store);

use crate::{Error, Result};

/// What a vector may belong to.
pub(crate) const KINDS: &[&str] = &["memory", "message", "item"];

/// The most dimensions a vector may have.
pub(crate) const MAX_DIMS: usize = 8192;

/// A vector from its stored form: float32 little-endian, 1 to [`MAX_DIMS`] of them, finite,
/// with a norm distances can use ([`check_norm`]).
pub(crate) fn from_blob(arg: &str, bytes: &[u8]) -> Result<Vec<f32>> {
    if bytes.is_empty() || bytes.len() % 4 != 0 || bytes.len() / 4 > MAX_DIMS {
        return Err(Error::invalid(
            arg,
            format!(
                "must be 1 to {MAX_DIMS} float32 values, little-endian ({} bytes is not a \
                 multiple of 4 in range); for a JSON array use mem_vector('[…]')",
                bytes.len()
            ),
        ));
    }
    let v: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    check_finite(arg, &v)?;
    check_norm(arg, &v)?;
    Ok(v)
}

/// The largest squared norm a vector may have: a quarter of float32's largest value, so that
/// `q · v` and `|q − v|²` of any two vectors, summed in float32 lanes, stay finite.
pub(crate) const MAX_SQUARED_NORM: f64 = f32::MAX as f64 / 4.0;

/// A vector every distance is defined for: not zero (it has no direction, so its cosine
/// distance to anything is undefined), and short enough that no sum of a distance overflows.
pub(crate) fn check_norm(arg: &str, v: &[f32]) -> Result<()> {
    let nn = math::squared_norm(v);
    if nn == 0.0 {
        return Err(Error::invalid(
            arg,
            "is a zero vector (or too close to one for float32): it has no direction",
        ));
    }
    if !(nn <= MAX_SQUARED_NORM) {
        return Err(Error::invalid(
            arg,
            format!(
                "is too long: its norm must be at most {:.1e} for float32 distances",
                MAX_SQUARED_NORM.sqrt()
            ),
        ));
    }
    Ok(())
}

/// The stored form of a vector.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn check_finite(arg: &str, v: &[f32]) -> Result<()> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(i) => Err(Error::invalid(
            arg,
            format!("value {i} is not a finite float32 (NaN and infinities are refused)"),
        )),
        None => Ok(()),
    }
}

/// `mem_vector(json)` → the stored form of a JSON array of numbers.
pub(crate) fn from_json(json: Option<&str>) -> Result<Option<Vec<u8>>> {
    let Some(text) = json else { return Ok(None) };
    let items: Vec<serde_json::Value> = serde_json::from_str(text)
        .map_err(|_| Error::invalid("json", "must be a JSON array of numbers"))?;
    Ok(Some(to_blob(&from_numbers("json", &items)?)))
}

/// A vector from JSON numbers (`arg` names them in errors), checked as a stored one is.
pub(crate) fn from_numbers(arg: &str, items: &[serde_json::Value]) -> Result<Vec<f32>> {
    if items.is_empty() || items.len() > MAX_DIMS {
        return Err(Error::invalid(
            arg,
            format!("must hold 1 to {MAX_DIMS} numbers"),
        ));
    }
    let v: Vec<f32> = items
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_f64()
                .map(|f| f as f32)
                .ok_or_else(|| Error::invalid(arg, format!("value {i} is not a number")))
        })
        .collect::<Result<_>>()?;
    check_finite(arg, &v)?;
    Ok(v)
}
