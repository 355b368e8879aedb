//! Sources of the crates this workspace builds with, as cargo's registry holds them.

use std::path::{Path, PathBuf};

/// The folder of the registry's sources of crate `name` at the version Cargo.lock pins.
#[allow(dead_code)]
pub fn crate_dir(name: &str) -> Option<PathBuf> {
    let lock = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.lock"))
        .ok()?;
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains(&format!("\nname = \"{name}\"\n")))?
        .lines()
        .find_map(|l| l.strip_prefix("version = \""))?
        .trim_end_matches('"')
        .to_owned();
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cargo"));
    std::fs::read_dir(home.join("registry/src"))
        .ok()?
        .flatten()
        .map(|e| e.path().join(format!("{name}-{version}")))
        .find(|p| p.is_dir())
}
