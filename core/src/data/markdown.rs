//! The Markdown export: what a person reads — threads with their messages, tasks with their
//! dependencies and summaries, observations, working memory, long-term memories — rendered
//! from the same rows as the JSON export, one section per part.

use super::scope::Scope;
use serde_json::Value as Json;

fn s<'a>(row: &'a Json, key: &str) -> &'a str {
    row[key].as_str().unwrap_or("")
}

/// Text kept on one line (a title, a list item's lead).
fn line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Text as a Markdown block quote, every line kept.
fn quote(text: &str) -> String {
    text.lines()
        .map(|l| format!("> {l}\n"))
        .collect::<String>()
        .replace(">  \n", ">\n")
}

fn rows<'a>(tables: &'a [(&'static str, Vec<Json>)], name: &str) -> &'a [Json] {
    tables
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, r)| r.as_slice())
        .unwrap_or(&[])
}

/// The parts of the Markdown export, in order; concatenated they are `mem_export`'s text.
pub(crate) fn render(scope: &Scope, tables: &[(&'static str, Vec<Json>)]) -> Vec<String> {
    let mut parts = Vec::new();
    let what = match scope {
        Scope::All => "everything".to_owned(),
        Scope::Thread(t) => format!("thread `{t}`"),
        Scope::Resource(r) => format!("resource `{r}`"),
    };
    parts.push(format!("# agentmem export: {what}\n"));

    let messages = rows(tables, "mem_messages");
    for t in rows(tables, "mem_threads") {
        let id = s(t, "id");
        let title = match s(t, "title") {
            "" => id.to_owned(),
            title => line(title),
        };
        let mut p = format!(
            "\n## Thread: {title}\n\n`{id}` · resource `{}` · {}",
            s(t, "resource_id"),
            s(t, "state")
        );
        if !s(t, "agent_id").is_empty() {
            p.push_str(&format!(" · agent `{}`", s(t, "agent_id")));
        }
        p.push('\n');
        for m in messages.iter().filter(|m| s(m, "thread_id") == id) {
            p.push_str(&format!(
                "\n**{} {}** ({} UTC)\n\n{}",
                m["message_index"],
                s(m, "role"),
                crate::time::stamp(m["created_at"].as_i64().unwrap_or(0)),
                quote(s(m, "raw_content"))
            ));
            if m["compaction_level"].as_i64().unwrap_or(0) > 0 && !s(m, "summary").is_empty() {
                p.push_str(&format!("\nSummary: {}\n", line(s(m, "summary"))));
            }
        }
        parts.push(p);
    }

    let tasks = rows(tables, "mem_tasks");
    if !tasks.is_empty() {
        let deps = rows(tables, "mem_task_deps");
        let mut p = "\n## Tasks\n\n".to_owned();
        for t in tasks {
            let id = s(t, "id");
            p.push_str(&format!(
                "- **{}** (`{id}`, {}, P{})",
                line(s(t, "title")),
                s(t, "status"),
                t["priority"]
            ));
            let on: Vec<String> = deps
                .iter()
                .filter(|d| s(d, "task_id") == id)
                .map(|d| format!("`{}` ({})", s(d, "depends_on_id"), s(d, "type")))
                .collect();
            if !on.is_empty() {
                p.push_str(&format!(" — depends on {}", on.join(", ")));
            }
            p.push('\n');
            for key in ["description", "summary"] {
                if !s(t, key).is_empty() {
                    p.push_str(&format!("  - {key}: {}\n", line(s(t, key))));
                }
            }
        }
        parts.push(p);
    }

    let records: Vec<&Json> = rows(tables, "mem_om_records")
        .iter()
        .filter(|r| r["is_active"].as_i64() == Some(1) && !s(r, "active_observations").is_empty())
        .collect();
    if !records.is_empty() {
        let mut p = "\n## Observations\n".to_owned();
        for r in records {
            p.push_str(&format!(
                "\n### {}\n\n{}",
                s(r, "lookup_key"),
                quote(s(r, "active_observations"))
            ));
        }
        parts.push(p);
    }

    let wm = rows(tables, "mem_working_memory");
    if !wm.is_empty() {
        let mut p = "\n## Working memory\n".to_owned();
        for w in wm {
            p.push_str(&format!(
                "\n### {}\n\n{}",
                s(w, "scope_key"),
                quote(s(w, "content"))
            ));
        }
        parts.push(p);
    }

    let memories = rows(tables, "mem_memories");
    if !memories.is_empty() {
        let mut p = "\n## Long-term memories\n\n".to_owned();
        for m in memories {
            let mut flags = vec![
                s(m, "scope").to_owned(),
                format!("confidence {}", m["confidence"]),
            ];
            if m["deprecated"].as_i64() == Some(1) {
                flags.push("deprecated".into());
            }
            p.push_str(&format!(
                "- **{}** ({}): {}\n",
                s(m, "type"),
                flags.join(", "),
                line(s(m, "content"))
            ));
        }
        parts.push(p);
    }

    let nodes = rows(tables, "mem_graph_nodes").len();
    let edges = rows(tables, "mem_graph_edges").len();
    if nodes + edges > 0 {
        parts.push(format!(
            "\n## Knowledge graph\n\n{nodes} nodes, {edges} edges (in the JSON export).\n"
        ));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn threads_and_tasks_are_rendered_in_order() {
        let tables = vec![
            (
                "mem_threads",
                vec![
                    json!({"id":"t1","title":"Login\nwork","resource_id":"r","state":"archived","agent_id":null}),
                ],
            ),
            (
                "mem_messages",
                vec![
                    json!({"thread_id":"t1","message_index":0,"role":"user","created_at":5,"raw_content":"hi\nthere","compaction_level":0}),
                ],
            ),
            (
                "mem_tasks",
                vec![
                    json!({"id":"a","title":"Fix","status":"open","priority":1,"summary":"done soon"}),
                ],
            ),
            (
                "mem_task_deps",
                vec![json!({"task_id":"a","depends_on_id":"b","type":"blocks"})],
            ),
        ];
        let md = render(&Scope::Resource("r".into()), &tables).concat();
        assert_eq!(
            md,
            "# agentmem export: resource `r`\n\n## Thread: Login work\n\n`t1` · resource `r` · archived\n\n**0 user** (1970-01-01 00:00 UTC)\n\n> hi\n> there\n\n## Tasks\n\n- **Fix** (`a`, open, P1) — depends on `b` (blocks)\n  - summary: done soon\n"
        );
    }
}
