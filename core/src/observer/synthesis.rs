//! The one LLM call a session may make: the database writes the prompt, the client sends it,
//! and `mem_synthesis_answer` reads the answer back — strictly, as observational memory reads
//! its observer's.
//!
//! A session asks for it in two cases, as the design does: a successful session that
//! promoted a co-access signal (turn the raw pair into a sentence worth reading), or a module
//! whose count of finished sessions just reached 5, 10, 20, 50 or 100 (threshold synthesis:
//! what do that many sessions on it say). Never more than once per session.

use super::signals::Candidate;
use crate::cluster::route;
use crate::json_opts::Opts;
use crate::memories::filter::Filter;
use crate::memories::remember;
use crate::vectors::math::Metric;
use crate::vectors::search::{nearest, Owners};
use crate::vectors::{self, store};
use crate::tokens::{self, Encoding};
use crate::{json_input, Conn, Error, Result, Value};
use serde_json::{json, Value as Json};

/// Session counts at which a module's history is synthesised.
pub(crate) const THRESHOLDS: &[i64] = &[5, 10, 20, 50, 100];

/// Memories one answer may hold.
pub(crate) const MAX_MEMORIES: usize = 5;

/// The types an answer may propose.
pub(crate) const TYPES: &[&str] =
    &["prefetch_pattern", "causal_dependency", "gotcha", "error_pattern", "module_insight"];

/// Longest content of a synthesised memory, in characters.
const MAX_CONTENT: usize = 2000;

/// A module: the folder a file is in (`src/auth` for `src/auth/token.ts`, `.` at the root).
pub(crate) fn module_of(path: &str) -> &str {
    path.rsplit_once('/').map_or(".", |(dir, _)| if dir.is_empty() { "/" } else { dir })
}

/// The prompt this session's end asks for, if any: `{reason, module, prompt, tokens}`.
pub(crate) fn request(
    conn: &mut dyn Conn,
    session_id: &str,
    resource: &str,
    outcome: &str,
    promoted: &[Candidate],
) -> Result<Option<Json>> {
    let module = threshold_module(conn, session_id, resource)?;
    let co_access: Vec<&Candidate> = promoted.iter().filter(|c| c.class.name == "co_access").collect();
    let (reason, module, sessions) = match module {
        Some((m, n)) => ("threshold", m, n),
        None if outcome == "success" && !co_access.is_empty() => {
            let m = module_of(&co_access[0].files[0]).to_owned();
            let n = module_sessions(conn, resource, session_id, &m)?;
            ("co_access", m, n)
        }
        None => return Ok(None),
    };
    let prompt = prompt(conn, resource, &module, sessions)?;
    let tokens = tokens::count(&prompt, Encoding::O200kBase);
    Ok(Some(json!({"reason": reason, "module": module, "sessions": sessions, "prompt": prompt, "tokens": tokens})))
}

/// The module of this session whose count of finished sessions (this one included) is a
/// threshold, if any (the most visited first).
fn threshold_module(conn: &mut dyn Conn, session_id: &str, resource: &str) -> Result<Option<(String, i64)>> {
    let paths: Vec<String> = route::query(
        conn,
        "SELECT path FROM mem_observer_files WHERE session_id = ?1{home} ORDER BY path",
        &[session_id.into()],
    )?
        .into_iter()
        .filter_map(|r| r[0].as_str().map(str::to_owned))
        .collect();
    let mut modules: Vec<String> = paths.iter().map(|p| module_of(p).to_owned()).collect();
    modules.dedup();
    let mut best: Option<(String, i64)> = None;
    for m in modules {
        let n = module_sessions(conn, resource, session_id, &m)?;
        if THRESHOLDS.contains(&n) && best.as_ref().is_none_or(|(_, b)| n > *b) {
            best = Some((m, n));
        }
    }
    Ok(best)
}

/// LIKE pattern of the files directly in module `m`, with `\` escaping.
fn files_in(m: &str) -> String {
    let esc: String = m
        .chars()
        .flat_map(|c| match c {
            '%' | '_' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    if m == "." { "%".into() } else { format!("{esc}/%") }
}

/// Finished sessions of the resource, and the one finishing, that touched a file of module
/// `m`.
fn module_sessions(conn: &mut dyn Conn, resource: &str, session_id: &str, m: &str) -> Result<i64> {
    Ok(conn
        .query_value(
            "SELECT count(DISTINCT f.session_id) FROM mem_observer_files f \
             WHERE f.resource_id = ?1 AND f.path LIKE ?2 ESCAPE '\\' \
               AND f.path NOT LIKE ?3 ESCAPE '\\' AND (f.session_id = ?4 OR EXISTS (SELECT 1 \
                 FROM mem_observer_sessions s WHERE s.id = f.session_id AND s.resource_id = ?1 \
                   AND s.status = 'finalized'))",
            &[
                resource.into(),
                files_in(m).into(),
                format!("{}%/%", files_in(m).trim_end_matches('%')).into(),
                session_id.into(),
            ],
        )?
        .and_then(|v| v.as_i64())
        .unwrap_or(0))
}

/// The seed's threshold-synthesis prompt, filled from the module's history.
fn prompt(conn: &mut dyn Conn, resource: &str, module: &str, sessions: i64) -> Result<String> {
    let like = files_in(module);
    let deeper = format!("{}%/%", like.trim_end_matches('%'));
    let params = |extra: &[Value]| -> Vec<Value> {
        let mut v = vec![resource.into(), like.as_str().into(), deeper.as_str().into()];
        v.extend_from_slice(extra);
        v
    };
    let files = conn.query(
        "SELECT path, count(DISTINCT session_id) FROM mem_observer_files WHERE resource_id = ?1 \
           AND path LIKE ?2 ESCAPE '\\' AND path NOT LIKE ?3 ESCAPE '\\' \
         GROUP BY path ORDER BY 2 DESC, 1 LIMIT 10",
        &params(&[]),
    )?;
    let pairs = conn.query(
        "SELECT file_a, file_b, count(DISTINCT session_id) FROM mem_observer_pairs \
         WHERE resource_id = ?1 AND ((file_a LIKE ?2 ESCAPE '\\' AND file_a NOT LIKE ?3 ESCAPE '\\') \
           OR (file_b LIKE ?2 ESCAPE '\\' AND file_b NOT LIKE ?3 ESCAPE '\\')) \
         GROUP BY file_a, file_b HAVING count(DISTINCT session_id) >= 2 ORDER BY 3 DESC, 1, 2 LIMIT 10",
        &params(&[]),
    )?;
    let errors = conn.query(
        "SELECT fingerprint, count(DISTINCT session_id), \
           count(DISTINCT CASE WHEN resolved_step IS NOT NULL THEN session_id END) \
         FROM mem_observer_errors WHERE resource_id = ?1 AND session_id IN (SELECT session_id \
           FROM mem_observer_files WHERE resource_id = ?1 AND path LIKE ?2 ESCAPE '\\' \
           AND path NOT LIKE ?3 ESCAPE '\\') \
         GROUP BY fingerprint ORDER BY 2 DESC, 1 LIMIT 10",
        &params(&[]),
    )?;
    let list = |rows: &[Vec<Value>], f: &dyn Fn(&Vec<Value>) -> String| -> String {
        if rows.is_empty() {
            "- (none)".into()
        } else {
            rows.iter().map(f).collect::<Vec<_>>().join("\n")
        }
    };
    let s = |v: &Value| v.as_str().unwrap_or("").to_owned();
    let n = |v: &Value| v.as_i64().unwrap_or(0);
    Ok(format!(
        "You are analyzing {sessions} agent sessions on the \"{module}\" module.\n\n\
         File access patterns:\n{}\n\n\
         Co-accessed pairs:\n{}\n\n\
         Recurring errors:\n{}\n\n\
         Identify (max 5 memories, omit obvious things):\n\
         1. Files to prefetch (prefetch_pattern)\n\
         2. Non-obvious file coupling (causal_dependency or gotcha)\n\
         3. Recurring errors (error_pattern)\n\
         4. Non-obvious module purpose (module_insight)\n\n\
         Format: JSON [{{ \"type\": \"...\", \"content\": \"...\", \"relatedFiles\": [...], \"confidence\": 0.0-1.0 }}]",
        list(&files, &|r| format!("- {}: {} sessions", s(&r[0]), n(&r[1]))),
        list(&pairs, &|r| format!("- {} + {}: {} sessions", s(&r[0]), s(&r[1]), n(&r[2]))),
        list(&errors, &|r| format!("- \"{}\": {} sessions, resolved in {}", s(&r[0]), n(&r[1]), n(&r[2]))),
    ))
}

/// One proposed memory of an answer.
struct Proposed {
    ty: String,
    content: String,
    files: Vec<String>,
    confidence: f64,
    /// The client's embedding of `content`, for novelty by meaning.
    embedding: Option<Vec<f32>>,
}

/// A proposal this close (cosine similarity) to a memory of the resource is that memory
/// again: it reinforces it instead of making another (the seed's novelty threshold).
const SAME_MEANING: f64 = 0.88;

const KEYS: &[&str] = &["type", "content", "relatedFiles", "confidence", "embedding"];

/// Reads an answer: a JSON array (alone, or in one fenced code block) of at most five
/// objects with a known `type`, a `content`, optional `relatedFiles` and `confidence`, and
/// the `embedding` the client may add to each.
fn parse(text: &str) -> Result<Vec<Proposed>> {
    let t = text.trim();
    let body = match t.strip_prefix("```") {
        Some(rest) => {
            let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric());
            rest.strip_suffix("```")
                .ok_or_else(|| Error::invalid("answer", "a fenced block must end with ```"))?
                .trim()
        }
        None => t,
    };
    let v = json_input::parse("answer", body)?;
    let items = v.as_array().ok_or_else(|| Error::invalid("answer", "must be a JSON array of memories"))?;
    if items.len() > MAX_MEMORIES {
        return Err(Error::invalid("answer", format!("holds {} memories: at most {MAX_MEMORIES}", items.len())));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let at = format!("answer[{i}]");
            let m = item.as_object().ok_or_else(|| Error::invalid(&at, "must be an object"))?;
            if let Some(k) = m.keys().find(|k| !KEYS.contains(&k.as_str())) {
                return Err(Error::invalid(&at, format!("unknown key {}", crate::error::echo(k))));
            }
            let ty = m.get("type").and_then(Json::as_str).unwrap_or("");
            if !TYPES.contains(&ty) {
                return Err(Error::invalid(format!("{at}.type"), format!("must be one of {}", TYPES.join(", "))));
            }
            let content = m.get("content").and_then(Json::as_str).map(str::trim).unwrap_or("");
            if content.is_empty() || content.chars().count() > MAX_CONTENT {
                return Err(Error::invalid(format!("{at}.content"), format!("must be 1 to {MAX_CONTENT} characters")));
            }
            let files = match m.get("relatedFiles") {
                None | Some(Json::Null) => Vec::new(),
                Some(Json::Array(a)) => a
                    .iter()
                    .map(|f| f.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| Error::invalid(format!("{at}.relatedFiles"), "must be an array of paths"))?,
                Some(_) => return Err(Error::invalid(format!("{at}.relatedFiles"), "must be an array of paths")),
            };
            let confidence = match m.get("confidence") {
                None | Some(Json::Null) => 0.6,
                Some(c) => c
                    .as_f64()
                    .filter(|c| (0.0..=1.0).contains(c))
                    .ok_or_else(|| Error::invalid(format!("{at}.confidence"), "must be a number from 0 to 1"))?,
            };
            let embedding = match m.get("embedding") {
                None | Some(Json::Null) => None,
                Some(e) => {
                    let at = format!("{at}.embedding");
                    let v = e
                        .as_array()
                        .filter(|a| !a.is_empty())
                        .and_then(|a| a.iter().map(|x| x.as_f64().map(|x| x as f32)).collect::<Option<Vec<f32>>>())
                        .ok_or_else(|| Error::invalid(&at, "must be a non-empty array of numbers"))?;
                    vectors::check_norm(&at, &v)?;
                    Some(v)
                }
            };
            Ok(Proposed { ty: ty.to_owned(), content: content.to_owned(), files, confidence, embedding })
        })
        .collect()
}

/// `mem_synthesis_answer(session_id, answer [, options])` → JSON `{stored: [{memory_id,
/// created, type, content, similar_to}]}`: stores the answer to the session's synthesis
/// prompt as memories that need review. A proposal with an `embedding` (of the model that
/// option `model` names) close to a memory of the resource (cosine > 0.88) reinforces that
/// memory (`similar_to`: its id and the similarity) instead of making another; a new one
/// keeps its vector. A malformed answer, or one holding a secret, is refused with the reason
/// and changes nothing; the prompt may be answered again until an answer is taken.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn answer(conn: &mut dyn Conn, session_id: &str, text: &str, options: Option<&str>) -> Result<String> {
    let o = Opts::parse("options", options, &["model"])?;
    let model = o.opt_str("model")?;
    let row = route::query(
        conn,
        "UPDATE mem_observer_sessions SET updated_at = updated_at WHERE id = ?1{home} \
         RETURNING resource_id, synthesis",
        &[session_id.into()],
    )?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("session", session_id))?;
    match row[1].as_str() {
        Some("pending") => {}
        Some(_) => return Err(Error::invalid("session_id", "the session's synthesis is already answered")),
        None => return Err(Error::invalid("session_id", "the session asked for no synthesis")),
    }
    let resource = row[0].as_str().unwrap_or_default().to_owned();
    let proposed = parse(text)?;
    let model = match (model, proposed.iter().any(|p| p.embedding.is_some())) {
        (None, true) => return Err(Error::invalid("options.model", "is required: the answer carries embeddings")),
        (m, _) => m,
    };
    let mut stored = Vec::new();
    for p in proposed {
        let similar = match (&p.embedding, &model) {
            (Some(v), Some(model)) => similar(conn, &resource, model, v)?,
            _ => None,
        };
        // The same meaning is the memory already held: remembering its content reinforces it.
        let content = similar.as_ref().map_or(p.content.as_str(), |s| s.2.as_str());
        let memory = json!({
            "type": p.ty, "content": content, "confidence": p.confidence,
            "related_files": p.files, "tags": ["observer", "synthesis"],
            "source": "observer_inferred", "session_id": session_id, "needs_review": true,
        });
        let r: Json = serde_json::from_str(&remember::remember(conn, &resource, &memory.to_string(), None)?)
            .map_err(|e| Error::internal(format!("mem_remember answered malformed JSON: {e}")))?;
        if let (Some(v), Some(model), None, Some(id)) = (&p.embedding, &model, &similar, r["id"].as_str()) {
            store::embed_set(conn, "memory", id, model, Some(&vectors::to_blob(v)))?;
        }
        stored.push(json!({
            "memory_id": r["id"], "created": r["created"], "type": p.ty, "content": content,
            "similar_to": similar.map(|(id, cosine, _)| json!({"memory_id": id, "cosine": cosine})),
        }));
    }
    route::execute(
        conn,
        "UPDATE mem_observer_sessions SET synthesis = 'answered' WHERE id = ?1{home}",
        &[session_id.into()],
    )?;
    Ok(json!({"stored": stored}).to_string())
}

/// The memory of `resource` closest in meaning to `v` among those with a vector of `model`,
/// when its cosine similarity passes [`SAME_MEANING`]: its id, the similarity, its content.
fn similar(conn: &mut dyn Conn, resource: &str, model: &str, v: &[f32]) -> Result<Option<(String, f64, String)>> {
    let owners = Owners {
        thread: None,
        kinds: vec!["memory".into()],
        memories: Filter { resource: Some(resource.to_owned()), ..Filter::default() },
    };
    let Some(f) = nearest(conn, model, v.to_vec(), Metric::Cosine, 1, &owners)?.into_iter().next() else {
        return Ok(None);
    };
    let cosine = 1.0 - f.distance;
    if cosine <= SAME_MEANING {
        return Ok(None);
    }
    let content = conn.query_value(
        "SELECT content FROM mem_memories WHERE id = ?1 AND resource_id = ?2",
        &[f.owner_id.as_str().into(), resource.into()],
    )?;
    Ok(content.and_then(|c| c.as_str().map(str::to_owned)).map(|c| (f.owner_id, (cosine * 1e6).round() / 1e6, c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modules_are_folders() {
        assert_eq!(module_of("src/auth/token.ts"), "src/auth");
        assert_eq!(module_of("Cargo.toml"), ".");
        assert_eq!(files_in("src/a_b"), "src/a\\_b/%");
    }

    #[test]
    fn answers_are_read_strictly() {
        let ok = parse("```json\n[{\"type\":\"gotcha\",\"content\":\"x\",\"relatedFiles\":[\"a\"]}]\n```").unwrap();
        assert_eq!((ok[0].ty.as_str(), ok[0].confidence, ok[0].files.len()), ("gotcha", 0.6, 1));
        for (text, msg) in [
            ("{}", "answer: must be a JSON array"),
            ("[1,2,3,4,5,6]", "at most 5"),
            (r#"[{"type":"decision","content":"x"}]"#, "answer[0].type: must be one of"),
            (r#"[{"type":"gotcha","content":""}]"#, "answer[0].content"),
            (r#"[{"type":"gotcha","content":"x","confidence":2}]"#, "answer[0].confidence"),
            (r#"[{"type":"gotcha","content":"x","why":1}]"#, "unknown key"),
            ("Sure! Here are the memories: []", "malformed JSON"),
        ] {
            let e = parse(text).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(msg), "{text}: {e}");
        }
    }
}
