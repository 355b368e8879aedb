//! The values that cross between SQL and the core.

/// One SQL value. Both adapters map their native types onto the first five; a JSON tree (a
/// list of strings among them) is a value of a JSON result column only, which each host
/// renders as its JSON type.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
    Json(crate::JsonTree<'static>),
}

/// One result row, columns in statement order.
pub type Row = Vec<Value>;

/// A [`Value`] borrowed from the host's buffers while a row is current: scans that only
/// look at each row (sums, vector distances) copy nothing. Text that is not valid UTF-8 is
/// read as [`Value`] reads it, with replacement characters.
#[derive(Clone, Debug, PartialEq)]
pub enum ValueRef<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(std::borrow::Cow<'a, str>),
    Blob(&'a [u8]),
}

impl ValueRef<'_> {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            ValueRef::Int(v) => Some(*v),
            ValueRef::Real(v) => Some(*v as i64),
            ValueRef::Text(s) => s.parse().ok(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ValueRef::Int(v) => Some(*v as f64),
            ValueRef::Real(v) => Some(*v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            ValueRef::Text(s) => Some(s),
            _ => None,
        }
    }

    /// This value owned, its text moved when it already is.
    pub fn into_owned(self) -> Value {
        match self {
            ValueRef::Text(s) => Value::Text(s.into_owned()),
            other => other.to_owned(),
        }
    }

    pub fn to_owned(&self) -> Value {
        match self {
            ValueRef::Null => Value::Null,
            ValueRef::Int(v) => Value::Int(*v),
            ValueRef::Real(v) => Value::Real(*v),
            ValueRef::Text(s) => Value::Text(s.clone().into_owned()),
            ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        }
    }
}

impl Value {
    /// This value, borrowed.
    pub fn as_ref(&self) -> ValueRef<'_> {
        match self {
            Value::Null => ValueRef::Null,
            Value::Int(v) => ValueRef::Int(*v),
            Value::Real(v) => ValueRef::Real(*v),
            Value::Text(s) => ValueRef::Text(std::borrow::Cow::Borrowed(s)),
            Value::Blob(b) => ValueRef::Blob(b),
            Value::Json(j) => ValueRef::Text(std::borrow::Cow::Owned(j.to_text())),
        }
    }
}

impl Value {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Real(v) => Some(*v as i64),
            Value::Text(s) => s.parse().ok(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(v) => Some(*v as f64),
            Value::Real(v) => Some(*v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn into_string(self) -> Option<String> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_owned())
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(v)
    }
}

impl From<crate::Strings> for Value {
    fn from(v: crate::Strings) -> Self {
        Value::Json(crate::JsonTree::Strings(v))
    }
}

impl From<crate::JsonTree<'static>> for Value {
    fn from(v: crate::JsonTree<'static>) -> Self {
        Value::Json(v)
    }
}

impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Self {
        Value::Blob(v)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Self {
        v.map_or(Value::Null, Into::into)
    }
}

/// Refuses statement parameters holding U+0000 in text: the last guard behind the checks of
/// every argument and JSON input ([`crate::args::no_nul`]), for the database that would cut
/// the text there (Postgres) instead of storing what it was given.
pub fn check_params(params: &[Value]) -> crate::Result<()> {
    for (i, p) in params.iter().enumerate() {
        match p {
            // The argument's name is made only for the error: this runs for every statement.
            Value::Text(s) if s.contains('\0') => {
                crate::args::no_nul(&format!("statement parameter {}", i + 1), s)?;
            }
            _ => {}
        }
    }
    Ok(())
}
