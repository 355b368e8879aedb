//! Two tenants in one Postgres database, kept apart by row-level security as docs/security.md
//! sets it up (its recipe is read from the page and run as written): what the tenant tests
//! share.

use crate::backend::pg_message;
use postgres::{Client, NoTls};

/// A tenant: its role (also its resource), the prefix of its ids and a word its rows carry.
#[derive(Clone, Copy, Debug)]
pub struct Tenant {
    pub role: &'static str,
    pub prefix: &'static str,
    pub word: &'static str,
}

pub const A: Tenant = Tenant {
    role: "tenant_a",
    prefix: "ta",
    word: "alpha",
};

pub const B: Tenant = Tenant {
    role: "tenant_b",
    prefix: "tb",
    word: "bravo",
};

/// The server's address without a database name or user.
fn server(url: &str) -> String {
    url.split_whitespace()
        .filter(|kv| !kv.starts_with("dbname=") && !kv.starts_with("user="))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A connection to database `db` as `user`.
pub fn connect(url: &str, db: &str, user: &str) -> Client {
    Client::connect(&format!("{} dbname={db} user={user}", server(url)), NoTls)
        .unwrap_or_else(|e| panic!("connecting to {db} as {user}: {e}"))
}

/// Every row of a statement's answer as text (cells joined by `|`, a line per row), or its
/// error's message.
pub fn answer(c: &mut Client, sql: &str) -> Result<String, String> {
    let rows = c.simple_query(sql).map_err(|e| pg_message(&e))?;
    let mut out = String::new();
    for m in rows {
        if let postgres::SimpleQueryMessage::Row(r) = m {
            for i in 0..r.len() {
                out.push_str(r.get(i).unwrap_or("NULL"));
                out.push('|');
            }
            out.push('\n');
        }
    }
    Ok(out)
}

/// [`answer`], which must succeed.
pub fn ok(c: &mut Client, sql: &str) -> String {
    answer(c, sql).unwrap_or_else(|e| panic!("{sql}\n{e}"))
}

/// A fresh database `db` with the extension, the two tenants' roles (members of `app`) and
/// the recipe of docs/security.md; returns the owner's connection.
pub fn database(url: &str, db: &str) -> Client {
    crate::pg_database(url, db);
    let mut owner = connect(url, db, "postgres");
    let doc = std::fs::read_to_string(crate::root().join("docs/security.md")).unwrap();
    let recipe = doc
        .split("```sql\n")
        .find(|b| b.contains("CREATE POLICY"))
        .and_then(|b| b.split("```").next())
        .expect("the RLS recipe in docs/security.md");
    owner
        .batch_execute(&format!(
            "DO $$BEGIN \
               IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'app') THEN CREATE ROLE app NOLOGIN; END IF; \
               IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tenant_a') THEN CREATE ROLE tenant_a LOGIN; END IF; \
               IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'tenant_b') THEN CREATE ROLE tenant_b LOGIN; END IF; \
             END$$; \
             CREATE EXTENSION agentmem; {}; \
             GRANT app TO tenant_a, tenant_b",
            recipe.replace("CREATE ROLE app NOLOGIN;", "")
        ))
        .unwrap();
    owner
}

/// What a tenant writes through the functions: a thread with three messages and a
/// compaction, tasks with a dependency, a link and a claim, a task made by the tool, a memory
/// with a vector, a graph of two files and an indexed source file, working memory, an item
/// with a vector, an observation cycle fenced by its
/// lease, and an observed session. Every row carries the tenant's word; ids are the tenant's prefix and a name.
/// The messages carry their times: which of them the observation's cursor holds depends on
/// whether two share a millisecond, which the clock would leave to chance.
pub fn write(c: &mut Client, t: Tenant) {
    let (r, p, w) = (t.role, t.prefix, t.word);
    for sql in [
        format!("SELECT mem_thread_create('{r}', '{w} thread', NULL, '{{\"id\":\"{p}-thread\",\"agent_id\":\"{p}-agent\"}}')"),
        format!("SELECT mem_message_add('{p}-thread', 'user', 'the {w} plan for LoginSchema', '{{\"id\":\"{p}-m1\",\"created_at\":1700000000001}}')"),
        format!("SELECT mem_message_add('{p}-thread', 'assistant', 'the {w} answer about LoginSchema', '{{\"id\":\"{p}-m2\",\"created_at\":1700000000002}}')"),
        format!("SELECT mem_message_add('{p}-thread', 'tool', 'the {w} tool output', '{{\"id\":\"{p}-m3\",\"created_at\":1700000000003}}')"),
        format!("SELECT mem_compact('{p}-thread', 0, 0, 'the {w} summary')"),
        format!("SELECT task_create('the {w} task', '{{\"id\":\"{p}-task\",\"resource_id\":\"{r}\"}}')"),
        format!("SELECT task_create('the {w} follow-up', '{{\"id\":\"{p}-task2\",\"resource_id\":\"{r}\",\"labels\":[\"{w}\"]}}')"),
        format!("SELECT task_dep_add('{p}-task2', '{p}-task')"),
        format!("SELECT task_link('{p}-task', '{p}-m1')"),
        format!("SELECT task_claim('{p}-task', '{p}-session', '{p}-thread')"),
        format!("SELECT mem_tool('task_mutate', '{{\"action\":\"create\",\"title\":\"the {w} tool task\"}}', '{{\"resourceId\":\"{r}\"}}')"),
        format!("SELECT mem_remember('{r}', '{{\"type\":\"gotcha\",\"content\":\"the {w} gotcha\",\"related_files\":[\"{p}.ts\"]}}')"),
        format!("SELECT mem_embed_set('memory', (SELECT id FROM mem_memories), 'm', mem_vector('[1, 0, 0]'))"),
        format!("SELECT mem_embed_set('message', '{p}-m1', 'm', mem_vector('[0.5, 0.5, 0]'))"),
        format!("SELECT graph_load('{r}', '{{\"nodes\":[{{\"id\":\"{p}-n1\",\"type\":\"file\",\"label\":\"{w}.ts\",\"file_path\":\"{p}.ts\"}},{{\"id\":\"{p}-n2\",\"type\":\"file\",\"label\":\"{w}2.ts\",\"file_path\":\"{p}2.ts\"}},{{\"id\":\"{p}-n3\",\"type\":\"file\",\"label\":\"{w}3.ts\",\"file_path\":\"{p}3.ts\"}}],\"edges\":[{{\"from\":\"{p}-n2\",\"to\":\"{p}-n1\",\"type\":\"imports\"}},{{\"from\":\"{p}-n3\",\"to\":\"{p}-n2\",\"type\":\"calls\"}},{{\"from\":\"{p}-n3\",\"to\":\"{p}-n1\",\"type\":\"imports\"}}]}}')"),
        format!("SELECT graph_configure('{r}', '{{\"hub_in_degree\":1}}')"),
        format!("SELECT graph_index_file('{r}', 'src/{w}.py', 'def {w}_probe():' || chr(10) || '    return {w}_helper()' || chr(10) || 'def {w}_helper():' || chr(10) || '    return 1' || chr(10))"),
        format!("SELECT wm_set('resource:{r}', 'the {w} working memory')"),
        format!("SELECT mem_item_put('{r}', '[\"{p}\",\"notes\"]', '{p}-item', '{{\"text\":\"the {w} item\"}}')"),
        format!("SELECT mem_embed_set('item', (SELECT id FROM mem_items), 'm', mem_vector('[0, 0, 1]'))"),
        format!("SELECT om_configure('thread:{p}-thread', '{{\"observation_threshold\":1}}')"),
        format!("SELECT mem_session_start('{r}', '{{\"id\":\"{p}-session\"}}')"),
        format!("SELECT mem_observe('{p}-session', '[{{\"type\":\"tool_call\",\"tool\":\"Read\",\"args\":{{\"file_path\":\"{p}.ts\"}},\"step\":1}},{{\"type\":\"reasoning\",\"text\":\"Correction: the {w} port is 5433.\",\"step\":1}}]')"),
    ] {
        ok(c, &sql);
    }
    let op = ok(
        c,
        &format!("SELECT om_acquire_lease('thread:{p}-thread', '{p}-observer')"),
    );
    let op = op.trim_end_matches("|\n");
    ok(
        c,
        &format!(
            "SELECT om_apply_observation('thread:{p}-thread', '{p}-observer', '{op}', \
             '<observations>* the {w} observation</observations>', '[\"{p}-m1\",\"{p}-m2\"]')"
        ),
    );
    ok(
        c,
        &format!("SELECT om_release_lease('thread:{p}-thread', '{p}-observer', '{op}')"),
    );
}
