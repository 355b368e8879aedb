//! The user's data as a whole: statistics, export and import, forget.

use super::{functions, Function, Nullable};
use crate::data::export::{self, ExportPart};
use crate::data::{forget, health, stats};

pub(super) const FUNCTIONS: &[Function] = functions! {
    mem_stats(options: Option<&str>) -> Json, reader => stats::stats;
    mem_health(resource_id: &str, options: Option<&str>) -> Json, reader, by_resource
        => health::health;
    mem_export(scope: Nullable<&str>, format: Option<&str>) -> Text, reader => export::export;
    mem_export_rows(scope: Nullable<&str>, format: Option<&str>) -> Table<ExportPart>, reader
        => export::export_rows;
    mem_import(json: &str) -> Json, writer => export::import;
    mem_forget(resource_id: &str) -> Json, writer => forget::forget;
};
