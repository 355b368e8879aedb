//! `mem_remember`: a memory written once per content, checked for secrets and for taint.
//!
//! The same content (see [`super::content_hash`]) in the same resource and scope is one
//! memory. The database enforces it — a unique index on the generated hash column — so
//! concurrent writers cannot create it twice: the insert does nothing on conflict and the
//! loser reinforces the winner's row instead. Nothing is silently dropped: the answer says
//! whether the call created the memory or reinforced one.

use super::secrets::{self, Finding};
use super::{content_hash, default_half_life, RELATIONS, SCOPES, SOURCES, TYPES};
use crate::args::check_one_of;
use crate::cluster::route;
use crate::db::dialect::RowLock;
use crate::db::row::Fields;
use crate::json_opts::Opts;
use crate::{ids, Conn, Error, Result, Value};
use serde_json::{json, Value as Json};

pub(crate) const MEMORY_KEYS: &[&str] = &[
    "type",
    "content",
    "confidence",
    "tags",
    "related_files",
    "related_modules",
    "scope",
    "source",
    "session_id",
    "commit_sha",
    "relations",
    "decay_half_life_days",
    "needs_review",
    "user_verified",
    "pinned",
    "citation_text",
    "target_node_id",
];

const OPTIONS: &[&str] = &["after_external_tool", "secrets", "now"];

/// Longest content, in characters.
pub(crate) const MAX_CONTENT: usize = 100_000;

/// Longest citation, in characters (an inline chip).
pub(crate) const MAX_CITATION: usize = 40;

/// What to do with a secret found in text to store.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Secrets {
    Refuse,
    Redact,
}

impl Secrets {
    pub(crate) fn from_options(o: &Opts) -> Result<Secrets> {
        match o.opt_str("secrets")?.as_deref() {
            None | Some("refuse") => Ok(Secrets::Refuse),
            Some("redact") => Ok(Secrets::Redact),
            Some(_) => Err(Error::invalid(
                o.name("secrets"),
                "must be \"refuse\" or \"redact\"",
            )),
        }
    }

    /// `text` as it may be stored, and the kinds of secret redacted from it.
    pub(crate) fn apply(self, arg: &str, text: String) -> Result<(String, Vec<&'static str>)> {
        let found: Vec<Finding> = secrets::scan(&text);
        let Some(first) = found.first() else {
            return Ok((text, Vec::new()));
        };
        match self {
            Secrets::Refuse => Err(Error::invalid(
                arg,
                format!(
                    "contains a secret ({}) at character {}; refused (options.secrets = \"redact\" \
                     stores it redacted)",
                    first.kind,
                    secrets::char_offset(&text, first.start)
                ),
            )),
            Secrets::Redact => Ok((
                secrets::redact(&text, &found),
                found.iter().map(|f| f.kind).collect(),
            )),
        }
    }

    /// The text field `key` of `o` as it may be stored ([`Secrets::apply`]); the kinds
    /// redacted from it are added to `redacted`.
    pub(crate) fn text(
        self,
        o: &Opts,
        key: &str,
        redacted: &mut Vec<&'static str>,
    ) -> Result<Option<String>> {
        let Some(v) = o.opt_str(key)? else {
            return Ok(None);
        };
        let (v, kinds) = self.apply(&o.name(key), v)?;
        redacted.extend(kinds);
        Ok(Some(v))
    }

    /// The array of strings `key` of `o` as the stored JSON text, each string as it may be
    /// stored ([`Secrets::apply`], naming the element: `memory.tags[2]`).
    pub(crate) fn strings(
        self,
        o: &Opts,
        key: &str,
        redacted: &mut Vec<&'static str>,
    ) -> Result<Option<String>> {
        let Some(list) = o.opt_strings(key)? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(list.len());
        for (i, s) in list.into_iter().enumerate() {
            let (s, kinds) = self.apply(&format!("{}[{i}]", o.name(key)), s)?;
            redacted.extend(kinds);
            out.push(s);
        }
        Ok(Some(Json::from(out).to_string()))
    }
}

/// A text field of at most `max` characters (at least one).
pub(crate) fn bounded(o: &Opts, key: &str, max: usize) -> Result<Option<String>> {
    let Some(v) = o.opt_str(key)? else {
        return Ok(None);
    };
    let n = v.chars().count();
    if n == 0 || n > max {
        return Err(Error::invalid(
            o.name(key),
            format!("must be 1 to {max} characters"),
        ));
    }
    Ok(Some(v))
}

/// A confidence in 0–1.
pub(crate) fn confidence(o: &Opts) -> Result<Option<f64>> {
    let Some(c) = o.opt_f64("confidence")? else {
        return Ok(None);
    };
    if !(0.0..=1.0).contains(&c) {
        return Err(Error::invalid(
            o.name("confidence"),
            "must be between 0 and 1",
        ));
    }
    Ok(Some(c))
}

/// One of `allowed`.
pub(crate) fn one_of(o: &Opts, key: &str, allowed: &[&str]) -> Result<Option<String>> {
    let v = o.opt_str(key)?;
    if let Some(v) = &v {
        check_one_of(&o.name(key), v, allowed)?;
    }
    Ok(v)
}

/// A flag as 0 or 1.
pub(crate) fn flag(o: &Opts, key: &str) -> Result<Option<i64>> {
    Ok(o.opt_bool(key)?.map(i64::from))
}

/// A half-life: a number of days above 0, or `null` for "never decays". `None` when absent.
pub(crate) fn half_life(o: &Opts) -> Result<Option<Option<f64>>> {
    if !o.has("decay_half_life_days") {
        return Ok(None);
    }
    match o.opt_f64("decay_half_life_days")? {
        None => Ok(Some(None)),
        Some(d) if d.is_finite() && d > 0.0 => Ok(Some(Some(d))),
        Some(_) => Err(Error::invalid(
            o.name("decay_half_life_days"),
            "must be a number of days above 0, or null (never decays)",
        )),
    }
}

/// A memory a call's relations supersede, with the relation's place in the call (for errors).
pub(crate) struct Superseded {
    pub arg: String,
    pub id: String,
}

/// The relations, checked (types known, targets memories of `resource`, file paths scanned
/// for secrets by `policy`), as stored JSON, and the memories they supersede.
pub(crate) fn relations(
    conn: &mut dyn Conn,
    o: &Opts,
    resource: &str,
    policy: Secrets,
    redacted: &mut Vec<&'static str>,
) -> Result<Option<(String, Vec<Superseded>)>> {
    let Some(list) = o.opt_array("relations")? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    let mut supersedes = Vec::new();
    for (i, r) in list.iter().enumerate() {
        let arg = format!("{}[{i}]", o.name("relations"));
        let Json::Object(m) = r else {
            return Err(Error::invalid(arg, "must be a JSON object"));
        };
        let text = |k: &str| -> Result<Option<String>> {
            match m.get(k) {
                None | Some(Json::Null) => Ok(None),
                Some(Json::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(Error::invalid(format!("{arg}.{k}"), "must be a string")),
            }
        };
        if let Some(k) = m.keys().find(|k| {
            ![
                "relation_type",
                "target_memory_id",
                "target_file_path",
                "confidence",
                "auto_extracted",
            ]
            .contains(&k.as_str())
        }) {
            return Err(Error::invalid(
                arg,
                format!("unknown key {}", crate::error::echo(k)),
            ));
        }
        let ty = text("relation_type")?
            .ok_or_else(|| Error::invalid(format!("{arg}.relation_type"), "is required"))?;
        check_one_of(&format!("{arg}.relation_type"), &ty, RELATIONS)?;
        let target = text("target_memory_id")?;
        let file = match text("target_file_path")? {
            Some(f) => {
                let (f, kinds) = policy.apply(&format!("{arg}.target_file_path"), f)?;
                redacted.extend(kinds);
                Some(f)
            }
            None => None,
        };
        if target.is_none() && file.is_none() {
            return Err(Error::invalid(
                arg,
                "needs target_memory_id or target_file_path",
            ));
        }
        if let Some(t) = &target {
            let found = conn.query_value(
                "SELECT 1 FROM mem_memories WHERE id = ?1 AND resource_id = ?2",
                &[t.as_str().into(), resource.into()],
            )?;
            if found.is_none() {
                return Err(Error::invalid(
                    format!("{arg}.target_memory_id"),
                    format!("no memory {} in this resource", crate::error::echo(t)),
                ));
            }
            if ty == "supersedes" {
                supersedes.push(Superseded {
                    arg: format!("{arg}.target_memory_id"),
                    id: t.clone(),
                });
            }
        }
        let conf = match m.get("confidence") {
            None | Some(Json::Null) => 1.0,
            Some(v) => v
                .as_f64()
                .filter(|c| (0.0..=1.0).contains(c))
                .ok_or_else(|| {
                    Error::invalid(format!("{arg}.confidence"), "must be between 0 and 1")
                })?,
        };
        let auto = match m.get("auto_extracted") {
            None | Some(Json::Null) => false,
            Some(Json::Bool(b)) => *b,
            Some(_) => {
                return Err(Error::invalid(
                    format!("{arg}.auto_extracted"),
                    "must be true or false",
                ))
            }
        };
        out.push(json!({
            "relation_type": ty,
            "target_memory_id": target,
            "target_file_path": file,
            "confidence": conf,
            "auto_extracted": auto,
        }));
    }
    Ok(Some((Json::from(out).to_string(), supersedes)))
}

/// A graph node of `resource`, when given.
pub(crate) fn target_node(conn: &mut dyn Conn, o: &Opts, resource: &str) -> Result<Option<String>> {
    let Some(id) = o.opt_str("target_node_id")? else {
        return Ok(None);
    };
    let found = conn.query_value(
        "SELECT 1 FROM mem_graph_nodes WHERE id = ?1 AND resource_id = ?2",
        &[id.as_str().into(), resource.into()],
    )?;
    if found.is_none() {
        return Err(Error::invalid(
            o.name("target_node_id"),
            format!("no graph node {} in this resource", crate::error::echo(&id)),
        ));
    }
    Ok(Some(id))
}

/// Marks `targets` as superseded by `by` (kept, excluded from recall by default). A memory
/// cannot supersede itself, nor one that already supersedes it, directly or through others:
/// the cycle would hide every memory on it.
pub(crate) fn supersede(
    conn: &mut dyn Conn,
    by: &str,
    targets: &[Superseded],
    now: i64,
) -> Result<()> {
    for t in targets {
        if t.id == by {
            return Err(Error::invalid(
                &t.arg,
                format!(
                    "is this memory itself ({}): a memory cannot supersede itself",
                    crate::error::echo(by)
                ),
            ));
        }
        let chain = superseded_chain(conn, by)?;
        if let Some(at) = chain.iter().position(|c| *c == t.id) {
            let mut path = vec![by.to_string()];
            path.extend(chain[..=at].iter().cloned());
            return Err(Error::invalid(
                &t.arg,
                format!(
                    "already supersedes this memory ({}): superseding it would close a cycle",
                    crate::error::echo_list(&path, " → ")
                ),
            ));
        }
        let mut params = vec![t.id.as_str().into(), by.into(), Value::Int(now)];
        let home = route::and_home(conn, "resource_id", &mut params);
        conn.execute(
            &format!(
                "UPDATE mem_memories SET superseded_by = ?2, updated_at = ?3 WHERE id = ?1{home}"
            ),
            &params,
        )?;
    }
    Ok(())
}

/// The memories that supersede `id`, nearest first: its `superseded_by`, then that one's, …
/// (stopping at a memory seen before, should stored rows already hold a cycle).
fn superseded_chain(conn: &mut dyn Conn, id: &str) -> Result<Vec<String>> {
    let mut chain: Vec<String> = Vec::new();
    let mut at = id.to_string();
    loop {
        let mut params = vec![at.as_str().into()];
        let home = route::and_home(conn, "resource_id", &mut params);
        let next = conn
            .query_value(
                &format!("SELECT superseded_by FROM mem_memories WHERE id = ?1{home}"),
                &params,
            )?
            .and_then(Value::into_string);
        match next {
            Some(n) if n != id && !chain.contains(&n) => {
                chain.push(n.clone());
                at = n;
            }
            _ => return Ok(chain),
        }
    }
}

/// The union of two JSON string arrays, first-seen order.
fn union(a: &str, b: &str) -> String {
    let mut out: Vec<String> = serde_json::from_str(a).unwrap_or_default();
    for s in serde_json::from_str::<Vec<String>>(b).unwrap_or_default() {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    Json::from(out).to_string()
}

/// What a new memory brings to one that has its content.
struct Reinforcement<'a> {
    confidence: f64,
    needs_review: i64,
    tags: &'a str,
    related_files: &'a str,
    related_modules: &'a str,
}

/// Reinforces the memory of `resource` and `scope` with content hash `hash`: its confidence
/// rises to the new one's if higher, its tags and files gain the new ones, it counts as
/// accessed now and is no longer deprecated. `None` when there is no such memory.
fn reinforce(
    conn: &mut dyn Conn,
    key: [&str; 3],
    r: &Reinforcement,
    now: i64,
) -> Result<Option<String>> {
    let lock = conn.dialect().row_lock(RowLock::Update);
    let row = conn
        .query(
            &format!(
                "SELECT id, confidence, needs_review, CAST(tags AS TEXT), \
                 CAST(related_files AS TEXT), CAST(related_modules AS TEXT) FROM mem_memories \
                 WHERE resource_id = ?1 AND scope = ?2 AND content_hash = ?3{lock}"
            ),
            &[key[0].into(), key[1].into(), key[2].into()],
        )?
        .into_iter()
        .next();
    let Some(row) = row else { return Ok(None) };
    let mut f = Fields::new(row);
    let id = f.text().unwrap_or_default();
    let confidence = f.value().as_f64().unwrap_or(0.0).max(r.confidence);
    let needs_review = f.int().unwrap_or(0).max(r.needs_review);
    let (tags, files, modules) = (
        f.text().unwrap_or_default(),
        f.text().unwrap_or_default(),
        f.text().unwrap_or_default(),
    );
    conn.execute(
        "UPDATE mem_memories SET confidence = ?2, needs_review = ?3, tags = CAST(?4 AS @JSON), \
           related_files = CAST(?5 AS @JSON), related_modules = CAST(?6 AS @JSON), \
           deprecated = 0, deprecated_at = NULL, last_accessed_at = ?7, updated_at = ?7 \
         WHERE id = ?1 AND resource_id = ?8",
        &[
            id.as_str().into(),
            Value::Real(confidence),
            Value::Int(needs_review),
            union(&tags, r.tags).into(),
            union(&files, r.related_files).into(),
            union(&modules, r.related_modules).into(),
            Value::Int(now),
            key[0].into(),
        ],
    )?;
    Ok(Some(id))
}

/// `mem_remember(resource_id, memory_json [, options])` → JSON `{id, created, superseded,
/// superseded_by, redacted}` (`superseded_by`: the memory that replaced this one, when the
/// content was remembered again after it was superseded). `memory_json` holds the memory's fields (`type` and `content` required).
/// Options: `after_external_tool` (the trust gate: needs review, confidence × 0.7),
/// `secrets` (`refuse`, the default, or `redact`), `now`.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn remember(
    conn: &mut dyn Conn,
    resource: &str,
    memory: &str,
    options: Option<&str>,
) -> Result<String> {
    let m = Opts::parse("memory", Some(memory), MEMORY_KEYS)?;
    let o = Opts::parse("options", options, OPTIONS)?;
    let policy = Secrets::from_options(&o)?;
    let ty =
        one_of(&m, "type", TYPES)?.ok_or_else(|| Error::invalid("memory.type", "is required"))?;
    let content = bounded(&m, "content", MAX_CONTENT)?
        .ok_or_else(|| Error::invalid("memory.content", "is required"))?;
    let (content, mut redacted) = policy.apply("memory.content", content)?;
    let citation = match bounded(&m, "citation_text", MAX_CITATION)? {
        Some(c) => {
            let (c, more) = policy.apply("memory.citation_text", c)?;
            redacted.extend(more);
            Some(c)
        }
        None => None,
    };
    let session = policy.text(&m, "session_id", &mut redacted)?;
    let commit = policy.text(&m, "commit_sha", &mut redacted)?;
    let tainted = o.opt_bool("after_external_tool")?.unwrap_or(false);
    let mut confidence = confidence(&m)?.unwrap_or(0.8);
    let mut needs_review = flag(&m, "needs_review")?.unwrap_or(0);
    if tainted {
        confidence *= 0.7;
        needs_review = 1;
    }
    let scope = one_of(&m, "scope", SCOPES)?.unwrap_or_else(|| "global".into());
    let source = one_of(&m, "source", SOURCES)?.unwrap_or_else(|| "agent_explicit".into());
    let mut list = |key| -> Result<String> {
        Ok(policy
            .strings(&m, key, &mut redacted)?
            .unwrap_or_else(|| "[]".into()))
    };
    let (tags, files, modules) = (
        list("tags")?,
        list("related_files")?,
        list("related_modules")?,
    );
    let (relations, supersedes) = relations(conn, &m, resource, policy, &mut redacted)?
        .unwrap_or_else(|| ("[]".into(), Vec::new()));
    let half_life = half_life(&m)?.unwrap_or_else(|| default_half_life(&ty));
    let node = target_node(conn, &m, resource)?;
    let now = conn.now_or(o.opt_int("now")?)?;
    let hash = content_hash(Some(&content)).unwrap_or_default();
    let r = Reinforcement {
        confidence,
        needs_review,
        tags: &tags,
        related_files: &files,
        related_modules: &modules,
    };
    let key = [resource, scope.as_str(), hash.as_str()];
    let (id, created) = match reinforce(conn, key, &r, now)? {
        Some(id) => (id, false),
        None => {
            let id = ids::new_id();
            let inserted = conn.query(
                "INSERT INTO mem_memories (id, resource_id, type, content, confidence, tags, \
                   related_files, related_modules, scope, source, session_id, commit_sha, \
                   relations, decay_half_life_days, needs_review, user_verified, pinned, \
                   citation_text, target_node_id, created_at, updated_at, last_accessed_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, CAST(?6 AS @JSON), CAST(?7 AS @JSON), \
                   CAST(?8 AS @JSON), ?9, ?10, ?11, ?12, CAST(?13 AS @JSON), \
                   CAST(?14 AS @DOUBLE), ?15, ?16, ?17, ?18, ?19, ?20, ?20, ?20) \
                 ON CONFLICT (resource_id, scope, content_hash) DO NOTHING RETURNING id",
                &[
                    id.as_str().into(),
                    resource.into(),
                    ty.as_str().into(),
                    content.as_str().into(),
                    Value::Real(confidence),
                    tags.as_str().into(),
                    files.as_str().into(),
                    modules.as_str().into(),
                    scope.as_str().into(),
                    source.into(),
                    session.clone().into(),
                    commit.clone().into(),
                    relations.into(),
                    half_life.map(Value::Real).unwrap_or(Value::Null),
                    Value::Int(needs_review),
                    Value::Int(flag(&m, "user_verified")?.unwrap_or(0)),
                    Value::Int(flag(&m, "pinned")?.unwrap_or(0)),
                    citation.into(),
                    node.into(),
                    Value::Int(now),
                ],
            )?;
            if inserted.is_empty() {
                // Another writer created it between the lookup and the insert.
                let id = reinforce(conn, key, &r, now)?
                    .ok_or_else(|| Error::internal("mem_remember: the memory vanished"))?;
                (id, false)
            } else {
                (id, true)
            }
        }
    };
    supersede(conn, &id, &supersedes, now)?;
    redacted.dedup();
    // Content remembered again may belong to a memory a later one replaced: the answer says
    // so, since that memory stays out of recall.
    let superseded_by = conn
        .query_value(
            "SELECT superseded_by FROM mem_memories WHERE id = ?1 AND resource_id = ?2",
            &[id.as_str().into(), key[0].into()],
        )?
        .and_then(Value::into_string);
    Ok(json!({
        "id": id,
        "created": created,
        "superseded": supersedes.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        "superseded_by": superseded_by,
        "redacted": redacted,
    })
    .to_string())
}
