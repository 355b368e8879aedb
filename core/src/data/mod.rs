//! The user's data as a whole: what the memory holds ([`stats`]), taking it out and back in
//! ([`export`] of a [`scope`], over the table list in [`tables`], and its [`markdown`] form),
//! and the hard delete of a resource's data ([`forget`]).

pub mod export;
pub mod forget;
pub mod markdown;
pub mod scope;
pub mod stats;
pub mod tables;
