//! What the CLI prints: aligned tables for people, JSON for scripts.

use crate::db::Table;
use serde_json::{Map, Value as Json};
use std::io::Write;

/// How results are printed.
#[derive(Clone, Copy)]
pub struct Style {
    /// JSON (one document per command) instead of tables.
    pub json: bool,
    /// Cells are cut to this many characters in tables (0: never).
    pub width: usize,
}

/// A table function's rows: the `columns` people read, aligned, or — for scripts — a JSON
/// array of objects with every column.
pub fn table(style: Style, t: &Table, columns: &[&str]) -> String {
    if style.json {
        let rows: Vec<Json> = t
            .rows
            .iter()
            .map(|r| {
                let o: Map<String, Json> = t
                    .columns
                    .iter()
                    .zip(r)
                    .map(|(name, v)| (name.to_string(), v.clone()))
                    .collect();
                Json::Object(o)
            })
            .collect();
        return format!("{:#}\n", Json::Array(rows));
    }
    let picked: Vec<usize> = columns
        .iter()
        .filter_map(|c| t.columns.iter().position(|n| n == c))
        .collect();
    let header: Vec<String> = picked.iter().map(|&i| t.columns[i].to_string()).collect();
    let cells: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| {
            picked
                .iter()
                .map(|&i| cell(t.columns[i], &r[i], style.width))
                .collect()
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in &cells {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c}{}", " ".repeat(w - c.chars().count())))
            .collect();
        format!("{}\n", padded.join("  ").trim_end())
    };
    let mut out = line(&header);
    let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    out.push_str(&line(&rule));
    for r in &cells {
        out.push_str(&line(r));
    }
    out.push_str(&format!(
        "({} row{})\n",
        cells.len(),
        if cells.len() == 1 { "" } else { "s" }
    ));
    out
}

/// A JSON answer: pretty-printed for people, compact (one line) for scripts.
pub fn json(style: Style, v: &Json) -> String {
    if style.json {
        format!("{v}\n")
    } else {
        format!("{v:#}\n")
    }
}

/// One cell as text: times as UTC dates, line breaks shown, long text cut.
fn cell(column: &str, v: &Json, width: usize) -> String {
    let s = match v {
        Json::Null => String::new(),
        Json::String(s) => s.clone(),
        Json::Number(n) if column.ends_with("_at") => match n.as_i64() {
            Some(ms) => utc(ms),
            None => n.to_string(),
        },
        Json::Number(n) => match n.as_f64() {
            Some(f) if !n.is_i64() && !n.is_u64() => format!("{f:.4}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    };
    let s = s.replace('\n', "⏎").replace('\t', " ");
    if width > 0 && s.chars().count() > width {
        let cut: String = s.chars().take(width.saturating_sub(1)).collect();
        format!("{cut}…")
    } else {
        s
    }
}

/// Epoch milliseconds as `YYYY-MM-DD HH:MM:SS` UTC (the core's calendar, seconds added).
pub fn utc(ms: i64) -> String {
    let (y, mo, d, h, mi) = agentmem_core::time::parts(ms);
    format!(
        "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{:02}",
        ms.div_euclid(1000).rem_euclid(60)
    )
}

/// Writes to standard output; a closed pipe (`agentmem … | head`) ends quietly.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        std::process::exit(0);
    }
}

#[cfg(test)]
mod tests {
    use super::utc;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00");
        assert_eq!(utc(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(utc(1_700_000_000_000), "2023-11-14 22:13:20");
        assert_eq!(utc(-1), "1969-12-31 23:59:59");
    }
}
