//! Checks of SQL arguments shared by every domain, with errors that name the argument.

use crate::{Error, Result};

/// A required text argument.
pub fn required<'a>(arg: &str, v: Option<&'a str>) -> Result<&'a str> {
    v.ok_or_else(|| Error::invalid(arg, "must not be NULL"))
}

/// Checks `v` against a list of allowed values.
pub fn check_one_of(arg: &str, v: &str, allowed: &[&str]) -> Result<()> {
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
