//! Checks of SQL arguments shared by every domain, with errors that name the argument.

use crate::{Error, Result};

/// A required text argument.
pub(crate) fn required<'a>(arg: &str, v: Option<&'a str>) -> Result<&'a str> {
    v.ok_or_else(|| Error::invalid(arg, "must not be NULL"))
}

/// Checks `v` against a list of allowed values.
pub(crate) fn check_one_of(arg: &str, v: &str, allowed: &[&str]) -> Result<()> {
    if allowed.contains(&v) {
        Ok(())
    } else {
        Err(Error::invalid(
            arg,
            format!(
                "must be one of {} (got {})",
                allowed.join(", "),
                crate::error::echo(v)
            ),
        ))
    }
}

/// Refuses text holding U+0000: Postgres' `text` and `jsonb` cannot hold it (a C string ends
/// there, so the rest would be lost), and both databases must give the same answer, so no
/// text with it is taken anywhere. The error names the argument and the character.
pub(crate) fn no_nul(arg: &str, v: &str) -> Result<()> {
    match v.find('\0') {
        None => Ok(()),
        Some(at) => Err(nul_error(arg, v[..at].chars().count())),
    }
}

/// The error for U+0000 at character `at` (0-based) of argument `arg`.
pub(crate) fn nul_error(arg: &str, at: usize) -> Error {
    Error::invalid(
        arg,
        format!("contains U+0000 (NUL) at character {at}; text cannot hold it"),
    )
}
