//! A call and its answer as text, the form in which a host hands a call to the node that
//! holds its resource: each row (the arguments, and each row of the answer) a JSON array of
//! strings and nulls.
//!
//! Each value travels as text by the type the catalog declares: integers in decimal, reals
//! in Rust's shortest form that reads back to the same bits, blobs in hex; NULL as null. So
//! scores arrive exactly as the node computed them.

use crate::api::Type;
use crate::{Error, Result, Row, Value};

/// A value as text (NULL as `None`).
fn encode(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::Int(i) => Some(i.to_string()),
        Value::Real(r) => Some(format!("{r:?}")),
        Value::Text(s) => Some(s.clone()),
        Value::Json(j) => Some(j.to_text()),
        Value::Blob(b) => Some(b.iter().map(|x| format!("{x:02x}")).collect()),
    }
}

/// A value of type `ty` read back from [`encode`]'s text.
fn decode(text: Option<String>, ty: Type) -> Result<Value> {
    let Some(t) = text else {
        return Ok(Value::Null);
    };
    let bad = || Error::internal(format!("a handed-over value is not a {ty:?}: {t:?}"));
    Ok(match ty {
        Type::Int | Type::Bool => Value::Int(t.parse().map_err(|_| bad())?),
        Type::Real => Value::Real(t.parse().map_err(|_| bad())?),
        Type::Text | Type::Json => Value::Text(t),
        Type::Blob => {
            if t.len() % 2 != 0 {
                return Err(bad());
            }
            let bytes: Option<Vec<u8>> = (0..t.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(t.get(i..i + 2)?, 16).ok())
                .collect();
            Value::Blob(bytes.ok_or_else(bad)?)
        }
    })
}

/// A row as one text (see the module).
pub fn pack(row: &[Value]) -> String {
    let texts: Vec<Option<String>> = row.iter().map(encode).collect();
    serde_json::to_string(&texts).unwrap_or_default()
}

/// A row [`pack`]ed, read back as values of `types`; a row of another width is refused.
pub fn unpack(text: &str, types: &[Type]) -> Result<Row> {
    let texts: Vec<Option<String>> = serde_json::from_str(text).map_err(|e| {
        Error::internal(format!(
            "a handed-over row is not a JSON array of texts: {e}"
        ))
    })?;
    if texts.len() != types.len() {
        return Err(Error::internal(format!(
            "a handed-over row has {} values, expected {}",
            texts.len(),
            types.len()
        )));
    }
    texts
        .into_iter()
        .zip(types)
        .map(|(t, ty)| decode(t, *ty))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn typed() -> impl Strategy<Value = (Value, Type)> {
        prop_oneof![
            Just((Value::Null, Type::Text)),
            any::<i64>().prop_map(|i| (Value::Int(i), Type::Int)),
            any::<f64>()
                .prop_filter("NaN is not equal to itself", |r| !r.is_nan())
                .prop_map(|r| (Value::Real(r), Type::Real)),
            ".*".prop_map(|s| (Value::Text(s), Type::Text)),
            proptest::collection::vec(any::<u8>(), 0..40)
                .prop_map(|b| (Value::Blob(b), Type::Blob)),
        ]
    }

    proptest! {
        #[test]
        fn values_read_back_exactly(row in proptest::collection::vec(typed(), 0..8)) {
            let (values, types): (Vec<Value>, Vec<Type>) = row.into_iter().unzip();
            let back = unpack(&pack(&values), &types).unwrap();
            prop_assert_eq!(back, values);
        }
    }

    #[test]
    fn a_row_of_another_width_or_a_bad_value_is_refused() {
        assert!(unpack("[null]", &[Type::Int, Type::Int]).is_err());
        assert!(unpack("{}", &[Type::Int]).is_err());
        assert!(decode(Some("x".into()), Type::Int).is_err());
        assert!(decode(Some("abc".into()), Type::Blob).is_err());
    }
}
