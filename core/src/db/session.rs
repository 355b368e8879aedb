//! What one connection keeps between the statements of a call, and from call to call: the
//! documents its transaction holds back from the index, the keys it stored this transaction,
//! the message a call prepared for the insert trigger it is about to fire, a bulk load in
//! progress.
//!
//! Each adapter owns one session per connection and hands it out as [`Conn::session`]
//! (SQLite: allocated with the connection's functions and freed with them; Postgres: one per
//! backend), and tells it when the transaction ends or moves between savepoints. Each piece of
//! state belongs to the module that uses it, as a [`Part`] stored under its own type, so this
//! module names none of them and every module below the domains can own one.
//!
//! [`Conn::session`]: super::conn::Conn::session

use std::any::{Any, TypeId};
use std::collections::HashMap;

/// A piece of per-connection state, and what becomes of it when the transaction ends or
/// moves between savepoints (nothing, unless it says otherwise).
pub trait Part: Any {
    /// The transaction committed.
    fn commit(&mut self) {}
    /// The transaction rolled back.
    fn rollback(&mut self) {}
    /// Savepoint `id` began (ids grow with nesting; one that begins again ends those after
    /// it).
    fn savepoint(&mut self, _id: u64) {}
    /// Savepoint `id` (and those nested in it) ended, keeping what it did.
    fn release(&mut self, _id: u64) {}
    /// The transaction rolled back to where savepoint `id` began; it stays open.
    fn rollback_to(&mut self, _id: u64) {}
}

/// One connection's state: its parts, by type.
#[derive(Default)]
pub struct Session {
    parts: HashMap<TypeId, Box<dyn Part>>,
}

impl Session {
    /// The part of type `T`, made empty when the connection has none yet.
    pub fn part<T: Part + Default>(&mut self) -> &mut T {
        let part = self
            .parts
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Box::new(T::default()));
        let any: &mut dyn Any = part.as_mut();
        any.downcast_mut::<T>()
            .expect("a part is stored under its own type")
    }

    fn each(&mut self, f: impl Fn(&mut dyn Part)) {
        for part in self.parts.values_mut() {
            f(part.as_mut());
        }
    }

    /// The transaction committed: every part hears it.
    pub fn commit(&mut self) {
        self.each(|p| p.commit());
    }

    /// The transaction rolled back.
    pub fn rollback(&mut self) {
        self.each(|p| p.rollback());
    }

    /// Savepoint `id` began.
    pub fn savepoint(&mut self, id: u64) {
        self.each(|p| p.savepoint(id));
    }

    /// Savepoint `id` ended, keeping what it did.
    pub fn release(&mut self, id: u64) {
        self.each(|p| p.release(id));
    }

    /// The transaction rolled back to savepoint `id`.
    pub fn rollback_to(&mut self, id: u64) {
        self.each(|p| p.rollback_to(id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Counter(u32);

    impl Part for Counter {
        fn rollback(&mut self) {
            self.0 = 0;
        }
    }

    #[test]
    fn parts_are_kept_by_type_and_hear_the_transaction() {
        let mut s = Session::default();
        s.part::<Counter>().0 += 2;
        s.part::<Counter>().0 += 1;
        assert_eq!(s.part::<Counter>().0, 3);
        s.commit();
        assert_eq!(s.part::<Counter>().0, 3);
        s.rollback();
        assert_eq!(s.part::<Counter>().0, 0);
    }
}
