//! The user's data as a whole: what the memory holds ([`stats`]), taking it out and back in
//! ([`export`], over the table list in [`tables`], and its [`markdown`] form), and the hard
//! delete of a resource's data ([`forget`]).

pub mod export;
pub mod forget;
pub mod markdown;
pub mod stats;
pub mod tables;
