//! Whether the running call is a reader's (a `STABLE` function's): its statements then run
//! read-only, and nothing is written without them.

use std::cell::Cell;

thread_local! {
    /// Set while a reader's call runs (see [`reading`]).
    static READING: Cell<bool> = const { Cell::new(false) };
}

/// Whether a reader's call is running (see [`reading`]).
pub fn in_reader() -> bool {
    READING.with(Cell::get)
}

/// Marks the statements run until the guard drops as a reader's (a `STABLE` function's): they
/// run read-only. The previous state comes back on drop, on an error too.
pub fn reading(reader: bool) -> impl Drop {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            READING.with(|r| r.set(self.0));
        }
    }
    Restore(READING.with(|r| r.replace(reader)))
}
