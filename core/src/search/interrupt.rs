//! Cancellation of long work.
//!
//! The engine's loops run in Rust, where neither `sqlite3_interrupt`, a SQLite progress
//! handler, nor Postgres' `statement_timeout` can reach them. So every loop whose length
//! depends on the data calls [`Ticker::tick`] once per unit of work, and every
//! [`Ticker::EVERY`] units the ticker asks the host ([`crate::Conn::check_interrupt`]) whether
//! the call was cancelled; a cancelled call ends with the host's error, and the statement it
//! belongs to rolls back.

use crate::Result;

/// Counts work and asks the host about cancellation now and then.
pub struct Ticker<'a> {
    check: &'a mut dyn FnMut() -> Result<()>,
    n: u32,
}

impl<'a> Ticker<'a> {
    /// Units of work between two questions: about 50–200 µs of work, so a cancel takes effect
    /// within a millisecond and asking costs under 2 % of the work.
    pub const EVERY: u32 = 2048;

    pub fn new(check: &'a mut dyn FnMut() -> Result<()>) -> Self {
        Ticker { check, n: 0 }
    }

    /// One unit of work done.
    #[inline]
    pub fn tick(&mut self) -> Result<()> {
        self.n = self.n.wrapping_add(1);
        if self.n % Self::EVERY == 0 {
            (self.check)()
        } else {
            Ok(())
        }
    }

    /// `n` units of work done at once.
    pub fn ticks(&mut self, n: usize) -> Result<()> {
        let before = self.n / Self::EVERY;
        self.n = self.n.wrapping_add(n.min(u32::MAX as usize) as u32);
        if self.n / Self::EVERY != before {
            (self.check)()
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
        let mut check = || {
            asked += 1;
            Ok(())
        };
        let mut t = Ticker::new(&mut check);
        for _ in 0..Ticker::EVERY * 3 {
            t.tick().unwrap();
        }
        t.ticks(Ticker::EVERY as usize * 2).unwrap();
        drop(t);
        assert_eq!(asked, 4);
    }

    #[test]
    fn a_cancel_ends_the_work() {
        let mut check = || Err(crate::Error::Database("interrupted".into()));
        let mut t = Ticker::new(&mut check);
        let r: Result<()> = (0..1_000_000).try_for_each(|_| t.tick());
        assert_eq!(r.unwrap_err().to_string(), "interrupted");
    }
}
