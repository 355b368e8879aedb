//! Cancellation of long work.
//!
//! The engine's loops run in Rust, where neither `sqlite3_interrupt`, a SQLite progress
//! handler, nor Postgres' `statement_timeout` can reach them. So every loop whose length
//! depends on the data counts its work with a [`Ticker`], and every [`Ticker::EVERY`] units it
//! asks the host ([`crate::Conn::check_interrupt`], or a page source's) whether the call was
//! cancelled; a cancelled call ends with the host's error, and its statement rolls back.

use crate::Result;

/// Counts work; says when to ask the host about cancellation.
#[derive(Clone, Debug, Default)]
pub(crate) struct Ticker {
    n: u32,
}

impl Ticker {
    /// Units of work between two questions: about 50–200 µs of work, so a cancel takes effect
    /// within a millisecond and asking costs under 2 % of the work.
    pub(crate) const EVERY: u32 = 2048;

    pub(crate) fn new() -> Self {
        Ticker::default()
    }

    /// One unit of work done; `ask` is called when it is time.
    #[inline]
    pub(crate) fn tick(&mut self, ask: impl FnOnce() -> Result<()>) -> Result<()> {
        self.n = self.n.wrapping_add(1);
        if self.n % Self::EVERY == 0 {
            ask()
        } else {
            Ok(())
        }
    }

    /// `n` units of work done at once.
    pub(crate) fn ticks(&mut self, n: usize, ask: impl FnOnce() -> Result<()>) -> Result<()> {
        let before = self.n / Self::EVERY;
        self.n = self.n.wrapping_add(n.min(u32::MAX as usize) as u32);
        if self.n / Self::EVERY != before {
            ask()
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_every_so_often() {
        let mut asked = 0;
        let mut t = Ticker::new();
        for _ in 0..Ticker::EVERY * 3 {
            t.tick(|| {
                asked += 1;
                Ok(())
            })
            .unwrap();
        }
        t.ticks(Ticker::EVERY as usize * 2, || {
            asked += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(asked, 4);
    }

    #[test]
    fn a_cancel_ends_the_work() {
        let mut t = Ticker::new();
        let r: Result<()> = (0..1_000_000)
            .try_for_each(|_| t.tick(|| Err(crate::Error::Database("interrupted".into()))));
        assert_eq!(r.unwrap_err().to_string(), "interrupted");
    }
}
