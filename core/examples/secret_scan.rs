//! Runs the secret scanner over JSON lines: reads `{"text": …}` per line on stdin (another
//! field with `secret_scan FIELD`, e.g. `content` for the benchmark corpus) and writes
//! `{"findings": [{"kind", "start", "end"}]}` per line on stdout, byte offsets into the text.
//! Driven by benches/secrets/secret_bench.py.

use agentmem_core::memories::secrets;
use serde_json::{json, Value};
use std::io::{BufRead, BufWriter, Write};

fn main() -> std::io::Result<()> {
    let field = std::env::args().nth(1).unwrap_or_else(|| "text".into());
    let mut out = BufWriter::new(std::io::stdout().lock());
    for line in std::io::stdin().lock().lines() {
        let v: Value = serde_json::from_str(&line?).expect("one JSON object per line");
        let text = v[field.as_str()].as_str().unwrap_or_default();
        let findings: Vec<Value> = secrets::scan(text)
            .into_iter()
            .map(|f| json!({"kind": f.kind, "start": f.start, "end": f.end}))
            .collect();
        writeln!(out, "{}", json!({ "findings": findings }))?;
    }
    out.flush()
}
