//! Every row trigger agentmem keeps, declared once, with its handler. The rules the handlers
//! apply live in their domains; a handler only reads the firing and calls them.

use super::trigger::{Event, Fired, Hosts, Timing, Trigger};
use crate::db::session::Part;
use crate::graph::chunks;
use crate::graph::upkeep::{self, OldEdge};
use crate::items;
use crate::memories::{self, OldMemory};
use crate::om::search as om_search;
use crate::tasks::graph::{self as tasks, DepRow, TaskRow};
use crate::threads;
use crate::threads::messages::{self, Booked, Changed, Draft, Inserted};
use crate::vectors::store as vectors;
use crate::{Conn, Result, Value};

use Event::{Delete, Insert, Update};

/// A trigger with the defaults most share: on both databases, every column, no condition.
const fn trigger(
    name: &'static str,
    table: &'static str,
    timing: Timing,
    events: &'static [Event],
    run: fn(&mut dyn Conn, &mut Fired) -> Result<()>,
) -> Trigger {
    Trigger {
        name,
        function: name,
        table,
        timing,
        events,
        update_of: &[],
        when: None,
        postgres_when: None,
        new: &[],
        old: &[],
        hosts: Hosts::Both,
        sqlite_body: None,
        generic_plans: false,
        since: 0,
        run,
    }
}

/// A trigger of the knowledge graph: its lookups by key keep generic plans.
const fn graph_trigger(
    name: &'static str,
    table: &'static str,
    events: &'static [Event],
    run: fn(&mut dyn Conn, &mut Fired) -> Result<()>,
) -> Trigger {
    Trigger {
        generic_plans: true,
        ..trigger(name, table, Timing::After, events, run)
    }
}

/// The schema version that created the code graph's chunks.
const CODE_SCHEMA: i64 = 22;

/// The schema version that created the item store, and the triggers that keep observations'
/// search documents.
const ITEMS_SCHEMA: i64 = 25;

/// The columns of an observational record its search document is made of.
const OM_INDEXED: &[&str] = &[
    "seq",
    "is_active",
    "active_observations",
    "updated_at",
    "resource_id",
];

/// The deferred trigger that writes what a transaction holds (Postgres).
const HELD: &str = "mem__message_held_trg";

/// The statement trigger that books the rows an insert wrote (Postgres).
const BOOKED: &str = "mem__messages_booked_trg";

/// The columns of the inserted rows the statement's end reads.
const INSERTED: &[&str] = &[
    "seq",
    "id",
    "thread_id",
    "message_index",
    "token_count",
    "created_at",
    "search_text",
    "raw_content",
    "resource_id",
];

/// Rows booked at a time at a statement's end.
const BOOKED_PER_PAGE: usize = 1024;

pub const TRIGGERS: &[Trigger] = &[
    // Messages: a new row is completed (ids, index, token count) and booked on its thread;
    // SQLite's trigger writes the row's key to a table whose transaction hooks run the handler
    // (and write held documents before the commit).
    Trigger {
        new: &["seq", "id"],
        sqlite_body: Some("INSERT INTO mem__message_inserted (seq, id) VALUES (NEW.seq, NEW.id)"),
        postgres_when: Some("NOT mem__adding(NEW.id)"),
        ..trigger(
            "mem__message_insert",
            "mem_messages",
            Timing::Completing,
            &[Insert],
            message_insert,
        )
    },
    // SQLite: the rows an `INSERT OR REPLACE` may remove, seen before the insert; not looked
    // for under a row `mem_message_add` booked, whose plain insert replaces none.
    Trigger {
        when: Some(
            "NOT mem__adding_booked(NEW.id) AND EXISTS (SELECT 1 FROM mem_messages \
             WHERE seq = NEW.seq OR id = NEW.id \
             OR (thread_id = NEW.thread_id AND message_index = NEW.message_index))",
        ),
        new: &["seq", "id", "thread_id", "message_index"],
        hosts: Hosts::Sqlite,
        ..trigger(
            "mem__message_conflicts",
            "mem_messages",
            Timing::Before,
            &[Insert],
            message_conflicts,
        )
    },
    Trigger {
        update_of: &["raw_content", "search_text", "created_at"],
        when: Some(
            "OLD.token_count IS NOT NULL AND (NEW.raw_content IS DISTINCT FROM OLD.raw_content \
             OR NEW.search_text IS DISTINCT FROM OLD.search_text \
             OR NEW.created_at IS DISTINCT FROM OLD.created_at)",
        ),
        new: &["seq"],
        old: &["token_count", "raw_content", "search_text", "created_at"],
        ..trigger(
            "mem__message_update",
            "mem_messages",
            Timing::Completing,
            &[Update],
            message_update,
        )
    },
    Trigger {
        old: &[
            "seq",
            "thread_id",
            "token_count",
            "search_text",
            "raw_content",
            "resource_id",
        ],
        ..trigger(
            "mem__message_delete",
            "mem_messages",
            Timing::After,
            &[Delete],
            message_delete,
        )
    },
    Trigger {
        name: "mem__messages_booked",
        new: INSERTED,
        hosts: Hosts::Postgres,
        ..trigger(
            "mem__messages_booked",
            "mem_messages",
            Timing::StatementEnd,
            &[Insert],
            messages_booked,
        )
    },
    Trigger {
        hosts: Hosts::Postgres,
        ..trigger(
            "mem__message_held",
            "mem_messages",
            Timing::AtCommit,
            &[Insert],
            message_held,
        )
    },
    // SQLite: a thread inserted over messages it already has (a restore) counts them.
    Trigger {
        when: Some("EXISTS (SELECT 1 FROM mem_messages WHERE thread_id = NEW.id)"),
        new: &["id"],
        hosts: Hosts::Sqlite,
        ..trigger(
            "mem__thread_recount",
            "mem_threads",
            Timing::After,
            &[Insert],
            thread_recount,
        )
    },
    // Tasks: the blocked state and the search document follow the rows.
    Trigger {
        new: &["seq"],
        ..trigger(
            "mem__task_insert",
            "mem_tasks",
            Timing::Completing,
            &[Insert],
            task_insert,
        )
    },
    Trigger {
        update_of: &["status"],
        when: Some(
            "(OLD.status = 'closed') <> (NEW.status = 'closed') \
             AND NEW.status IS DISTINCT FROM OLD.status",
        ),
        new: &["seq"],
        ..trigger(
            "mem__task_status",
            "mem_tasks",
            Timing::Completing,
            &[Update],
            task_status,
        )
    },
    // Postgres: the dependents see the new status once it is written (SQLite's completing
    // trigger runs after the write and does it itself).
    Trigger {
        update_of: &["status"],
        when: Some("(OLD.status = 'closed') <> (NEW.status = 'closed')"),
        new: &["id"],
        hosts: Hosts::Postgres,
        ..trigger(
            "mem__task_status_after",
            "mem_tasks",
            Timing::After,
            &[Update],
            task_status_after,
        )
    },
    Trigger {
        update_of: &["title", "description", "summary"],
        when: Some(
            "NEW.title IS DISTINCT FROM OLD.title \
             OR NEW.description IS DISTINCT FROM OLD.description \
             OR NEW.summary IS DISTINCT FROM OLD.summary",
        ),
        new: &["seq"],
        old: &["title", "description", "summary"],
        ..trigger(
            "mem__task_text",
            "mem_tasks",
            Timing::Completing,
            &[Update],
            task_text,
        )
    },
    Trigger {
        update_of: &["id"],
        when: Some("NEW.id IS DISTINCT FROM OLD.id"),
        ..trigger(
            "mem__task_id_change",
            "mem_tasks",
            Timing::Completing,
            &[Update],
            |_, _| tasks::on_task_id_change(),
        )
    },
    Trigger {
        old: &[
            "seq",
            "id",
            "title",
            "description",
            "summary",
            "resource_id",
        ],
        ..trigger(
            "mem__task_delete",
            "mem_tasks",
            Timing::After,
            &[Delete],
            task_delete,
        )
    },
    Trigger {
        new: &["seq"],
        ..trigger(
            "mem__task_dep_insert",
            "mem_task_deps",
            Timing::After,
            &[Insert],
            task_dep_insert,
        )
    },
    Trigger {
        update_of: &["task_id", "depends_on_id", "type"],
        when: Some(
            "NEW.task_id IS DISTINCT FROM OLD.task_id \
             OR NEW.depends_on_id IS DISTINCT FROM OLD.depends_on_id \
             OR NEW.type IS DISTINCT FROM OLD.type",
        ),
        ..trigger(
            "mem__task_dep_update",
            "mem_task_deps",
            Timing::Completing,
            &[Update],
            |_, _| tasks::on_dep_update(),
        )
    },
    Trigger {
        old: &["task_id"],
        ..trigger(
            "mem__task_dep_delete",
            "mem_task_deps",
            Timing::After,
            &[Delete],
            task_dep_delete,
        )
    },
    // The knowledge graph: every change of an edge reaches the closure.
    Trigger {
        new: &["seq"],
        ..graph_trigger(
            "mem__graph_edge_insert",
            "mem_graph_edges",
            &[Insert],
            edge_insert,
        )
    },
    Trigger {
        update_of: &[
            "from_id",
            "to_id",
            "type",
            "weight",
            "stale_at",
            "invalid_at",
            "resource_id",
        ],
        when: Some(
            "OLD.from_id IS DISTINCT FROM NEW.from_id OR OLD.to_id IS DISTINCT FROM NEW.to_id \
             OR OLD.type IS DISTINCT FROM NEW.type OR OLD.weight IS DISTINCT FROM NEW.weight \
             OR OLD.resource_id IS DISTINCT FROM NEW.resource_id \
             OR (OLD.stale_at IS NULL AND OLD.invalid_at IS NULL) \
             IS DISTINCT FROM (NEW.stale_at IS NULL AND NEW.invalid_at IS NULL)",
        ),
        new: &["seq"],
        old: &["from_id", "to_id", "type", "stale_at", "invalid_at"],
        ..graph_trigger(
            "mem__graph_edge_update",
            "mem_graph_edges",
            &[Update],
            edge_update,
        )
    },
    Trigger {
        old: &[
            "resource_id",
            "from_id",
            "to_id",
            "type",
            "stale_at",
            "invalid_at",
        ],
        ..graph_trigger(
            "mem__graph_edge_delete",
            "mem_graph_edges",
            &[Delete],
            edge_delete,
        )
    },
    // Before the node goes, so that its edges' closure upkeep can still look up its key.
    Trigger {
        old: &["id"],
        timing: Timing::Before,
        ..graph_trigger(
            "mem__graph_node_delete",
            "mem_graph_nodes",
            &[Delete],
            node_delete,
        )
    },
    Trigger {
        function: "mem__graph_settings_changed",
        new: &["resource_id"],
        old: &["resource_id"],
        ..graph_trigger(
            "mem__graph_settings",
            "mem_graph_settings",
            &[Insert, Update, Delete],
            settings_changed,
        )
    },
    // Long-term memories: the index, the file index and the secret check follow the rows.
    Trigger {
        new: &["seq"],
        ..trigger(
            "mem__memory_insert",
            "mem_memories",
            Timing::After,
            &[Insert],
            memory_insert,
        )
    },
    Trigger {
        update_of: &["content", "tags", "related_files", "created_at"],
        new: &["seq"],
        old: &["content", "tags", "related_files"],
        ..trigger(
            "mem__memory_update",
            "mem_memories",
            Timing::After,
            &[Update],
            memory_update,
        )
    },
    Trigger {
        old: &["seq", "content", "tags", "related_files", "resource_id"],
        ..trigger(
            "mem__memory_delete",
            "mem_memories",
            Timing::After,
            &[Delete],
            memory_delete,
        )
    },
    Trigger {
        update_of: &[
            "content",
            "tags",
            "related_files",
            "related_modules",
            "session_id",
            "commit_sha",
            "citation_text",
            "relations",
        ],
        new: &["seq"],
        ..trigger(
            "mem__memory_secrets",
            "mem_memories",
            Timing::After,
            &[Insert, Update],
            memory_secrets,
        )
    },
    // Code chunks: the index follows the rows (the table came with schema 22).
    Trigger {
        new: &["seq"],
        since: CODE_SCHEMA,
        ..trigger(
            "mem__code_chunk_insert",
            "mem_code_chunks",
            Timing::After,
            &[Insert],
            code_chunk_insert,
        )
    },
    Trigger {
        update_of: &["content", "created_at"],
        new: &["seq"],
        old: &["content"],
        since: CODE_SCHEMA,
        ..trigger(
            "mem__code_chunk_update",
            "mem_code_chunks",
            Timing::After,
            &[Update],
            code_chunk_update,
        )
    },
    Trigger {
        old: &["seq", "content", "resource_id"],
        since: CODE_SCHEMA,
        ..trigger(
            "mem__code_chunk_delete",
            "mem_code_chunks",
            Timing::After,
            &[Delete],
            code_chunk_delete,
        )
    },
    // Observational records: an active record's observations are a search document.
    Trigger {
        new: OM_INDEXED,
        when: Some("NEW.is_active = 1 AND NEW.active_observations <> ''"),
        since: ITEMS_SCHEMA,
        ..trigger(
            "mem__om_record_insert",
            "mem_om_records",
            Timing::After,
            &[Insert],
            om_record_insert,
        )
    },
    Trigger {
        update_of: &["is_active", "active_observations"],
        when: Some(
            "NEW.is_active IS DISTINCT FROM OLD.is_active \
             OR NEW.active_observations IS DISTINCT FROM OLD.active_observations",
        ),
        new: OM_INDEXED,
        old: OM_INDEXED,
        since: ITEMS_SCHEMA,
        ..trigger(
            "mem__om_record_update",
            "mem_om_records",
            Timing::After,
            &[Update],
            om_record_update,
        )
    },
    Trigger {
        old: OM_INDEXED,
        when: Some("OLD.is_active = 1 AND OLD.active_observations <> ''"),
        since: ITEMS_SCHEMA,
        ..trigger(
            "mem__om_record_delete",
            "mem_om_records",
            Timing::After,
            &[Delete],
            om_record_delete,
        )
    },
    // Items: the index follows the rows (the table came with schema 25).
    Trigger {
        new: &["seq"],
        since: ITEMS_SCHEMA,
        ..trigger(
            "mem__item_insert",
            "mem_items",
            Timing::After,
            &[Insert],
            item_insert,
        )
    },
    Trigger {
        update_of: &["value", "fields", "updated_at"],
        new: &["seq"],
        old: &["value", "fields"],
        since: ITEMS_SCHEMA,
        ..trigger(
            "mem__item_update",
            "mem_items",
            Timing::After,
            &[Update],
            item_update,
        )
    },
    Trigger {
        old: &["seq", "value", "fields", "resource_id"],
        since: ITEMS_SCHEMA,
        ..trigger(
            "mem__item_delete",
            "mem_items",
            Timing::After,
            &[Delete],
            item_delete,
        )
    },
    // Client vectors: the packed chunks follow the rows.
    Trigger {
        new: &["seq"],
        ..trigger(
            "mem__embedding_insert",
            "mem_embeddings",
            Timing::After,
            &[Insert],
            embedding_insert,
        )
    },
    Trigger {
        update_of: &["vector", "dims", "model"],
        new: &["seq"],
        old: &["model", "chunk"],
        ..trigger(
            "mem__embedding_update",
            "mem_embeddings",
            Timing::After,
            &[Update],
            embedding_update,
        )
    },
    Trigger {
        old: &["seq", "model", "chunk"],
        ..trigger(
            "mem__embedding_delete",
            "mem_embeddings",
            Timing::After,
            &[Delete],
            embedding_delete,
        )
    },
    // Postgres: the function of the schema's refusals (`@refuse`, `@derived`), which give it
    // their message as the trigger's argument (SQLite's raise it in the trigger's body).
    Trigger {
        hosts: Hosts::Postgres,
        ..trigger("mem__refuse", "", Timing::Before, &[], refuse)
    },
];

/// The rows an `INSERT OR REPLACE` may remove (SQLite), seen by the before-insert trigger of
/// the row with this id, kept in the session until that row's insert handler runs (or the
/// transaction ends). A stale entry (its insert was ignored) is harmless: settling books
/// nothing for rows still there.
#[derive(Default)]
struct Pending(Option<(String, Vec<Booked>)>);

impl Part for Pending {
    fn commit(&mut self) {
        self.0 = None;
    }

    fn rollback(&mut self) {
        self.0 = None;
    }
}

fn int(v: Value) -> Option<i64> {
    v.as_i64()
}

fn message_conflicts(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let id = f.text(true, "id")?;
    let thread = f.new("thread_id")?.into_string();
    let rows = messages::conflicts(
        conn,
        int(f.new("seq")?),
        Some(&id),
        thread.as_deref(),
        int(f.new("message_index")?),
    )?;
    conn.session().part::<Pending>().0 = Some((id, rows));
    Ok(())
}

fn message_insert(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let hold = f.hold || f.table_has(HELD);
    let (seq, id) = (f.seq()?, f.text(true, "id")?);
    let timing = if f.after_write() {
        // An `INSERT OR REPLACE` removed the rows it conflicted with, without their delete
        // triggers: they come off the books first.
        let replaced = match conn.session().part::<Pending>().0.take() {
            Some((pending, rows)) if pending == id => rows,
            _ => Vec::new(),
        };
        messages::settle_replaced(conn, seq, &replaced)?;
        messages::Timing::AfterWrite
    } else if f.table_has(BOOKED) {
        messages::Timing::BeforeStatementEnd
    } else {
        messages::Timing::BeforeWrite
    };
    if let Some(d) = messages::take_prepared(conn, seq, &id) {
        return messages::index_prepared(conn, &d, timing, hold);
    }
    let d: Draft = f.new_row(conn)?;
    let before = d.clone();
    let d = messages::complete_insert(conn, d, timing, hold)?;
    f.complete(conn, &before, &d)
}

fn message_update(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let d: Draft = f.new_row(conn)?;
    let old_raw = f.text(false, "raw_content")?;
    let old_search = f.old("search_text")?.into_string();
    let changed = Changed {
        raw_content: old_raw != d.raw_content,
        search_text: old_search != d.search_text,
        created_at: int(f.old("created_at")?) != Some(d.created_at),
    };
    let old_tokens = int(f.old("token_count")?);
    let old_indexed = old_search.unwrap_or(old_raw);
    let updated =
        messages::complete_update(conn, changed, old_tokens, Some(&old_indexed), d.clone())?;
    f.complete(conn, &d, &updated)
}

fn message_delete(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let search = f.old("search_text")?.into_string();
    let raw = f.old("raw_content")?.into_string();
    let row = Booked {
        seq: int(f.old("seq")?).unwrap_or(0),
        thread_id: f.text(false, "thread_id")?,
        token_count: int(f.old("token_count")?).unwrap_or(0),
        indexed_text: search.or(raw),
        resource_id: old_resource(f)?,
    };
    messages::after_delete(conn, &row)
}

/// Books the rows a statement inserted, a page at a time; rows `mem_message_add` booked
/// itself are skipped before their text is read.
fn messages_booked(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let hold = f.table_has(HELD);
    let mut page = Vec::new();
    loop {
        let next = f.next_inserted();
        if let Some(r) = &next {
            let text = |i: usize| r.get(i).cloned().and_then(Value::into_string);
            let id = text(1).unwrap_or_default();
            if messages::booked_by_add(conn, &id) {
                continue;
            }
            let num = |i: usize| r.get(i).and_then(Value::as_i64).unwrap_or(0);
            page.push(Inserted {
                seq: num(0),
                thread_id: text(2).unwrap_or_default(),
                message_index: num(3),
                token_count: num(4),
                created_at: num(5),
                indexed_text: text(6).or_else(|| text(7)).unwrap_or_default(),
                resource_id: text(8).unwrap_or_default(),
            });
        }
        if page.len() == BOOKED_PER_PAGE || (next.is_none() && !page.is_empty()) {
            messages::book_inserted(conn, &page, hold)?;
            page.clear();
        }
        if next.is_none() {
            return Ok(());
        }
    }
}

/// The transaction commits: the search documents it held are written.
fn message_held(conn: &mut dyn Conn, _f: &mut Fired) -> Result<()> {
    if crate::search::held::of(conn).any() {
        crate::search::write_held(conn)?;
    }
    Ok(())
}

fn thread_recount(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let id = f.text(true, "id")?;
    threads::recount(conn, &id)
}

fn task_insert(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let mut t: TaskRow = f.new_row(conn)?;
    let before = t.clone();
    if tasks::on_task_insert(conn, &mut t)? {
        f.complete(conn, &before, &t)?;
    }
    Ok(())
}

fn task_status(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let mut t: TaskRow = f.new_row(conn)?;
    let before = t.clone();
    if tasks::on_task_status(conn, &mut t)? {
        f.complete(conn, &before, &t)?;
    }
    if f.after_write() {
        tasks::after_task_status(conn, &t.id)?;
    }
    Ok(())
}

fn task_status_after(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let id = f.text(true, "id")?;
    tasks::after_task_status(conn, &id)
}

fn task_text(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let t: TaskRow = f.new_row(conn)?;
    let old = tasks::search_text(
        &f.text(false, "title")?,
        f.old("description")?.into_string().as_deref(),
        f.old("summary")?.into_string().as_deref(),
    );
    tasks::on_task_text(conn, &t, &old)
}

fn task_delete(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let old = tasks::search_text(
        &f.text(false, "title")?,
        f.old("description")?.into_string().as_deref(),
        f.old("summary")?.into_string().as_deref(),
    );
    let seq = int(f.old("seq")?).unwrap_or(0);
    let id = f.text(false, "id")?;
    let resource = old_resource(f)?;
    tasks::on_task_delete(conn, seq, &id, &resource, &old)
}

fn task_dep_insert(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let dep: DepRow = f.new_row(conn)?;
    tasks::on_dep_insert(conn, &dep)
}

fn task_dep_delete(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let task = f.text(false, "task_id")?;
    tasks::on_dep_delete(conn, &task)
}

/// The closure's view of an edge row before the change.
fn old_edge(f: &mut Fired) -> Result<OldEdge> {
    Ok(OldEdge {
        from: f.text(false, "from_id")?,
        to: f.text(false, "to_id")?,
        ty: f.text(false, "type")?,
        active: f.old("stale_at")? == Value::Null && f.old("invalid_at")? == Value::Null,
    })
}

fn edge_insert(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = f.seq()?;
    upkeep::on_edge_insert(conn, seq)
}

fn edge_update(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let (seq, old) = (f.seq()?, old_edge(f)?);
    upkeep::on_edge_update(conn, seq, &old)
}

fn edge_delete(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let (resource, old) = (f.text(false, "resource_id")?, old_edge(f)?);
    upkeep::on_edge_delete(conn, &resource, &old)
}

fn node_delete(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let id = f.text(false, "id")?;
    upkeep::on_node_delete(conn, &id)
}

/// The closure of each resource the row named before or after is rebuilt to its bounds.
fn settings_changed(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let mut resources: Vec<String> = [f.old("resource_id")?, f.new("resource_id")?]
        .into_iter()
        .filter_map(Value::into_string)
        .collect();
    resources.dedup();
    for r in resources {
        upkeep::on_settings_change(conn, &r)?;
    }
    Ok(())
}

/// The resource of the row that goes (its search document's index); `""` for none.
fn old_resource(f: &mut Fired) -> Result<String> {
    Ok(f.old("resource_id")?.into_string().unwrap_or_default())
}

fn old_memory(f: &mut Fired) -> Result<OldMemory> {
    Ok(OldMemory {
        content: f.text(false, "content")?,
        tags: f.old("tags")?.into_string().unwrap_or_else(|| "[]".into()),
        related_files: f
            .old("related_files")?
            .into_string()
            .unwrap_or_else(|| "[]".into()),
    })
}

fn memory_insert(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = f.seq()?;
    memories::on_insert(conn, seq)
}

fn memory_update(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let (seq, old) = (f.seq()?, old_memory(f)?);
    memories::on_update(conn, seq, &old)
}

fn memory_delete(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = int(f.old("seq")?).unwrap_or(0);
    let old = old_memory(f)?;
    let resource = old_resource(f)?;
    memories::on_delete(conn, seq, &resource, &old)
}

fn memory_secrets(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = f.seq()?;
    memories::check_secrets(conn, seq)
}

fn code_chunk_insert(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = f.seq()?;
    chunks::on_insert(conn, seq)
}

fn code_chunk_update(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let (seq, old) = (f.seq()?, f.text(false, "content")?);
    chunks::on_update(conn, seq, &old)
}

fn code_chunk_delete(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = int(f.old("seq")?).unwrap_or(0);
    let old = f.text(false, "content")?;
    let resource = old_resource(f)?;
    chunks::on_delete(conn, seq, &resource, &old)
}

/// An observational record's document as `NEW` (`new`) or `OLD` holds it.
fn om_indexed(f: &mut Fired, new: bool) -> Result<Option<om_search::Indexed>> {
    let (active, at) = if new {
        (f.new("is_active")?, f.new("updated_at")?)
    } else {
        (f.old("is_active")?, f.old("updated_at")?)
    };
    let text = f.text(new, "active_observations")?;
    let resource = f.text(new, "resource_id")?;
    Ok(om_search::Indexed::of(
        int(active) == Some(1),
        text,
        int(at).unwrap_or(0),
        resource,
    ))
}

fn om_record_insert(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let (seq, new) = (f.seq()?, om_indexed(f, true)?);
    om_search::on_change(conn, seq, None, new)
}

fn om_record_update(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let (seq, old, new) = (f.seq()?, om_indexed(f, false)?, om_indexed(f, true)?);
    om_search::on_change(conn, seq, old, new)
}

fn om_record_delete(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = int(f.old("seq")?).unwrap_or(0);
    let old = om_indexed(f, false)?;
    om_search::on_change(conn, seq, old, None)
}

fn item_insert(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = f.seq()?;
    items::on_insert(conn, seq)
}

/// An item's old value and fields (the fields NULL for every string).
fn old_item(f: &mut Fired) -> Result<(String, Option<String>)> {
    Ok((f.text(false, "value")?, f.old("fields")?.into_string()))
}

fn item_update(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let (seq, (value, fields)) = (f.seq()?, old_item(f)?);
    items::on_update(conn, seq, &value, fields.as_deref())
}

fn item_delete(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = int(f.old("seq")?).unwrap_or(0);
    let (value, fields) = old_item(f)?;
    let resource = old_resource(f)?;
    items::on_delete(conn, seq, &resource, &value, fields.as_deref())
}

fn embedding_insert(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = f.seq()?;
    vectors::on_insert(conn, seq)
}

fn embedding_update(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = f.seq()?;
    let model = f.text(false, "model")?;
    let chunk = int(f.old("chunk")?);
    vectors::on_update(conn, seq, &model, chunk)
}

fn embedding_delete(conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let seq = int(f.old("seq")?).unwrap_or(0);
    let model = f.text(false, "model")?;
    let chunk = int(f.old("chunk")?);
    vectors::on_delete(conn, seq, &model, chunk)
}

/// Refuses the change with the message the schema gave the trigger.
fn refuse(_conn: &mut dyn Conn, f: &mut Fired) -> Result<()> {
    let msg = f
        .arguments()
        .into_iter()
        .next()
        .unwrap_or_else(|| "this change is not allowed".into());
    Err(crate::Error::Refused(msg))
}

/// The trigger whose function is `function`.
pub fn find(function: &str) -> Option<&'static Trigger> {
    TRIGGERS.iter().find(|t| t.function == function)
}
