//! The JSON options object that many functions take as their last argument.
//!
//! Options are strict: an unknown key or a value of the wrong type is an error naming the key,
//! because a silently ignored misspelling (`"limt": 5`) is worse than a failed call.

use crate::{Error, Result};
use serde_json::{Map, Value as Json};

/// A parsed options object; getters check the type of the key they read.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Opts {
    arg: &'static str,
    map: Map<String, Json>,
}

impl Opts {
    /// Parses `text` as a JSON object. SQL NULL, an empty string and `null` mean no options.
    /// `allowed` lists the keys this function understands.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn parse(arg: &'static str, text: Option<&str>, allowed: &[&str]) -> Result<Self> {
        let map = match text.map(str::trim) {
            None | Some("") => Map::new(),
            Some(t) => match crate::json_input::parse(arg, t)? {
                Json::Object(m) => m,
                Json::Null => Map::new(),
                _ => return Err(Error::invalid(arg, "must be a JSON object")),
            },
        };
        if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(Error::invalid(
                arg,
                format!(
                    "unknown key {} (allowed: {})",
                    crate::error::echo(k),
                    allowed.join(", ")
                ),
            ));
        }
        Ok(Opts { arg, map })
    }

    fn bad(&self, key: &str, rule: &str) -> Error {
        Error::invalid(self.name(key), rule.to_owned())
    }

    fn get(&self, key: &str) -> Option<&Json> {
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// The key is present (possibly `null`): for updates, where `null` clears a field.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// The key is present and `null`.
    pub(crate) fn is_null(&self, key: &str) -> bool {
        self.has(key) && self.get(key).is_none()
    }

    /// The key's full name for messages, e.g. `options.limit`.
    pub(crate) fn name(&self, key: &str) -> String {
        format!("{}.{key}", self.arg)
    }

    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn opt_int(&self, key: &str) -> Result<Option<i64>> {
        self.get(key)
            .map(|v| {
                v.as_i64()
                    .ok_or_else(|| self.bad(key, "must be an integer"))
            })
            .transpose()
    }

    /// An integer in `min..=max`, or `default` when absent.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn int(&self, key: &str, default: i64, min: i64, max: i64) -> Result<i64> {
        let v = self.opt_int(key)?.unwrap_or(default);
        if v < min || v > max {
            return Err(self.bad(key, &format!("must be between {min} and {max}")));
        }
        Ok(v)
    }

    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn opt_f64(&self, key: &str) -> Result<Option<f64>> {
        self.get(key)
            .map(|v| v.as_f64().ok_or_else(|| self.bad(key, "must be a number")))
            .transpose()
    }

    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn opt_str(&self, key: &str) -> Result<Option<String>> {
        self.get(key)
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| self.bad(key, "must be a string"))
            })
            .transpose()
    }

    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn opt_bool(&self, key: &str) -> Result<Option<bool>> {
        self.get(key)
            .map(|v| {
                v.as_bool()
                    .ok_or_else(|| self.bad(key, "must be true or false"))
            })
            .transpose()
    }

    /// An array of strings; `None` when absent.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn opt_strings(&self, key: &str) -> Result<Option<Vec<String>>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let rule = "must be an array of strings";
        match v {
            Json::Array(a) => a
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| self.bad(key, rule))
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            _ => Err(self.bad(key, rule)),
        }
    }

    /// An array of any JSON values; `None` when absent.
    pub(crate) fn opt_array(&self, key: &str) -> Result<Option<Vec<Json>>> {
        self.get(key)
            .map(|v| match v {
                Json::Array(a) => Ok(a.clone()),
                _ => Err(self.bad(key, "must be an array")),
            })
            .transpose()
    }

    /// A JSON object, re-serialised; `None` when absent.
    #[cfg_attr(feature = "testing", visibility::make(pub))]
    pub(crate) fn opt_object(&self, key: &str) -> Result<Option<String>> {
        self.get(key)
            .map(|v| match v {
                Json::Object(_) => Ok(v.to_string()),
                _ => Err(self.bad(key, "must be a JSON object")),
            })
            .transpose()
    }
}

/// Checks that `text` is a JSON object and returns it in compact form.
pub(crate) fn object_text(arg: &str, text: Option<&str>) -> Result<String> {
    match text.map(str::trim) {
        None | Some("") => Ok("{}".into()),
        Some(t) => match crate::json_input::parse(arg, t)? {
            v @ Json::Object(_) => Ok(v.to_string()),
            _ => Err(Error::invalid(arg, "must be a JSON object")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strictness() {
        let e = Opts::parse("options", Some(r#"{"limt":5}"#), &["limit"])
            .err()
            .unwrap();
        assert_eq!(
            e.to_string(),
            "options: unknown key \"limt\" (allowed: limit)"
        );
        let e = Opts::parse("options", Some("{"), &[])
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("options: malformed JSON"), "{e}");
        let o = Opts::parse("options", Some(r#"{"limit":"x"}"#), &["limit"]).unwrap();
        assert_eq!(
            o.int("limit", 10, 1, 100).unwrap_err().to_string(),
            "options.limit: must be an integer"
        );
        let o = Opts::parse("options", Some(r#"{"limit":0}"#), &["limit"]).unwrap();
        assert_eq!(
            o.int("limit", 10, 1, 100).unwrap_err().to_string(),
            "options.limit: must be between 1 and 100"
        );
        let o = Opts::parse("options", None, &["limit"]).unwrap();
        assert_eq!(o.int("limit", 10, 1, 100).unwrap(), 10);
    }
}
