//! The user's data as a whole: what the memory holds ([`stats`]) and how its long-term memory
//! is doing ([`health`]), taking it out and back in
//! ([`export`] of a [`scope`], over the table list in [`tables`], and its [`markdown`] form),
//! and the hard delete of a resource's data ([`forget`]); the layout of every search index
//! ([`indexes`]).

pub(crate) mod export;
pub(crate) mod forget;
pub(crate) mod health;
pub(crate) mod distribute;
pub(crate) mod indexes;
pub(crate) mod markdown;
pub(crate) mod scope;
pub(crate) mod stats;
internal!(tables);
