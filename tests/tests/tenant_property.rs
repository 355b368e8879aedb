//! The promise of docs/security.md, searched for at random: nothing tenant B does changes what
//! tenant A has, and nothing B is told depends on A's rows.
//!
//! Two databases under the recipe of docs/security.md: in `both`, tenants A and B wrote their
//! rows; in `alone`, only B did, the same rows. Tenant B then runs random steps — a call of
//! any public function of the catalog, or a documented plain-SQL write — with arguments drawn
//! from both tenants' ids, resources, lease operations, models and nodes, A's included, each
//! step in both databases. After every step:
//!
//! 1. A's observable state in `both` (every reader's answer over A's ids, and A's rows, read
//!    with A's rights) is what it was before B started;
//! 2. B's answer, or error, is the same in both databases: a figure or word that depends on
//!    A's rows shows as a difference. What docs/security.md leaves unprotected is masked
//!    first: generated ids and times (they differ between any two databases), search scores
//!    and the order of search hits (BM25 statistics span tenants), and keys B chooses are
//!    never A's (unique keys are shared).
//!
//! `make test` runs a bounded, seeded pass; `make fuzz` a long one
//! (`AGENTMEM_TENANT_STEPS`, `AGENTMEM_TENANT_SEED`). A failure prints the seed, the step
//! and both sides.

use agentmem_core::api::{self, Returns, Type};
use agentmem_core::data::tables::TABLES;
use agentmem_tests::tenants::{self, answer, ok, Tenant, A, B};
use agentmem_tests::Rng;
use postgres::Client;
use std::time::Instant;

const BOTH: &str = "agentmem_tenants_both";
const ALONE: &str = "agentmem_tenants_alone";

/// Steps of the bounded pass `make test` runs.
const STEPS: usize = 400;

/// Result columns that rank by BM25 statistics or by the clock, page by them, or decay with the
/// clock (a memory's confidence, read in each database at its own moment): they differ
/// between two databases without telling anything of the other tenant.
const UNSTABLE_COLUMNS: &[&str] = &[
    "score",
    "bm25",
    "recency",
    "cursor",
    "snippet",
    "confidence",
];

/// The ids and names the steps draw from: both tenants' (A's read by the owner, as a hostile
/// B might guess them) and some that exist nowhere.
struct Pools {
    resources: Vec<String>,
    threads: Vec<String>,
    messages: Vec<String>,
    tasks: Vec<String>,
    nodes: Vec<String>,
    edges: Vec<String>,
    memories: Vec<String>,
    compactions: Vec<String>,
    operations: Vec<String>,
    lookup_keys: Vec<String>,
    scope_keys: Vec<String>,
}

fn column(owner: &mut Client, sql: &str) -> Vec<String> {
    ok(owner, sql)
        .lines()
        .map(|l| l.trim_end_matches('|').to_string())
        .collect()
}

impl Pools {
    fn read(owner: &mut Client) -> Pools {
        let ids = |owner: &mut Client, table: &str| {
            let mut v = column(owner, &format!("SELECT id FROM {table} ORDER BY id"));
            v.push("nowhere".into());
            v
        };
        let mut p = Pools {
            resources: vec![A.role.into(), B.role.into(), "nobody".into()],
            threads: ids(owner, "mem_threads"),
            messages: ids(
                owner,
                "mem_messages WHERE resource_id <> 'tenant_b' OR message_index < 4",
            ),
            tasks: ids(owner, "mem_tasks"),
            nodes: ids(owner, "mem_graph_nodes"),
            edges: ids(owner, "mem_graph_edges"),
            memories: ids(owner, "mem_memories"),
            compactions: ids(owner, "mem_compactions"),
            operations: column(
                owner,
                "SELECT DISTINCT coalesce(lock_operation_id, 'no-op') FROM mem_om_records",
            ),
            lookup_keys: column(owner, "SELECT lookup_key FROM mem_om_records ORDER BY 1"),
            scope_keys: Vec::new(),
        };
        p.operations.push("x".into());
        for t in [A, B] {
            p.scope_keys.push(format!("resource:{}", t.role));
            p.scope_keys.push(format!("thread:{}-thread", t.prefix));
            p.lookup_keys.push(format!("resource:{}", t.role));
        }
        p
    }
}

fn pick<'a>(rng: &mut Rng, v: &'a [String]) -> &'a str {
    &v[rng.next() as usize % v.len()]
}

fn pick_str<'a>(rng: &mut Rng, v: &[&'a str]) -> &'a str {
    v[rng.next() as usize % v.len()]
}

/// A text literal.
fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// What B searches for: A's words too.
const WORDS: &[&str] = &["bravo", "LoginSchema", "plan", "sneaky", "gotcha", "alpha"];

/// What B writes into its own rows: not A's word, which A's snapshot searches for (B's
/// documents move the statistics of the words they hold).
const WRITTEN: &[&str] = &["bravo", "LoginSchema", "sneaky", "gotcha"];

/// One argument for `arg` of `function`, as SQL.
fn argument(rng: &mut Rng, p: &Pools, n: &mut u64, function: &str, arg: &str, ty: Type) -> String {
    let word = pick_str(rng, WORDS);
    if rng.chance(4) {
        return "NULL".into();
    }
    let v: String = match (ty, arg) {
        (Type::Blob, _) => pick_str(
            rng,
            &[
                "mem_vector('[1, 0, 0]')",
                "mem_vector('[0, 1, 0]')",
                "mem_vector('[0.5, 0.5]')",
                "mem_vector('[0, 0, 0]')",
            ],
        )
        .into(),
        (Type::Int, "start_index" | "end_index") => (rng.next() % 4).to_string(),
        (Type::Int, "compression_level") => (rng.next() % 3).to_string(),
        (Type::Int, "lease_ms") => "60000".into(),
        (Type::Int, _) => pick_str(rng, &["0", "1", "5", "1764858600000"]).into(),
        (_, "resource_id") => lit(pick(rng, &p.resources)),
        (_, "thread_id") => lit(pick(rng, &p.threads)),
        (_, "task_id" | "depends_on_id") => lit(pick(rng, &p.tasks)),
        (_, "message_id") => lit(pick(rng, &p.messages)),
        (_, "node_id" | "from_id" | "to_id") => lit(pick(rng, &p.nodes)),
        (_, "compaction_id") => lit(pick(rng, &p.compactions)),
        (_, "lookup_key") => lit(pick(rng, &p.lookup_keys)),
        (_, "scope_key") => lit(pick(rng, &p.scope_keys)),
        (_, "operation_id") => lit(pick(rng, &p.operations)),
        (_, "owner_id") => lit(pick_str(rng, &["ta-observer", "tb-observer", "sneak"])),
        (_, "session_id") => lit(pick_str(rng, &["ta-session", "tb-session"])),
        (_, "model") => lit(pick_str(rng, &["m", "mx"])),
        (_, "kind") => lit(pick_str(rng, &["memory", "message"])),
        (_, "role") => lit(pick_str(rng, &["user", "assistant"])),
        (_, "id") => lit(match function {
            "graph_node_remove" => pick(rng, &p.nodes),
            "graph_edge_remove" | "graph_edge_invalidate" => pick(rng, &p.edges),
            "mem_embed_set" if rng.chance(50) => pick(rng, &p.memories),
            "mem_embed_set" => pick(rng, &p.messages),
            _ => pick(rng, &p.memories),
        }),
        (_, "file_path") => lit(pick_str(rng, &["ta.ts", "tb.ts", "ta2.ts"])),
        (_, "answer") if function == "mem_synthesis_answer" => lit("[{\"type\":\"gotcha\",\"content\":\"the bravo synthesis\"}]"),
        (_, "answer") => lit("<observations>* the bravo sneak</observations>"),
        (_, "message_ids") => lit(&format!("[\"{}\"]", pick(rng, &p.messages))),
        (_, "reason") => lit(pick_str(rng, &["completed", "wontfix"])),
        (_, "name") => lit(pick_str(
            rng,
            &agentmem_core::tools::TOOLS
                .iter()
                .map(|t| t.name)
                .collect::<Vec<_>>(),
        )),
        (_, "format") => lit(pick_str(rng, &["mcp", "markdown"])),
        (_, "encoding") => lit("o200k_base"),
        (_, "version") => "NULL".into(),
        (_, "context") => lit(&format!(
            "{{\"resourceId\":\"{}\",\"threadId\":\"{}\",\"sessionId\":\"s\"}}",
            pick(rng, &p.resources),
            pick(rng, &p.threads)
        )),
        (_, "input") => lit(&tool_input(rng, p)),
        (_, "event") => lit(pick_str(
            rng,
            &[
                "{\"type\":\"tool_call\",\"tool\":\"Read\",\"args\":{\"file_path\":\"tb.ts\"},\"step\":2}",
                "[{\"type\":\"reasoning\",\"text\":\"Correction: the bravo port.\"},{\"type\":\"step_complete\",\"step\":3}]",
            ],
        )),
        // B's session, or a new one: a session id A holds is a unique key (docs/security.md,
        // "What is not protected").
        (_, "payload") => {
            *n += 1;
            let new = format!("tb-new-{n}");
            lit(&format!(
                "{{\"hook_event_name\":\"{}\",\"session_id\":\"{}\",\"tool_name\":\"Read\",\"tool_input\":{{\"file_path\":\"tb.ts\"}}}}",
                pick_str(rng, &["PostToolUse", "Stop"]),
                pick_str(rng, &["tb-session", &new])
            ))
        }
        (_, "outcome") => lit(pick_str(rng, &["success", "failure"])),
        _ => json_argument(rng, p, n, function, arg, word),
    };
    v
}

/// A tool's input: one of its actions, aimed at the pools.
fn tool_input(rng: &mut Rng, p: &Pools) -> String {
    let task = pick(rng, &p.tasks);
    let all = [
        format!("{{\"action\":\"search\",\"query\":\"{}\",\"limit\":50}}", pick_str(rng, WORDS)),
        "{\"action\":\"ready\",\"limit\":50}".to_string(),
        format!("{{\"action\":\"show\",\"id\":\"{task}\"}}"),
        "{\"action\":\"list\",\"limit\":50}".to_string(),
        "{\"action\":\"create\",\"title\":\"a bravo tool task\"}".to_string(),
        format!("{{\"action\":\"create\",\"title\":\"bravo\",\"resourceId\":\"{}\"}}", pick(rng, &p.resources)),
        format!("{{\"action\":\"claim\",\"id\":\"{task}\"}}"),
        format!("{{\"action\":\"close\",\"id\":\"{task}\",\"reason\":\"completed\",\"summary\":\"done\"}}"),
        format!("{{\"action\":\"dep\",\"taskId\":\"{task}\",\"dependsOn\":\"{}\"}}", pick(rng, &p.tasks)),
        format!("{{\"action\":\"link\",\"taskId\":\"{task}\",\"messageId\":\"{}\"}}", pick(rng, &p.messages)),
        "{\"action\":\"update_context\",\"content\":\"bravo context\"}".to_string(),
        "{\"query\":\"gotcha\",\"limit\":20}".to_string(),
        "{\"type\":\"gotcha\",\"content\":\"a bravo tool memory\"}".to_string(),
        format!("{{\"target\":\"{}\",\"maxDepth\":3}}", pick(rng, &p.nodes)),
        format!("{{\"target\":\"{}\"}}", pick_str(rng, &["ta.ts", "tb.ts"])),
    ];
    all[rng.next() as usize % all.len()].clone()
}

/// A JSON argument (options, a patch, a document) of `function`.
fn json_argument(
    rng: &mut Rng,
    p: &Pools,
    n: &mut u64,
    function: &str,
    arg: &str,
    word: &str,
) -> String {
    *n += 1;
    let new = format!("tb-new-{n}");
    let r = pick(rng, &p.resources);
    let written = pick_str(rng, WRITTEN);
    let choices: Vec<String> = match (function, arg) {
        (_, "query" | "hint") => vec![word.to_string()],
        ("graph_edge_add", "type") => vec!["calls".into(), "imports".into()],
        ("task_dep_add" | "task_dep_remove", "type") => vec!["blocks".into()],
        ("task_link", "relation") => vec!["related".into()],
        (_, "title" | "summary" | "content" | "text" | "label" | "type" | "relation"
            | "extracted_code" | "content_hash") => {
            vec![format!("the {written} {new}"), written.to_string()]
        }
        ("mem_thread_create", "options") => vec![format!("{{\"id\":\"{new}\"}}"), "{}".into()],
        ("mem_thread_create", "metadata") | ("om_configure", "config") => vec![
            "{\"observation_threshold\":2}".into(),
            "{}".into(),
        ],
        ("mem_thread_update", "patch") => vec![
            "{\"title\":\"renamed\"}".into(),
            "{\"metadata\":{\"k\":1}}".into(),
        ],
        ("mem_message_add", "options") => vec![
            format!("{{\"id\":\"{new}\"}}"),
            format!("{{\"id\":\"{new}\",\"task_id\":\"{}\"}}", pick(rng, &p.tasks)),
        ],
        ("task_create", "options") => vec![
            format!("{{\"id\":\"{new}\",\"resource_id\":\"{r}\"}}"),
            format!("{{\"id\":\"{new}\",\"resource_id\":\"tenant_b\",\"parent\":\"{}\"}}", pick(rng, &p.tasks)),
        ],
        ("task_update", "options") => vec![
            "{\"title\":\"renamed\"}".into(),
            "{\"status\":\"in_progress\"}".into(),
            "{\"labels\":[\"x\"]}".into(),
        ],
        ("task_compact", "options") => vec!["{\"force\":true}".into()],
        ("graph_node_upsert", "node") => vec![
            format!("{{\"id\":\"{new}\",\"type\":\"file\",\"label\":\"x\",\"file_path\":\"tb.ts\"}}"),
            "{\"id\":\"tb-n1\",\"type\":\"file\",\"label\":\"relabelled\"}".into(),
        ],
        ("graph_edge_add", "options") => vec!["{\"weight\":2}".into(), "{}".into()],
        ("graph_neighbors" | "graph_impact", "options") => vec![
            "{\"direction\":\"both\",\"max_depth\":3}".into(),
            "{}".into(),
        ],
        ("graph_configure", "options") => vec![
            "{\"max_depth\":2}".into(),
            "{\"hub_in_degree\":5}".into(),
            "{}".into(),
        ],
        ("graph_load", "graph") => vec![
            "{}".into(),
            "{\"nodes\":[],\"edges\":[]}".into(),
            format!("{{\"nodes\":[{{\"id\":\"{new}\",\"type\":\"file\",\"label\":\"x\"}}]}}"),
        ],
        ("mem_remember", "memory") => vec![
            format!("{{\"type\":\"gotcha\",\"content\":\"the {written} fact\"}}"),
            format!(
                "{{\"type\":\"gotcha\",\"content\":\"the {written} fact\",\"relations\":[{{\"relation_type\":\"supersedes\",\"target_memory_id\":\"{}\"}}]}}",
                pick(rng, &p.memories)
            ),
        ],
        ("mem_memory_update", "patch") => vec![
            "{\"content\":\"changed\"}".into(),
            "{\"type\":\"dead_end\"}".into(),
            format!(
                "{{\"relations\":[{{\"relation_type\":\"supersedes\",\"target_memory_id\":\"{}\"}}]}}",
                pick(rng, &p.memories)
            ),
        ],
        ("mem_recall_hybrid", "options") => vec![
            format!("{{\"resource_id\":\"{r}\",\"kinds\":[\"memory\",\"message\",\"observation\"],\"limit\":100,\"now\":1764858600000}}"),
            format!("{{\"resource_id\":\"{r}\",\"model\":\"m\",\"query_vector\":[1,0,0],\"current_files\":[\"ta.ts\",\"tb.ts\"],\"limit\":100,\"now\":1764858600000}}"),
            "{\"limit\":100,\"now\":1764858600000}".into(),
        ],
        ("mem_export" | "mem_export_rows", "scope") => {
            vec!["{}".into(), format!("{{\"resource_id\":\"{r}\"}}")]
        }
        ("mem_import", "json") => vec![format!(
            "{{\"format\":\"agentmem-export\",\"version\":1,\"scope\":{{}},\"tables\":{{\"mem_threads\":[{{\"id\":\"{new}\",\"resource_id\":\"{r}\",\"title\":null,\"metadata\":{{}},\"created_at\":1,\"updated_at\":1,\"state\":\"active\",\"agent_id\":null,\"user_id\":null}}]}}}}"
        )],
        (_, "options") => vec![
            "NULL".into(),
            format!("{{\"resource_id\":\"{r}\",\"limit\":100}}"),
            "{\"limit\":100}".into(),
        ],
        _ => vec![written.to_string()],
    };
    let c = &choices[rng.next() as usize % choices.len()];
    if c == "NULL" {
        c.clone()
    } else {
        lit(c)
    }
}

/// A call of a public function (not the owner's maintenance), as a statement whose answer
/// leaves out the columns that differ between any two databases.
fn call(rng: &mut Rng, p: &Pools, n: &mut u64) -> String {
    let public: Vec<_> = api::functions()
        .filter(|f| !f.is_internal() && !f.owner_only)
        .collect();
    let f = public[rng.next() as usize % public.len()];
    let count = f.required + (rng.next() as usize % (f.args.len() - f.required + 1));
    let args: Vec<String> = f.args[..count]
        .iter()
        .map(|a| argument(rng, p, n, f.name, a.name, a.ty))
        .collect();
    let args = args.join(", ");
    match f.returns {
        Returns::Table(cols, _) => {
            let shown: Vec<&str> = cols
                .iter()
                .map(|c| c.name)
                .filter(|c| !UNSTABLE_COLUMNS.contains(c))
                .collect();
            format!("SELECT {} FROM {}({args})", shown.join(", "), f.name)
        }
        Returns::Scalar(..) => format!("SELECT {}({args})", f.name),
    }
}

/// A documented plain-SQL write, aimed at the pools.
fn write(rng: &mut Rng, p: &Pools, n: &mut u64) -> String {
    *n += 1;
    let (t, m, k, nd) = (
        lit(pick(rng, &p.threads)),
        lit(pick(rng, &p.messages)),
        lit(pick(rng, &p.tasks)),
        lit(pick(rng, &p.nodes)),
    );
    let (r, s, mem, e) = (
        lit(pick(rng, &p.resources)),
        lit(pick(rng, &p.scope_keys)),
        lit(pick(rng, &p.memories)),
        lit(pick(rng, &p.edges)),
    );
    let new = lit(&format!("tb-new-{n}"));
    let all = [
        format!("UPDATE mem_threads SET title = 'renamed' WHERE id = {t}"),
        format!("UPDATE mem_threads SET resource_id = 'tenant_b' WHERE id = {t}"),
        format!("DELETE FROM mem_threads WHERE id = {t}"),
        format!("UPDATE mem_messages SET raw_content = 'changed bravo' WHERE id = {m}"),
        format!("DELETE FROM mem_messages WHERE id = {m}"),
        format!("INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ({t}, 'user', 'sneaky bravo')"),
        format!("DELETE FROM mem_compactions WHERE thread_id = {t}"),
        format!("UPDATE mem_tasks SET status = 'closed' WHERE id = {k}"),
        format!("DELETE FROM mem_tasks WHERE id = {k}"),
        format!("INSERT INTO mem_tasks (id, title, resource_id) VALUES ({new}, 'sneaky', {r})"),
        format!("DELETE FROM mem_task_deps WHERE task_id = {k}"),
        format!("INSERT INTO mem_task_deps (task_id, depends_on_id, type) VALUES ({k}, {}, 'blocks')", lit(pick(rng, &p.tasks))),
        format!("INSERT INTO mem_task_labels (task_id, label) VALUES ({k}, 'x')"),
        format!("INSERT INTO mem_task_messages (task_id, message_id, relation) VALUES ({k}, {m}, 'related')"),
        format!("UPDATE mem_om_records SET active_observations = 'x' WHERE lookup_key = {}", lit(pick(rng, &p.lookup_keys))),
        format!("DELETE FROM mem_working_memory WHERE scope_key = {s}"),
        format!("INSERT INTO mem_working_memory (scope_key, content) VALUES ({s}, 'x')"),
        format!("UPDATE mem_memories SET content = 'changed' WHERE id = {mem}"),
        format!("DELETE FROM mem_memories WHERE resource_id = {r}"),
        format!("INSERT INTO mem_embeddings (kind, owner_id, model, dims, vector) VALUES ('message', {m}, 'm', 3, mem_vector('[0, 0, 1]'))"),
        format!("INSERT INTO mem_embeddings (kind, owner_id, model, dims, vector) VALUES ('message', {new}, 'm', 3, mem_vector('[0, 0, 1]'))"),
        "UPDATE mem_embeddings SET vector = mem_vector('[0, 1, 1]') WHERE model = 'm'".into(),
        format!("DELETE FROM mem_embeddings WHERE owner_id = {m}"),
        format!("INSERT INTO mem_graph_nodes (id, resource_id, type, label) VALUES ({new}, {r}, 'file', 'x')"),
        format!("UPDATE mem_graph_nodes SET label = 'x' WHERE id = {nd}"),
        format!("UPDATE mem_graph_nodes SET id = {new} WHERE id = {nd}"),
        format!("DELETE FROM mem_graph_nodes WHERE id = {nd}"),
        format!("INSERT INTO mem_graph_edges (from_id, to_id, resource_id, type) VALUES ({nd}, {}, {r}, 'calls')", lit(pick(rng, &p.nodes))),
        format!("UPDATE mem_graph_edges SET weight = 3 WHERE id = {e}"),
        format!("DELETE FROM mem_graph_edges WHERE resource_id = {r}"),
        format!("INSERT INTO mem_graph_settings (resource_id, max_depth) VALUES ({r}, 2)"),
        format!("UPDATE mem_graph_settings SET hub_in_degree = 7 WHERE resource_id = {r}"),
        format!("DELETE FROM mem_graph_settings WHERE resource_id = {r}"),
        // Many vectors at once, in a thread of their own (earlier steps may have removed
        // B's): the packing B's writes start must not hide A's vectors, of A's width or not.
        bulk_vectors(*n, "m", "[0, 1, 0]"),
        bulk_vectors(*n, "mx", "[0, 1]"),
    ];
    all[rng.next() as usize % all.len()].clone()
}

/// A step that writes 260 messages of a new thread of B's and gives each a vector of `model`.
fn bulk_vectors(n: u64, model: &str, vector: &str) -> String {
    format!(
        "SELECT count(mem_embed_set('message', mem_message_add(t.id, 'user', 'bulk ' || i), \
         '{model}', mem_vector('{vector}'))) \
         FROM (SELECT mem_thread_create('tenant_b', 'bulk', NULL, '{{\"id\":\"tb-bulk-{n}\"}}') AS id) t, \
         generate_series(1, 260) AS i"
    )
}

/// Tenant A's observable state: A's rows and every reader's answer over A's ids, read with
/// A's rights. Search hits are compared as sets without scores (other tenants' documents
/// move BM25 statistics, as docs/security.md says).
fn snapshot(a: &mut Client) -> Vec<(String, String)> {
    let t = A;
    let (r, p, w) = (t.role, t.prefix, t.word);
    let mut sql: Vec<String> = TABLES
        .iter()
        .map(|t| format!("SELECT * FROM {} ORDER BY {}", t.name, t.order))
        .collect();
    sql.extend([
        format!("SELECT mem_thread_get('{p}-thread')"),
        format!("SELECT * FROM mem_messages_page('{p}-thread')"),
        format!("SELECT * FROM mem_recall('{p}-thread', 'plan')"),
        format!("SELECT message_id FROM mem_search('{w} LoginSchema plan', '{{\"limit\":1000}}') ORDER BY 1"),
        format!("SELECT task_show('{p}-task')"),
        "SELECT * FROM task_list() ORDER BY id".into(),
        "SELECT * FROM task_ready() ORDER BY id".into(),
        format!("SELECT id FROM task_search('{w} task') ORDER BY 1"),
        format!("SELECT om_status('{p}-thread')"),
        format!("SELECT om_context('{p}-thread')"),
        format!("SELECT mem_context('{p}-thread')"),
        format!("SELECT om_observer_input('thread:{p}-thread')"),
        format!("SELECT wm_get('resource:{r}')"),
        format!("SELECT * FROM graph_neighbors('{p}-n1', '{{\"direction\":\"both\",\"max_depth\":3}}')"),
        format!("SELECT * FROM graph_neighbors('{p}-n3', '{{\"max_depth\":3}}')"),
        format!("SELECT * FROM graph_neighbors('{p}-n3', '{{\"max_depth\":3,\"edge_types\":[\"calls\",\"imports\"]}}')"),
        format!("SELECT graph_impact('{p}-n1')"),
        format!("SELECT graph_stats('{r}')"),
        format!("SELECT memory_id FROM mem_memory_search('{w} gotcha', '{{\"limit\":100}}') ORDER BY 1"),
        format!("SELECT memory_id, type, state, needs_review FROM mem_memory_list('{r}', '{{\"include_deprecated\":true,\"limit\":500}}') ORDER BY 1"),
        format!("SELECT id, session_type, status FROM mem_session_list('{r}', '{{\"limit\":500}}') ORDER BY 1"),
        format!("SELECT kind, id FROM mem_recall_hybrid('gotcha plan', '{{\"resource_id\":\"{r}\",\"kinds\":[\"memory\",\"message\",\"observation\"],\"model\":\"m\",\"query_vector\":[1,0,0],\"current_files\":[\"{p}.ts\"],\"limit\":100,\"now\":1764858600000}}') ORDER BY 1, 2"),
        "SELECT * FROM mem_vector_search('m', mem_vector('[1, 0, 0]'), '{\"limit\":100}')".into(),
        "SELECT * FROM mem_vector_search('m', mem_vector('[0, 1, 0]'), '{\"limit\":100,\"kind\":\"message\"}')".into(),
        "SELECT * FROM mem_vector_search('mx', mem_vector('[1, 1, 1]'), '{\"limit\":100}')".into(),
        "SELECT mem_stats()".into(),
        format!("SELECT mem_export('{{\"resource_id\":\"{r}\"}}')"),
        format!("SELECT mem_tool('graph_neighbors', '{{\"target\":\"{p}.ts\",\"maxDepth\":3}}', '{{\"resourceId\":\"{r}\"}}')"),
        format!("SELECT task_query('{{\"action\":\"list\",\"limit\":50}}', '{{\"resourceId\":\"{r}\"}}')"),
    ]);
    sql.into_iter()
        .map(|s| {
            let got = answer(a, &s).unwrap_or_else(|e| format!("error: {e}"));
            (s, got)
        })
        .collect()
}

/// An answer with what differs between any two databases masked: generated ids (UUID v7),
/// clock times in milliseconds, and JSON keys named as the unstable columns; the lines of a table answer
/// are sorted (hit order follows BM25 statistics).
fn masked(text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(mask_line).collect();
    lines.sort();
    lines.join("\n")
}

fn mask_line(line: &str) -> String {
    let cells: Vec<String> = line
        .split('|')
        .map(
            |cell| match serde_json::from_str::<serde_json::Value>(cell) {
                Ok(v @ (serde_json::Value::Object(_) | serde_json::Value::Array(_))) => {
                    mask_json(v).to_string()
                }
                _ => cell.to_string(),
            },
        )
        .collect();
    mask_words(&cells.join("|"))
}

fn mask_json(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        J::Object(m) => J::Object(
            m.into_iter()
                .filter(|(k, _)| !UNSTABLE_COLUMNS.contains(&k.as_str()))
                .map(|(k, v)| (k, mask_json(v)))
                .collect(),
        ),
        J::Array(a) => {
            let mut items: Vec<J> = a.into_iter().map(mask_json).collect();
            items.sort_by_key(|x| x.to_string());
            J::Array(items)
        }
        J::String(s) => J::String(mask_words(&s)),
        J::Number(n) if n.as_i64().is_some_and(|x| x > 1_000_000_000_000) => {
            J::String("<ms>".into())
        }
        other => other,
    }
}

/// `2026-11-26 20:25`: a time as the Markdown export writes it (to the minute, so two
/// databases filled a few seconds apart may differ in it).
fn is_minute(b: &[u8]) -> bool {
    const SHAPE: &[u8] = b"dddd-dd-dd dd:dd";
    b.len() >= SHAPE.len()
        && SHAPE.iter().zip(b).all(|(s, c)| {
            if *s == b'd' {
                c.is_ascii_digit()
            } else {
                s == c
            }
        })
}

/// UUIDs, millisecond times and the export's minutes in free text.
fn mask_words(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if is_minute(&b[i..]) {
            out.push_str("<minute>");
            i += 16;
            continue;
        }
        let hexrun = b[i..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit() || **c == b'-')
            .count();
        let run = &s[i..i + hexrun];
        let at_word = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if at_word && hexrun == 36 && run.matches('-').count() == 4 {
            out.push_str("<id>");
            i += hexrun;
        } else if at_word && run.len() >= 13 && run.bytes().all(|c| c.is_ascii_digit()) {
            out.push_str("<ms>");
            i += hexrun;
        } else {
            let c = s[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// B's generated ids in `both` with their counterparts in `alone`: rows made the same way
/// get other ids in another database, so a step aimed at one of B's rows names it by the id it
/// has there.
fn counterparts(both: &mut Client, alone: &mut Client) -> Vec<(String, String)> {
    let keyed = [
        "SELECT id, title FROM mem_tasks WHERE resource_id = 'tenant_b'",
        "SELECT id, content FROM mem_memories WHERE resource_id = 'tenant_b'",
        "SELECT id, from_id || ' ' || to_id || ' ' || type FROM mem_graph_edges WHERE resource_id = 'tenant_b'",
        "SELECT id, thread_id || ' ' || start_index FROM mem_compactions WHERE resource_id = 'tenant_b'",
        "SELECT id, lookup_key || ' ' || generation FROM mem_om_records WHERE resource_id = 'tenant_b'",
    ];
    let rows = |c: &mut Client, sql: &str| -> Vec<(String, String)> {
        column(c, sql)
            .into_iter()
            .filter_map(|l| {
                let (id, key) = l.split_once('|')?;
                Some((id.to_string(), key.to_string()))
            })
            .collect()
    };
    let mut pairs = Vec::new();
    for sql in keyed {
        let there = rows(alone, sql);
        for (id, key) in rows(both, sql) {
            let (other, _) = there
                .iter()
                .find(|(_, k)| *k == key)
                .unwrap_or_else(|| panic!("B's row {key} is missing alone"));
            pairs.push((id, other.clone()));
        }
    }
    pairs
}

/// `sql` with B's ids of `both` replaced by their counterparts in `alone`.
fn translated(sql: &str, pairs: &[(String, String)]) -> String {
    pairs.iter().fold(sql.to_string(), |s, (here, there)| {
        s.replace(here.as_str(), there)
    })
}

fn setup(url: &str, db: &str, tenants_written: &[Tenant]) -> Client {
    let owner = tenants::database(url, db);
    for t in tenants_written {
        let mut c = tenants::connect(url, db, t.role);
        tenants::write(&mut c, *t);
        // A model whose vectors only A has, at three dimensions.
        if t.role == A.role {
            ok(
                &mut c,
                "SELECT mem_embed_set('message', 'ta-m2', 'mx', mem_vector('[1, 1, 1]'))",
            );
        }
        // Enough messages for packed vectors and full index segments.
        ok(
            &mut c,
            &format!(
                "SELECT count(mem_message_add('{}-thread', 'assistant', '{} LoginSchema step ' || i)) \
                 FROM generate_series(1, 300) AS i",
                t.prefix, t.word
            ),
        );
    }
    owner
}

#[test]
fn nothing_b_does_changes_or_tells_what_a_has() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let steps: usize = std::env::var("AGENTMEM_TENANT_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(STEPS);
    let seed: u64 = std::env::var("AGENTMEM_TENANT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7e4a_17c0_ffee);
    let mut owner = setup(&url, BOTH, &[A, B]);
    let mut owner_alone = setup(&url, ALONE, &[B]);
    let pools = Pools::read(&mut owner);
    let pairs = counterparts(&mut owner, &mut owner_alone);
    drop(owner_alone);
    let mut a = tenants::connect(&url, BOTH, A.role);
    let mut b_both = tenants::connect(&url, BOTH, B.role);
    let mut b_alone = tenants::connect(&url, ALONE, B.role);

    let before = snapshot(&mut a);
    assert_eq!(
        snapshot(&mut a),
        before,
        "A's snapshot is not stable by itself"
    );

    let mut rng = Rng(seed);
    let mut n = 0;
    let started = Instant::now();
    let mut statements = 0;
    let mut answered = 0;
    for step in 0..steps {
        let sql = if rng.chance(70) {
            call(&mut rng, &pools, &mut n)
        } else {
            write(&mut rng, &pools, &mut n)
        };
        let here = answer(&mut b_both, &sql);
        answered += usize::from(here.is_ok());
        let there = answer(&mut b_alone, &translated(&sql, &pairs));
        statements += 2;
        let show = |r: &Result<String, String>| match r {
            Ok(t) => masked(t),
            Err(e) => format!("error: {}", masked(e)),
        };
        assert_eq!(
            show(&here),
            show(&there),
            "seed {seed}, step {step}: B's answer depends on A's rows\n{sql}\n\
             with A: {here:?}\nwithout A: {there:?}"
        );
        for ((q, want), (_, got)) in before.iter().zip(snapshot(&mut a)) {
            statements += 1;
            assert_eq!(
                &got, want,
                "seed {seed}, step {step}: B's step changed what A sees\n{sql}\nA's reader: {q}"
            );
        }
    }
    eprintln!(
        "tenant property: seed {seed}, {steps} steps ({answered} answered, the others refused), \
         {statements} statements in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    drop((a, b_both, b_alone, owner));
    agentmem_tests::pg_drop_database(&url, BOTH);
    agentmem_tests::pg_drop_database(&url, ALONE);
}
