//! A random database of several resources written through the public functions — threads
//! with messages and compactions, tasks (one shared between resources), memories with
//! vectors, a small graph, working memory and observational records — each resource's rows
//! carrying a word only it uses. The forget and export tests start from it.

use crate::backend::{Backend, Param};
use crate::Rng;
use std::collections::BTreeMap;

pub const RESOURCES: &[&str] = &["ra", "rb", "rc"];

/// A word only resource `r` uses.
pub fn secret(r: &str) -> String {
    format!("xylo{r}quartz")
}

/// A text parameter.
pub fn text(p: &str) -> Param {
    Param::Text(p.to_owned())
}

/// The first cell of the first row, as text.
pub fn one(db: &mut dyn Backend, sql: &str, params: &[Param]) -> String {
    db.query(sql, params).unwrap()[0][0].to_string()
}

/// What the generator wrote for one resource, counted per table.
#[derive(Default, Debug)]
pub struct Written {
    pub rows: BTreeMap<&'static str, i64>,
}

impl Written {
    fn add(&mut self, table: &'static str, n: i64) {
        *self.rows.entry(table).or_default() += n;
    }
}

/// Threads with messages (some compacted), a task of its own and one shared with the next
/// resource, memories with a vector, a small graph, working memory and an observational
/// record — each carrying the resource's secret word somewhere.
pub fn populate(db: &mut dyn Backend, rng: &mut Rng) -> BTreeMap<&'static str, Written> {
    let mut out = BTreeMap::new();
    let mut first_messages = Vec::new();
    for (ri, r) in RESOURCES.iter().enumerate() {
        let w: &mut Written = out.entry(*r).or_default();
        let s = secret(r);
        let threads = 2 + rng.next() % 3;
        let mut message_ids = Vec::new();
        for t in 0..threads {
            let tid = format!("{r}-t{t}");
            db.query(
                "SELECT mem_thread_create($1, $2, NULL, $3)",
                &[
                    text(r),
                    text(&format!("thread {t}")),
                    text(&format!(r#"{{"id":"{tid}"}}"#)),
                ],
            )
            .unwrap();
            w.add("mem_threads", 1);
            let n = 3 + rng.next() % 12;
            for m in 0..n {
                let mid = format!("{tid}-m{m}");
                let content = if rng.chance(30) {
                    format!("the {s} cache failed again at step {m}")
                } else {
                    format!("shared words about login and cache {m}")
                };
                db.query(
                    "SELECT mem_message_add($1, 'user', $2, $3)",
                    &[
                        text(&tid),
                        text(&content),
                        text(&format!(r#"{{"id":"{mid}"}}"#)),
                    ],
                )
                .unwrap();
                message_ids.push(mid);
                w.add("mem_messages", 1);
            }
            if rng.chance(50) {
                db.query(
                    "SELECT mem_compact($1, 0, 1, $2)",
                    &[text(&tid), text(&format!("summary with {s}"))],
                )
                .unwrap();
                w.add("mem_compactions", 1);
            }
            db.query(
                "SELECT wm_set($1, $2)",
                &[text(&format!("thread:{tid}")), text(&format!("notes {s}"))],
            )
            .unwrap();
            w.add("mem_working_memory", 1);
        }
        db.query(
            "SELECT wm_set($1, $2)",
            &[
                text(&format!("resource:{r}")),
                text(&format!("profile {s}")),
            ],
        )
        .unwrap();
        w.add("mem_working_memory", 1);
        db.query(
            "SELECT om_configure($1, '{\"observation_threshold\":100}')",
            &[text(&format!("thread:{r}-t0"))],
        )
        .unwrap();
        w.add("mem_om_records", 1);

        // Its own task, linked to two of its messages; a task shared with the previous
        // resource (it must survive, without the links to the forgotten messages).
        let task = format!("task-{r}");
        db.query(
            "SELECT task_create($1, $2)",
            &[
                text(&format!("fix the {s} bug")),
                text(&format!(r#"{{"id":"{task}"}}"#)),
            ],
        )
        .unwrap();
        w.add("mem_tasks", 1);
        for mid in message_ids.iter().take(2) {
            db.query("SELECT task_link($1, $2)", &[text(&task), text(mid)])
                .unwrap();
            w.add("mem_task_messages", 1);
        }
        if ri > 0 {
            let shared = format!("task-shared-{r}");
            db.query(
                "SELECT task_create('shared work', $1)",
                &[text(&format!(r#"{{"id":"{shared}"}}"#))],
            )
            .unwrap();
            for mid in [&first_messages[ri - 1], &message_ids[0]] {
                db.query("SELECT task_link($1, $2)", &[text(&shared), text(mid)])
                    .unwrap();
            }
            out.get_mut(RESOURCES[ri - 1])
                .unwrap()
                .add("mem_task_messages", 1);
            out.get_mut(r).unwrap().add("mem_task_messages", 1);
        }
        if ri > 0 {
            db.query(
                "SELECT task_dep_add($1, $2)",
                &[text(&task), text(&format!("task-shared-{r}"))],
            )
            .unwrap();
        }
        // The last thread is archived: it keeps its messages and stays searchable.
        db.query(
            "SELECT mem_thread_archive($1)",
            &[text(&format!("{r}-t{}", threads - 1))],
        )
        .unwrap();
        first_messages.push(message_ids[0].clone());
        let w = out.get_mut(r).unwrap();

        // Memories, one with a vector; a message with a vector.
        for k in 0..3 {
            let memory = format!(
                r#"{{"type":"gotcha","content":"remember {s} number {k} before deploying"}}"#
            );
            let id = one(
                db,
                "SELECT mem_remember($1, $2) ->> 'id'",
                &[text(r), text(&memory)],
            );
            w.add("mem_memories", 1);
            if k == 0 {
                db.query(
                    "SELECT mem_embed_set('memory', $1, 'm', mem_vector('[0.1, 0.2, 0.3]'))",
                    &[text(&id)],
                )
                .unwrap();
                w.add("mem_embeddings", 1);
            }
        }
        db.query(
            "SELECT mem_embed_set('message', $1, 'm', mem_vector('[0.3, 0.2, 0.1]'))",
            &[text(&message_ids[1])],
        )
        .unwrap();
        w.add("mem_embeddings", 1);

        // A chain of files: edges and their closure.
        let mut nodes = Vec::new();
        for f in 0..4 {
            let node =
                format!(r#"{{"type":"file","label":"{s}{f}.ts","file_path":"src/{s}{f}.ts"}}"#);
            nodes.push(one(
                db,
                "SELECT graph_node_upsert($1, $2)",
                &[text(r), text(&node)],
            ));
            w.add("mem_graph_nodes", 1);
        }
        for pair in nodes.windows(2) {
            db.query(
                "SELECT graph_edge_add($1, $2, 'imports')",
                &[text(&pair[0]), text(&pair[1])],
            )
            .unwrap();
            w.add("mem_graph_edges", 1);
        }
    }
    out
}
