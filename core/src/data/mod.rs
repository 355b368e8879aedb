//! The user's data as a whole: what the memory holds ([`stats`]) and the hard delete of a
//! resource's data ([`forget`]).

pub mod forget;
pub mod stats;
