//! Task memory: the SQLite functions.

use crate::{functions::Scalar, table::TableFn};

pub const SCALARS: &[Scalar] = &[];

pub const TABLE_FNS: &[TableFn] = &[];
