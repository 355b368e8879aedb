//! A memory's life after it is written: corrections, deprecation, access as a trust signal,
//! decay, and pruning.
//!
//! * Decay: `confidence × 0.5^(days since last access / half-life)`; pinned memories and types
//!   without a half-life (decisions) never decay.
//! * Access: every 5 accesses since the last correction add 0.05 to the confidence (up to
//!   0.95); 10 accesses since the last correction clear `needs_review`. A correction is an
//!   update of the content or the confidence.
//! * Pruning: a memory not accessed for 3 half-lives is deprecated (soft-deleted); one
//!   deprecated for 30 days is deleted. Pinned and user-verified memories are never pruned.

use super::remember::{
    bounded, confidence, flag, half_life, one_of, relations, supersede, target_node, Secrets,
    MAX_CITATION, MAX_CONTENT, MEMORY_KEYS,
};
use super::{content_hash, default_half_life, row_by_id, MS_PER_DAY, SCOPES, SOURCES, TYPES};
use crate::cluster::route;
use crate::db::dialect::RowLock;
use crate::json_opts::Opts;
use crate::{Conn, Error, Result, Value};
use serde_json::json;

/// Accesses (since the last correction) per confidence step.
pub(crate) const ACCESSES_PER_STEP: i64 = 5;
/// The confidence one step adds, and the most access can raise it to.
pub(crate) const STEP: f64 = 0.05;
pub(crate) const ACCESS_CAP: f64 = 0.95;
/// Accesses (since the last correction) that clear `needs_review`.
pub(crate) const ACCESSES_TO_TRUST: i64 = 10;
/// Half-lives without access before a memory is deprecated.
pub(crate) const HALF_LIVES_TO_DEPRECATE: f64 = 3.0;
/// Days a deprecated memory is kept before it is deleted.
pub(crate) const GRACE_DAYS: f64 = 30.0;

/// `confidence` decayed to `now` (see the module's formula).
pub(crate) fn decayed(
    confidence: f64,
    half_life_days: Option<f64>,
    pinned: bool,
    last: i64,
    now: i64,
) -> f64 {
    match half_life_days {
        Some(h) if !pinned => {
            let days = (now - last).max(0) as f64 / MS_PER_DAY;
            confidence * 0.5f64.powf(days / h)
        }
        _ => confidence,
    }
}

/// `mem_memory_confidence(id [, now])` → the decayed confidence, or NULL for an unknown id.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn current_confidence(conn: &mut dyn Conn, id: &str, now: Option<i64>) -> Result<Option<f64>> {
    let now = conn.now_or(now)?;
    let columns = "confidence, decay_half_life_days, pinned, last_accessed_at";
    Ok(row_by_id(conn, id, columns, "")?.map(|mut f| {
        let c = f.value().as_f64().unwrap_or(0.0);
        let h = f.value().as_f64();
        let pinned = f.int() == Some(1);
        decayed(c, h, pinned, f.int().unwrap_or(now), now)
    }))
}

const UPDATE_OPTIONS: &[&str] = &["secrets", "now"];

/// The fields a patch may clear (`null`); the others' columns are `NOT NULL`.
const NULLABLE: &[&str] = &[
    "session_id",
    "commit_sha",
    "citation_text",
    "decay_half_life_days",
    "target_node_id",
];

/// `mem_memory_update(id, patch_json [, options])` → 1 when the memory was updated, 0 for an
/// unknown id. The patch sets the fields it names (`null` clears a nullable one); tags and
/// files are replaced, not merged. A new content is scanned for secrets (options.secrets as
/// for `mem_remember`) and must not be another memory's of the same resource and scope.
pub(crate) fn update(conn: &mut dyn Conn, id: &str, patch: &str, options: Option<&str>) -> Result<i64> {
    let p = Opts::parse("patch", Some(patch), MEMORY_KEYS)?;
    let o = Opts::parse("options", options, UPDATE_OPTIONS)?;
    let policy = Secrets::from_options(&o)?;
    let required = MEMORY_KEYS.iter().filter(|k| !NULLABLE.contains(k));
    if let Some(key) = required.into_iter().find(|k| p.is_null(k)) {
        return Err(Error::invalid(p.name(key), "cannot be null"));
    }
    let columns = "resource_id, scope, content, type, decay_half_life_days";
    let Some(mut f) = row_by_id(conn, id, columns, "")? else {
        return Ok(0);
    };
    let (resource, old_scope) = (f.text().unwrap_or_default(), f.text().unwrap_or_default());
    let old_content = f.text().unwrap_or_default();
    let (old_type, old_half_life) = (f.text().unwrap_or_default(), f.value().as_f64());
    let now = conn.now_or(o.opt_int("now")?)?;
    let mut sets: Vec<(&str, Value, &str)> = Vec::new();
    let mut set = |col: &'static str, v: Value, cast: &'static str| sets.push((col, v, cast));
    let content = match bounded(&p, "content", MAX_CONTENT)? {
        Some(c) => Some(policy.apply("patch.content", c)?.0),
        None => None,
    };
    let scope = one_of(&p, "scope", SCOPES)?;
    if content.is_some() || scope.is_some() {
        let text = content.clone().unwrap_or_else(|| old_content.clone());
        let scope = scope.clone().unwrap_or(old_scope);
        let clash = conn.query_value(
            "SELECT id FROM mem_memories WHERE resource_id = ?1 AND scope = ?2 \
             AND content_hash = ?3 AND id <> ?4",
            &[
                resource.as_str().into(),
                scope.as_str().into(),
                content_hash(Some(&text)).into(),
                id.into(),
            ],
        )?;
        if let Some(other) = clash.and_then(Value::into_string) {
            return Err(Error::invalid(
                "patch.content",
                format!("the same content is memory {other} (remember it again to reinforce it)"),
            ));
        }
    }
    let corrected = content.is_some() || p.has("confidence");
    if let Some(c) = content {
        set("content", c.into(), "");
    }
    if let Some(s) = scope {
        set("scope", s.into(), "");
    }
    let new_type = one_of(&p, "type", TYPES)?;
    if let Some(t) = &new_type {
        set("type", t.as_str().into(), "");
    }
    if let Some(s) = one_of(&p, "source", SOURCES)? {
        set("source", s.into(), "");
    }
    if let Some(c) = confidence(&p)? {
        set("confidence", Value::Real(c), "");
    }
    // Every text a patch writes is scanned as the content is (its redactions are not
    // reported: an update answers a count).
    let mut redacted = Vec::new();
    for key in ["tags", "related_files", "related_modules"] {
        if let Some(v) = policy.strings(&p, key, &mut redacted)? {
            set(key, v.into(), "@JSON");
        }
    }
    for key in ["needs_review", "user_verified", "pinned"] {
        if let Some(v) = flag(&p, key)? {
            set(key, Value::Int(v), "");
        }
    }
    for key in ["session_id", "commit_sha"] {
        if p.has(key) {
            set(key, policy.text(&p, key, &mut redacted)?.into(), "");
        }
    }
    if p.has("citation_text") {
        let c = match bounded(&p, "citation_text", MAX_CITATION)? {
            Some(c) => Some(policy.apply("patch.citation_text", c)?.0),
            None => None,
        };
        set("citation_text", c.into(), "");
    }
    // A new type brings its own half-life, unless the memory had one of its own (one that
    // is not its old type's default) or the patch names one.
    let half_life = match (half_life(&p)?, &new_type) {
        (Some(h), _) => Some(h),
        (None, Some(t)) if old_half_life == default_half_life(&old_type) => {
            Some(default_half_life(t))
        }
        (None, _) => None,
    };
    if let Some(h) = half_life {
        set(
            "decay_half_life_days",
            h.map(Value::Real).unwrap_or(Value::Null),
            "@DOUBLE",
        );
    }
    if p.has("target_node_id") {
        set(
            "target_node_id",
            target_node(conn, &p, &resource)?.into(),
            "",
        );
    }
    let mut supersedes = Vec::new();
    if let Some((rel, sup)) = relations(conn, &p, &resource, policy, &mut redacted)? {
        set("relations", rel.into(), "@JSON");
        supersedes = sup;
    }
    if corrected {
        set("accesses_since_correction", Value::Int(0), "");
    }
    set("updated_at", Value::Int(now), "");
    let mut params: Vec<Value> = vec![id.into()];
    let assignments: Vec<String> = sets
        .into_iter()
        .map(|(col, v, cast)| {
            params.push(v);
            let at = params.len();
            if cast.is_empty() {
                format!("{col} = ?{at}")
            } else {
                format!("{col} = CAST(?{at} AS {cast})")
            }
        })
        .collect();
    let home = route::and_home(conn, "resource_id", &mut params);
    let n = conn.execute(
        &format!(
            "UPDATE mem_memories SET {} WHERE id = ?1{home}",
            assignments.join(", ")
        ),
        &params,
    )?;
    supersede(conn, id, &supersedes, now)?;
    Ok(n as i64)
}

/// `mem_memory_deprecate(id [, now])` → 1 when the memory was current and is now deprecated
/// (kept, excluded from search and recall by default; pruned 30 days later), 0 otherwise.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn deprecate(conn: &mut dyn Conn, id: &str, now: Option<i64>) -> Result<i64> {
    let now = conn.now_or(now)?;
    let mut params = vec![id.into(), Value::Int(now)];
    let home = route::and_home(conn, "resource_id", &mut params);
    Ok(conn.execute(
        &format!(
            "UPDATE mem_memories SET deprecated = 1, deprecated_at = ?2, updated_at = ?2 \
             WHERE id = ?1 AND deprecated = 0{home}"
        ),
        &params,
    )? as i64)
}

/// `mem_memory_touch(id [, now])` → JSON `{accessCount, confidence, needsReview}` after
/// counting one access (the memory was injected into a prompt), or NULL for an unknown id.
/// The confidence step is rounded to a billionth, so that repeated steps land on the same
/// decimal on every backend.
pub(crate) fn touch(conn: &mut dyn Conn, id: &str, now: Option<i64>) -> Result<Option<String>> {
    let now = conn.now_or(now)?;
    let lock = conn.dialect().row_lock(RowLock::Update);
    let columns = "access_count, accesses_since_correction, confidence, needs_review";
    let Some(mut f) = row_by_id(conn, id, columns, lock)? else {
        return Ok(None);
    };
    let count = f.int().unwrap_or(0) + 1;
    let since = f.int().unwrap_or(0) + 1;
    let mut conf = f.value().as_f64().unwrap_or(0.0);
    let mut review = f.int() == Some(1);
    if since % ACCESSES_PER_STEP == 0 && conf < ACCESS_CAP {
        conf = (((conf + STEP) * 1e9).round() / 1e9).min(ACCESS_CAP);
    }
    if since >= ACCESSES_TO_TRUST {
        review = false;
    }
    let mut params = vec![
        id.into(),
        Value::Int(count),
        Value::Int(since),
        Value::Real(conf),
        Value::Int(i64::from(review)),
        Value::Int(now),
    ];
    let home = route::and_home(conn, "resource_id", &mut params);
    conn.execute(
        &format!(
            "UPDATE mem_memories SET access_count = ?2, accesses_since_correction = ?3, \
               confidence = ?4, needs_review = ?5, last_accessed_at = ?6, updated_at = ?6 \
             WHERE id = ?1{home}"
        ),
        &params,
    )?;
    Ok(Some(
        json!({"accessCount": count, "confidence": conf, "needsReview": review}).to_string(),
    ))
}

/// `mem_prune(resource_id [, now])` → JSON `{deprecated, deleted}`: memories of the resource
/// not accessed for 3 half-lives are deprecated, those deprecated more than 30 days ago are
/// deleted; never pinned or user-verified ones.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn prune(conn: &mut dyn Conn, resource: &str, now: Option<i64>) -> Result<String> {
    let now = conn.now_or(now)?;
    let deprecated = conn.execute(
        &format!(
            "UPDATE mem_memories SET deprecated = 1, deprecated_at = ?2, updated_at = ?2 \
             WHERE resource_id = ?1 AND deprecated = 0 AND pinned = 0 AND user_verified = 0 \
               AND decay_half_life_days IS NOT NULL \
               AND ?2 - last_accessed_at > decay_half_life_days * {}",
            HALF_LIVES_TO_DEPRECATE * MS_PER_DAY
        ),
        &[resource.into(), Value::Int(now)],
    )?;
    let deleted = conn.execute(
        "DELETE FROM mem_memories WHERE resource_id = ?1 AND deprecated = 1 AND pinned = 0 \
           AND user_verified = 0 AND deprecated_at IS NOT NULL AND ?2 - deprecated_at > ?3",
        &[
            resource.into(),
            Value::Int(now),
            Value::Int((GRACE_DAYS * MS_PER_DAY) as i64),
        ],
    )?;
    Ok(json!({"deprecated": deprecated, "deleted": deleted}).to_string())
}
