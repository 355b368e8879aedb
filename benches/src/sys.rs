//! What the operating system says about this process's I/O, and emptying its page cache.

/// Bytes this process asked the kernel to read and to write so far (`rchar`, `wchar` of
/// /proc/self/io: every read and write call, served from the page cache or not). SQLite
/// reads and writes its files this way, so the deltas are the bytes an engine moved.
pub fn io() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("rchar:"), field("wchar:"))
}

/// Writes dirty pages and drops the kernel's page cache; false when not permitted (then a
/// "cold" measurement is cold for the engine's own caches only).
pub fn drop_os_caches() -> bool {
    // SAFETY: sync(2) has no preconditions.
    unsafe { libc_sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3").is_ok()
}

extern "C" {
    #[link_name = "sync"]
    fn libc_sync();
}
