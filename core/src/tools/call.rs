//! One tool call: the LLM's arguments (`input`), what the agent knows and the LLM does not
//! (`context`), and the answer, which is JSON whatever happens — `{"success":false,
//! "error":…}` for a bad call, never an SQL error.

use crate::{Conn, Error};
use serde_json::{json, Map, Value as Json};

pub(crate) type Answer = std::result::Result<Json, Failure>;

/// A refused call: the seed's message, and extra fields (such as `blockingTasks`).
pub(crate) struct Failure {
    pub error: String,
    pub extra: Map<String, Json>,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let error = match e {
            Error::NotFound { kind: "task", id } => format!("Task not found: {id}"),
            other => {
                let s = other.to_string();
                s.strip_prefix("options.").map(str::to_owned).unwrap_or(s)
            }
        };
        Failure {
            error,
            extra: Map::new(),
        }
    }
}

impl Failure {
    /// The error of the core call behind a tool, naming the argument as the LLM wrote it:
    /// `names` maps the call's argument (`options.max_depth`) to the tool's (`maxDepth`).
    pub(crate) fn renamed(e: Error, names: &[(&str, &str)]) -> Failure {
        let msg = e.to_string();
        for (core, tool) in names {
            if let Some(rest) = msg.strip_prefix(core).filter(|r| r.starts_with(':')) {
                return format!("{tool}{rest}").into();
            }
        }
        e.into()
    }
}

impl From<String> for Failure {
    fn from(error: String) -> Self {
        Failure {
            error,
            extra: Map::new(),
        }
    }
}

impl From<&str> for Failure {
    fn from(error: &str) -> Self {
        error.to_string().into()
    }
}

/// A tool argument's text. Tools answer every bad call with `{"success":false,…}` instead
/// of an SQL error, so their arguments arrive as bytes and are checked here.
fn tool_text<'a>(arg: &str, bytes: Option<&'a [u8]>) -> Result<Option<&'a str>, Failure> {
    let Some(b) = bytes else { return Ok(None) };
    let text = std::str::from_utf8(b).map_err(|_| format!("{arg} must be valid UTF-8 text"))?;
    crate::args::no_nul(arg, text)?;
    Ok(Some(text))
}

/// A parsed call: the input object and the context object.
pub(crate) struct Input {
    pub map: Map<String, Json>,
    ctx: Map<String, Json>,
}

impl Input {
    pub(crate) fn parse(
        input: Option<&[u8]>,
        context: Option<&[u8]>,
    ) -> std::result::Result<Input, Failure> {
        let input = tool_text("input", input)?;
        let context = tool_text("context", context)?;
        let map = match serde_json::from_str::<Json>(input.unwrap_or("")) {
            Ok(Json::Object(m)) => m,
            Ok(_) => return Err("input must be a JSON object".into()),
            Err(e) => return Err(format!("input must be JSON: {e}").into()),
        };
        crate::json_input::check_object("input", &map)?;
        let ctx = match context.map(str::trim) {
            None | Some("") => Map::new(),
            Some(c) => match serde_json::from_str::<Json>(c) {
                Ok(Json::Object(m)) => m,
                Ok(Json::Null) => Map::new(),
                _ => return Err("context must be a JSON object".into()),
            },
        };
        crate::json_input::check_object("context", &ctx)?;
        Ok(Input { map, ctx })
    }

    /// The `action` key as given (absent or not a string: `None`).
    pub(crate) fn action(&self) -> Option<String> {
        self.map
            .get("action")
            .and_then(Json::as_str)
            .map(str::to_owned)
    }

    pub(crate) fn opt_str(&self, key: &str) -> std::result::Result<Option<String>, Failure> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{key}: must be a string").into()),
        }
    }

    pub(crate) fn str(&self, key: &str) -> std::result::Result<String, Failure> {
        self.opt_str(key)?
            .ok_or_else(|| format!("{key}: must be a string").into())
    }

    /// A key of the input, else of the context.
    pub(crate) fn context(&self, key: &str) -> std::result::Result<Option<String>, Failure> {
        if let Some(v) = self.opt_str(key)? {
            return Ok(Some(v));
        }
        self.scope(key)
    }

    /// A key of the context only: a bound the agent set, which the LLM's arguments cannot
    /// widen.
    pub(crate) fn scope(&self, key: &str) -> std::result::Result<Option<String>, Failure> {
        match self.ctx.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("context.{key}: must be a string").into()),
        }
    }

    pub(crate) fn limit(&self, default: i64, max: i64) -> std::result::Result<i64, Failure> {
        self.int("limit", default, 1, max)
    }

    /// An integer key between `min` and `max`, `default` when absent.
    pub(crate) fn int(
        &self,
        key: &str,
        default: i64,
        min: i64,
        max: i64,
    ) -> std::result::Result<i64, Failure> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(default),
            Some(v) => v
                .as_i64()
                .filter(|n| (min..=max).contains(n))
                .ok_or_else(|| format!("{key}: must be an integer between {min} and {max}").into()),
        }
    }

    pub(crate) fn bool(&self, key: &str, default: bool) -> std::result::Result<bool, Failure> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(default),
            Some(Json::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("{key}: must be true or false").into()),
        }
    }

    /// An array of strings (absent: empty).
    pub(crate) fn strings(&self, key: &str) -> std::result::Result<Vec<String>, Failure> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(Vec::new()),
            Some(Json::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| format!("{key}: must be an array of strings").into()),
            Some(_) => Err(format!("{key}: must be an array of strings").into()),
        }
    }
}

/// A core function's JSON object answer (its text), marked successful: what a tool that
/// wraps one function answers.
pub(crate) fn succeeded(answer: &str) -> Json {
    let mut fields: Map<String, Json> = serde_json::from_str(answer).unwrap_or_default();
    fields.insert("success".into(), json!(true));
    Json::Object(fields)
}

/// The answer's text: the value, or the failure with the call's action when it had one.
fn answer(action: &str, r: Answer) -> String {
    match r {
        Ok(v) => v.to_string(),
        Err(f) => {
            let mut m = Map::new();
            if !action.is_empty() {
                m.insert("action".into(), json!(action));
            }
            m.insert("success".into(), json!(false));
            m.insert("error".into(), json!(f.error));
            m.extend(f.extra);
            Json::Object(m).to_string()
        }
    }
}

/// The call's action, which must be one of `actions`; the error names what was wrong.
pub(crate) fn known(i: &Input, actions: &[&str]) -> std::result::Result<String, Failure> {
    let expected = match actions {
        [one] => format!("\"{one}\""),
        _ => {
            let (last, rest) = actions.split_last().unwrap_or((&"", &[]));
            format!("{} or {last}", rest.join(", "))
        }
    };
    match (i.map.get("action"), i.action()) {
        (_, Some(a)) if actions.contains(&a.as_str()) => Ok(a),
        (None | Some(Json::Null), _) => {
            Err(format!("action: missing (expected {expected})").into())
        }
        (_, Some(a)) => Err(format!(
            "unknown action {} (expected {expected})",
            crate::error::echo(&a)
        )
        .into()),
        (Some(_), None) => Err(format!("action: must be a string (expected {expected})").into()),
    }
}

/// A tool's body: the checked call in, the answer out.
pub(crate) type Run = fn(&mut dyn Conn, &Input) -> Answer;

/// One tool.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Tool {
    pub name: &'static str,
    /// What the LLM reads to decide when and how to call it.
    pub description: &'static str,
    /// The tool's arguments: their JSON Schemas by name.
    pub properties: fn() -> Json,
    /// The arguments a call must pass.
    pub required: &'static [&'static str],
    pub(crate) run: Run,
}

impl Tool {
    /// The JSON Schema of the tool's arguments: an object of its properties, the required
    /// ones required and no others allowed.
    pub(crate) fn schema(&self) -> Json {
        json!({
            "type": "object",
            "properties": (self.properties)(),
            "required": self.required,
            "additionalProperties": false,
        })
    }
}

/// Parses a tool call, runs it and answers JSON whatever happens: a call that fails — by
/// its own checks or the database's (a row policy, a constraint) — leaves nothing it wrote
/// ([`Conn::attempt`]) and answers `success:false`. Only a failure the host cannot undo on
/// its own (SQLite inside a writing statement) fails the SQL call instead.
pub(crate) fn tool_call(
    conn: &mut dyn Conn,
    input: Option<&[u8]>,
    context: Option<&[u8]>,
    run: Run,
) -> Result<String, Error> {
    let parsed = match Input::parse(input, context) {
        Ok(i) => i,
        Err(f) => return Ok(answer("", Err(f))),
    };
    let action = parsed.action().unwrap_or_default();
    let mut answered: Option<Answer> = None;
    let outcome = conn.attempt(&mut |c| {
        let a = run(c, &parsed);
        let failed = a.is_err();
        answered = Some(a);
        if failed {
            // Undo what the call wrote before it failed; the answer says why.
            Err(Error::internal("the tool call failed"))
        } else {
            Ok(())
        }
    })?;
    let r = match (outcome, answered) {
        (Ok(()), Some(a)) | (Err(_), Some(a @ Err(_))) => a,
        (Err(e), _) => Err(e.into()),
        (Ok(()), None) => Err(Error::internal("the tool call answered nothing").into()),
    };
    Ok(answer(&action, r))
}
