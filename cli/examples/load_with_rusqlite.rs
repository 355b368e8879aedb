//! The README's Rust example, verbatim (`cli/tests/cli.rs` checks it is).

fn main() -> rusqlite::Result<()> {
    let conn = rusqlite::Connection::open("memory.db")?;
    // SAFETY: loading a library runs its code; this one is agentmem's.
    unsafe {
        conn.load_extension_enable()?;
        conn.load_extension("dist/agentmem0", None::<&str>)?;
        conn.load_extension_disable()?;
    }
    let version: i64 = conn.query_row("SELECT mem_init()", [], |r| r.get(0))?;
    println!("agentmem schema version {version}");
    Ok(())
}
