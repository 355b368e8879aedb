//! Releases and the schema version each one pins.
//!
//! The library defines the functions and carries every migration; an extension version names
//! the schema it installs. So a newer library installs or updates to any earlier extension
//! version exactly: `CREATE EXTENSION agentmem VERSION '0.1.0'` gets 0.1.0's tables, and each
//! `agentmem--A--B.sql` update script (which bootstraps again) moves the schema to B's. Every
//! release that changes the schema or the catalog gets a new entry and its update script.

use crate::{Error, Result};

/// One published version, the schema version it installs, and whether it keeps derived data
/// private (Postgres: docs/security.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    pub version: &'static str,
    pub schema: i64,
    pub private_derived_data: bool,
    /// Whether its trigger functions come from the trigger catalog, created by the bootstrap
    /// over one entry point (earlier releases' install scripts create their own).
    pub trigger_catalog: bool,
}

/// Every release, oldest first; the last is this build.
pub const RELEASES: &[Release] = &[
    Release {
        version: "0.1.0",
        schema: 14,
        private_derived_data: false,
        trigger_catalog: false,
    },
    Release {
        version: "0.2.0",
        schema: 16,
        private_derived_data: true,
        trigger_catalog: false,
    },
    Release {
        version: "0.3.0",
        schema: 17,
        private_derived_data: true,
        trigger_catalog: false,
    },
    Release {
        version: "0.4.0",
        schema: 19,
        private_derived_data: true,
        trigger_catalog: true,
    },
    Release {
        version: "0.5.0",
        schema: 20,
        private_derived_data: true,
        trigger_catalog: true,
    },
    Release {
        version: "0.6.0",
        schema: 37,
        private_derived_data: true,
        trigger_catalog: true,
    },
];

/// The release `version`.
pub fn release(version: &str) -> Result<&'static Release> {
    RELEASES
        .iter()
        .find(|r| r.version == version)
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
            // Security is never given back.
            assert!(
                w[0].private_derived_data <= w[1].private_derived_data,
                "{w:?}"
            );
        }
    }

    #[test]
    fn unknown_versions_are_named() {
        assert_eq!(release("0.1.0").map(|r| r.schema), Ok(14));
        let e = release("9.9.9").unwrap_err().to_string();
        assert!(
            e.contains("does not know extension version \"9.9.9\""),
            "{e}"
        );
    }
}
