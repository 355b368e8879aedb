//! Releases and the schema version each one pins.
//!
//! The library defines the functions and carries every migration; an extension version names
//! the schema it installs. So a newer library installs or updates to any earlier extension
//! version exactly: `CREATE EXTENSION agentmem VERSION '0.1.0'` gets 0.1.0's tables, and each
//! `agentmem--A--B.sql` update script (which bootstraps again) moves the schema to B's. Every
//! release that changes the schema or the catalog gets a new entry and its update script.

use crate::{Error, Result};

/// One published version and the schema version it installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    pub version: &'static str,
    pub schema: i64,
}

/// Every release, oldest first; the last is this build.
pub const RELEASES: &[Release] = &[
    Release {
        version: "0.1.0",
        schema: 14,
    },
    Release {
        version: "0.2.0",
        schema: 14,
    },
];

/// The schema version extension version `version` installs.
pub fn schema_of(version: &str) -> Result<i64> {
    RELEASES
        .iter()
        .find(|r| r.version == version)
        .map(|r| r.schema)
        .ok_or_else(|| {
            Error::Database(format!(
                "agentmem {} does not know extension version {}: install a library at least as new as it",
                crate::VERSION,
                crate::error::echo(version)
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_release_is_this_build_at_the_latest_schema() {
        let last = RELEASES.last().unwrap();
        assert_eq!(last.version, crate::VERSION);
        assert_eq!(last.schema, super::super::latest_version());
    }

    #[test]
    fn releases_only_move_forward() {
        for w in RELEASES.windows(2) {
            let v = |s: &str| -> Vec<u32> { s.split('.').map(|p| p.parse().unwrap()).collect() };
            assert!(v(w[0].version) < v(w[1].version), "{w:?}");
            assert!(w[0].schema <= w[1].schema, "{w:?}");
        }
    }

    #[test]
    fn unknown_versions_are_named() {
        assert_eq!(schema_of("0.1.0"), Ok(14));
        let e = schema_of("9.9.9").unwrap_err().to_string();
        assert!(
            e.contains("does not know extension version \"9.9.9\""),
            "{e}"
        );
    }
}
