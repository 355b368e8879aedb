//! The observational-memory record: one active generation per lookup key.

use super::config::{self, Config};
use crate::cluster::route;
use crate::db::row::Fields;
use crate::json_opts::Opts;
use crate::{threads, Conn, Error, Result, Row, Value};
use serde::{Deserialize, Serialize};

/// `thread:<id>` or `resource:<id>`, checked against the threads table.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Key {
    pub text: String,
    pub scope: Scope,
    pub thread_id: Option<String>,
    pub resource_id: String,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scope {
    Thread,
    Resource,
}

impl Scope {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Scope::Thread => "thread",
            Scope::Resource => "resource",
        }
    }
}

impl Key {
    /// Parses and checks a lookup key: its thread (or a thread of its resource) must exist.
    pub(crate) fn parse(conn: &mut dyn Conn, text: &str) -> Result<Key> {
        if let Some(t) = text.strip_prefix("thread:") {
            let resource_id = threads::resource_of(conn, t)?;
            return Ok(Key {
                text: text.into(),
                scope: Scope::Thread,
                thread_id: Some(t.into()),
                resource_id,
            });
        }
        if let Some(r) = text.strip_prefix("resource:") {
            if r.is_empty() {
                return Err(Error::invalid(
                    "lookup_key",
                    "resource id must not be empty",
                ));
            }
            return Ok(Key {
                text: text.into(),
                scope: Scope::Resource,
                thread_id: None,
                resource_id: r.into(),
            });
        }
        Err(Error::invalid(
            "lookup_key",
            "must be \"thread:<thread id>\" or \"resource:<resource id>\"",
        ))
    }

    /// The key a thread's memory lives under, for `scope` "thread" (default) or "resource".
    pub(crate) fn for_thread(conn: &mut dyn Conn, thread_id: &str, scope: Option<&str>) -> Result<Key> {
        let resource_id = threads::resource_of(conn, thread_id)?;
        match scope.unwrap_or("thread") {
            "thread" => Ok(Key {
                text: format!("thread:{thread_id}"),
                scope: Scope::Thread,
                thread_id: Some(thread_id.into()),
                resource_id,
            }),
            "resource" => Ok(Key {
                text: format!("resource:{resource_id}"),
                scope: Scope::Resource,
                thread_id: None,
                resource_id,
            }),
            _ => Err(Error::invalid(
                "options.scope",
                "must be \"thread\" or \"resource\"",
            )),
        }
    }
}

/// A buffered observation chunk (seed: bufferedObservationChunks), oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Chunk {
    pub content: String,
    pub current_task: Option<String>,
    pub suggested_response: Option<String>,
    pub thread_id: String,
    pub message_ids: Vec<String>,
    pub message_tokens: i64,
    pub created_at: i64,
}

/// The active record of a key, as stored.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Record {
    pub seq: i64,
    pub id: String,
    pub generation: i64,
    pub origin_type: String,
    pub active_observations: String,
    pub observation_tokens: i64,
    pub chunks: Vec<Chunk>,
    pub last_observed_at: Option<i64>,
    pub observed_ids: Vec<String>,
    pub total_tokens_observed: i64,
    pub last_buffered_at_tokens: i64,
    pub is_observing: bool,
    pub is_reflecting: bool,
    pub is_buffering_observation: bool,
    pub is_buffering_reflection: bool,
    pub config_json: String,
    pub lock_owner_id: Option<String>,
    pub lock_operation_id: Option<String>,
    pub lock_expires_at: Option<i64>,
    pub last_reflection_at: Option<i64>,
    /// A reflection made in the background, waiting for the threshold (`om_buffer_reflection`).
    pub buffered_reflection: Option<String>,
    /// The observations that reflection condensed: lines added since are kept beside it
    /// when it is activated.
    pub buffered_reflection_base: Option<String>,
}

/// The record's columns; `{obs}` is the observations text and `{buffered}` the buffered
/// reflection with its base, or `''` when the caller needs only the bookkeeping (the texts can
/// be hundreds of kilobytes).
const COLUMNS: &str = "seq, id, generation, origin_type, {obs}, observation_tokens, \
    CAST(buffered_chunks AS TEXT), last_observed_at, CAST(observed_message_ids AS TEXT), total_tokens_observed, \
    last_buffered_at_tokens, is_observing, is_reflecting, is_buffering_observation, is_buffering_reflection, \
    CAST(config AS TEXT), lock_owner_id, lock_operation_id, lock_expires_at, last_reflection_at, \
    {buffered}";

fn from_row(row: Row) -> Result<Record> {
    let mut f = Fields::new(row);
    let mut next = || f.value();
    let json_err =
        |e: serde_json::Error| Error::internal(format!("mem_om_records holds malformed JSON: {e}"));
    Ok(Record {
        seq: next().as_i64().unwrap_or(0),
        id: next().into_string().unwrap_or_default(),
        generation: next().as_i64().unwrap_or(0),
        origin_type: next().into_string().unwrap_or_default(),
        active_observations: next().into_string().unwrap_or_default(),
        observation_tokens: next().as_i64().unwrap_or(0),
        chunks: serde_json::from_str(&next().into_string().unwrap_or_else(|| "[]".into()))
            .map_err(json_err)?,
        last_observed_at: next().as_i64(),
        observed_ids: serde_json::from_str(&next().into_string().unwrap_or_else(|| "[]".into()))
            .map_err(json_err)?,
        total_tokens_observed: next().as_i64().unwrap_or(0),
        last_buffered_at_tokens: next().as_i64().unwrap_or(0),
        is_observing: next().as_i64().unwrap_or(0) != 0,
        is_reflecting: next().as_i64().unwrap_or(0) != 0,
        is_buffering_observation: next().as_i64().unwrap_or(0) != 0,
        is_buffering_reflection: next().as_i64().unwrap_or(0) != 0,
        config_json: next().into_string().unwrap_or_else(|| "{}".into()),
        lock_owner_id: next().into_string(),
        lock_operation_id: next().into_string(),
        lock_expires_at: next().as_i64(),
        last_reflection_at: next().as_i64(),
        buffered_reflection: next().into_string(),
        buffered_reflection_base: next().into_string(),
    })
}

impl Record {
    /// The record's thresholds: defaults overridden by its stored config.
    pub(crate) fn config(&self) -> Result<Config> {
        let o = Opts::parse("config", Some(&self.config_json), config::KEYS)?;
        Config::default().with_overrides(&o)
    }

    /// Whether `owner`/`op` hold a live lease at `now`.
    pub(crate) fn leased_by(&self, owner: &str, op: &str, now: i64) -> bool {
        self.lock_owner_id.as_deref() == Some(owner)
            && self.lock_operation_id.as_deref() == Some(op)
            && self.lock_expires_at.is_some_and(|t| t > now)
    }
}

/// What a prompt builder starts from: the record's key, its options (keys `allowed`) and the
/// record, if there is one yet.
pub(crate) fn prompt_input(
    conn: &mut dyn Conn,
    key: &str,
    options: Option<&str>,
    allowed: &[&str],
) -> Result<(Key, Opts, Option<Record>)> {
    let key = Key::parse(conn, key)?;
    let o = Opts::parse("options", options, allowed)?;
    let rec = load(conn, &key)?;
    Ok((key, o, rec))
}

/// The active record of a key, if any.
pub(crate) fn load(conn: &mut dyn Conn, key: &Key) -> Result<Option<Record>> {
    load_columns(
        conn,
        key,
        "active_observations",
        "buffered_reflection, buffered_reflection_base",
    )
}

/// The active record without its texts (the observations are empty; a buffered reflection
/// shows as an empty text, its base as NULL).
pub(crate) fn load_bookkeeping(conn: &mut dyn Conn, key: &Key) -> Result<Option<Record>> {
    load_columns(
        conn,
        key,
        "''",
        "CASE WHEN buffered_reflection IS NULL THEN NULL ELSE '' END, CAST(NULL AS TEXT)",
    )
}

fn load_columns(
    conn: &mut dyn Conn,
    key: &Key,
    obs: &str,
    buffered: &str,
) -> Result<Option<Record>> {
    let columns = COLUMNS
        .replace("{obs}", obs)
        .replace("{buffered}", buffered);
    let rows = route::query(
        conn,
        &format!("SELECT {columns} FROM mem_om_records WHERE lookup_key = ?1 AND is_active = 1{{home}}"),
        &[key.text.as_str().into()],
    )?;
    rows.into_iter().next().map(from_row).transpose()
}

/// The active record of a key, created (generation 0, origin initialization) if missing.
pub(crate) fn load_or_create(conn: &mut dyn Conn, key: &Key, now: i64) -> Result<Record> {
    if let Some(r) = load(conn, key)? {
        return Ok(r);
    }
    route::execute(
        conn,
        "INSERT INTO mem_om_records (id, lookup_key, scope, thread_id, resource_id, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) \
         ON CONFLICT (lookup_key{home_column}) WHERE is_active = 1 DO NOTHING",
        &[
            crate::ids::new_id().into(),
            key.text.as_str().into(),
            key.scope.as_str().into(),
            key.thread_id.clone().into(),
            key.resource_id.as_str().into(),
            Value::Int(now),
        ],
    )?;
    load(conn, key)?
        .ok_or_else(|| Error::internal("observational-memory record vanished after insert"))
}

/// Writes the record's memory fields back, only while `owner`/`op` hold the lease at `now`
/// (one compare-and-set statement). Returns false, writing nothing, when the lease was lost.
pub(crate) fn store_guarded(
    conn: &mut dyn Conn,
    r: &Record,
    owner: &str,
    op: &str,
    now: i64,
) -> Result<bool> {
    let chunks = serde_json::to_string(&r.chunks).map_err(|e| Error::internal(e.to_string()))?;
    let observed =
        serde_json::to_string(&r.observed_ids).map_err(|e| Error::internal(e.to_string()))?;
    let n = route::execute(
        conn,
        "UPDATE mem_om_records SET origin_type = ?2, active_observations = ?3, observation_tokens = ?4, \
           buffered_chunks = CAST(?5 AS @JSON), last_observed_at = CAST(?6 AS BIGINT), \
           observed_message_ids = CAST(?7 AS @JSON), total_tokens_observed = ?8, last_buffered_at_tokens = ?9, \
           is_observing = 0, is_buffering_observation = 0, last_buffered_at_time = CAST(?10 AS BIGINT), \
           updated_at = ?11 \
         WHERE seq = ?1 AND is_active = 1 AND lock_owner_id = ?12 AND lock_operation_id = ?13 \
           AND lock_expires_at > ?11{home}",
        &[
            Value::Int(r.seq),
            r.origin_type.as_str().into(),
            r.active_observations.as_str().into(),
            Value::Int(r.observation_tokens),
            chunks.into(),
            r.last_observed_at.into(),
            observed.into(),
            Value::Int(r.total_tokens_observed),
            Value::Int(r.last_buffered_at_tokens),
            r.chunks.last().map(|c| c.created_at).into(),
            Value::Int(now),
            owner.into(),
            op.into(),
        ],
    )?;
    Ok(n == 1)
}
