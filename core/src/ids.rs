//! Identifiers: UUID v7 by default (time-ordered, so B-tree inserts stay local), or the
//! caller's own.

use crate::{Error, Result};

/// Longest caller-supplied id accepted.
pub(crate) const MAX_ID_LEN: usize = 200;

/// A new UUID v7 in its canonical text form.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Checks a caller-supplied id: non-empty, at most [`MAX_ID_LEN`] bytes, no control characters.
pub(crate) fn check_id(arg: &str, id: &str) -> Result<()> {
    if id.is_empty() {
        return Err(Error::invalid(arg, "must not be empty"));
    }
    if id.len() > MAX_ID_LEN {
        return Err(Error::invalid(
            arg,
            format!("must be at most {MAX_ID_LEN} bytes"),
        ));
    }
    if id.chars().any(char::is_control) {
        return Err(Error::invalid(arg, "must not contain control characters"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_v7_and_sorted_by_time() {
        let a = new_id();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = new_id();
        assert_eq!(uuid::Uuid::parse_str(&a).unwrap().get_version_num(), 7);
        assert!(a < b);
    }

    #[test]
    fn bad_ids_are_named() {
        assert_eq!(
            check_id("thread_id", "").unwrap_err().to_string(),
            "thread_id: must not be empty"
        );
        assert!(check_id("id", "a\u{0}b").is_err());
        assert!(check_id("id", &"x".repeat(201)).is_err());
    }
}
