//! agentmem as a PostgreSQL extension: `CREATE EXTENSION agentmem;`.
//!
//! This crate only translates: SQL values to core arguments and back, and the core's [`Conn`]
//! onto SPI. Every rule lives in `agentmem-core`.
//!
//! [`Conn`]: agentmem_core::Conn

// Internal SQL functions (trigger handlers, bootstrap) are spelled `mem__name`, like the
// SQLite ones, so that users can tell them from the public API.
#![allow(non_snake_case)]

use pgrx::prelude::*;

/// Rust memory comes from mimalloc, not the host's `malloc`: a call's many short-lived values
/// cost a fraction there (docs/design.md, "Allocation").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod catalog;
mod citus;
mod conn;
mod datum;
#[cfg(feature = "pg15")]
mod direct;
mod entry;
mod error;
mod functions;
mod home;
mod jsonb;
mod local;
mod owner;
mod page_space;
mod pinned;
mod reader;
mod relids;
mod route;
mod row_datums;
mod session;
mod transition;
mod triggers;

pgrx::pg_module_magic!();

// The schema comes from the same migration scripts as SQLite's `mem_init()`. Running them
// from the extension script makes every table, index and trigger a member of the extension.
extension_sql!(
    "SELECT mem__bootstrap();",
    name = "bootstrap_schema",
    finalize
);

/// In-database tests (`cargo pgrx test`): the extension's own view of its schema and errors.
/// Cross-backend behaviour is tested by the conformance suite in `tests/`.
#[cfg(any(test, feature = "pg_test"))]
#[pg_schema]
mod tests {

    use pgrx::pg_sys;
    use pgrx::prelude::*;

    #[pg_test]
    fn version_and_schema() {
        assert_eq!(
            Spi::get_one::<&str>("SELECT mem_version()").unwrap(),
            Some(agentmem_core::VERSION)
        );
        assert_eq!(
            Spi::get_one::<i64>("SELECT mem_init()").unwrap(),
            Some(agentmem_core::schema::latest_version())
        );
    }

    #[pg_test]
    fn plain_insert_is_completed() {
        let t = Spi::get_one::<String>("SELECT mem_thread_create('r1')")
            .unwrap()
            .unwrap();
        Spi::run_with_args(
            "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ($1, 'user', 'hello world')",
            &[t.as_str().into()],
        )
        .unwrap();
        let (idx, tokens) =
            Spi::get_two::<i64, i64>("SELECT message_index, token_count FROM mem_messages")
                .unwrap();
        assert_eq!((idx, tokens), (Some(0), Some(2)));
    }

    /// The bytes of a `jsonb` datum, header included.
    fn bytes(d: pg_sys::Datum) -> Vec<u8> {
        // SAFETY: a datum of an uncompressed, non-toasted varlena made in this call.
        unsafe {
            let p = d.cast_mut_ptr::<pg_sys::varlena>();
            std::slice::from_raw_parts(p as *const u8, pgrx::varlena::varsize_any(p)).to_vec()
        }
    }

    /// What `jsonb_in` makes of `text`.
    fn jsonb_in(text: &str) -> pg_sys::Datum {
        let c = std::ffi::CString::new(text).unwrap();
        // SAFETY: jsonb_in reads a NUL-terminated string that outlives the call.
        unsafe {
            pgrx::fcinfo::direct_function_call_as_datum(
                pg_sys::jsonb_in,
                &[Some(c.as_ptr().into())],
            )
        }
        .unwrap()
    }

    #[pg_test]
    fn plain_string_arrays_are_what_jsonb_in_makes() {
        let many: Vec<String> = (0..70).map(|i| format!("node-{i}")).collect();
        let many = serde_json::to_string(&many).unwrap();
        let mut row = crate::row_datums::RowDatums::default();
        for text in [
            "[]",
            r#"["a"]"#,
            r#"["é","b c",""]"#,
            r#"["",""]"#,
            many.as_str(),
        ] {
            let ours = crate::jsonb::from_plain_array(text).unwrap();
            assert_eq!(bytes(ours), bytes(jsonb_in(text)), "{text}");
            // Placed in a row's buffer after a value of an odd length.
            row.clear();
            row.text("odd").unwrap();
            let at = row.plain_array(text).unwrap();
            assert_eq!(bytes(row.datum(at)), bytes(jsonb_in(text)), "{text}");
        }
    }

    #[pg_test]
    fn lists_of_strings_are_what_jsonb_in_makes() {
        let many: Vec<String> = (0..70).map(|i| format!("node-{i}")).collect();
        let lists: [Vec<&str>; 5] = [
            vec![],
            vec!["a"],
            vec!["é∑😀", "b c", ""],
            vec!["q\"uote", "back\\slash", "tab\there", "\u{1f}"],
            many.iter().map(String::as_str).collect(),
        ];
        let mut row = crate::row_datums::RowDatums::default();
        for items in lists {
            let list = agentmem_core::Strings::of(&items);
            let json = list.to_json();
            let ours = crate::jsonb::from_strings(&list).unwrap();
            assert_eq!(bytes(ours), bytes(jsonb_in(&json)), "{json}");
            row.clear();
            row.text("odd").unwrap();
            let at = row.strings(&list).unwrap();
            assert_eq!(bytes(row.datum(at)), bytes(jsonb_in(&json)), "{json}");
        }
        let nul = agentmem_core::Strings::of(["a\u{0}b"]);
        assert!(crate::jsonb::from_strings(&nul).is_none());
    }

    #[pg_test]
    fn texts_in_a_rows_buffer_are_what_postgres_makes() {
        let mut row = crate::row_datums::RowDatums::default();
        let long = "x".repeat(5000);
        let texts = ["", "a", "é∑😀", "three", long.as_str()];
        let placed: Vec<usize> = texts.iter().map(|t| row.text(t).unwrap()).collect();
        for (t, at) in texts.iter().zip(placed) {
            assert_eq!(
                bytes(row.datum(at)),
                bytes((*t).into_datum().unwrap()),
                "{t}"
            );
        }
    }

    /// A JSON value of the kinds the writer lays out, from `seed`: nested arrays and objects
    /// (some wider than a JEntry stride, keys of equal and unequal lengths), integers at the
    /// `numeric` digit boundaries, strings with escapes and non-ASCII, booleans and null.
    fn value(seed: &mut u64, depth: u32) -> serde_json::Value {
        use serde_json::Value as J;
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = (*seed >> 33) as usize;
        let ints = [
            0,
            1,
            -1,
            7,
            9999,
            10000,
            -10001,
            123456789,
            100000000,
            i64::MAX,
            i64::MIN,
        ];
        match (r % 8, depth) {
            (0 | 1, d) if d < 4 => J::Array((0..r % 40).map(|_| value(seed, d + 1)).collect()),
            (2 | 3, d) if d < 4 => J::Object(
                (0..r % 40)
                    .map(|i| {
                        (
                            ["k", "id", "ab", "é", "a\"b", "label"][i % 6].repeat(1 + i / 6),
                            value(seed, d + 1),
                        )
                    })
                    .collect(),
            ),
            (4, _) => J::from(ints[r % ints.len()]),
            (5, _) => J::from(["", "x", "tab\there", "quote\"", "é∑😀", "back\\slash"][r % 6]),
            (6, _) => J::Bool(r % 2 == 0),
            _ => J::Null,
        }
    }

    #[pg_test]
    fn arrays_and_objects_are_what_jsonb_in_makes() {
        let mut seed = 42;
        let mut laid_out = 0;
        for _ in 0..300 {
            let v = value(&mut seed, 0);
            let text = serde_json::to_string(&v).unwrap();
            match crate::jsonb::from_json(&text) {
                Some(ours) => {
                    assert_eq!(bytes(ours), bytes(jsonb_in(&text)), "{text}");
                    laid_out += 1;
                }
                None => assert!(
                    !matches!(
                        v,
                        serde_json::Value::Array(_) | serde_json::Value::Object(_)
                    ),
                    "{text}"
                ),
            }
        }
        assert!(
            laid_out > 100,
            "only {laid_out} of 300 were arrays or objects"
        );
        for text in [
            r#"{"a":1.5}"#,
            r#"[1e2]"#,
            r#"["\u0000"]"#,
            "7",
            r#""s""#,
            "[-0]",
            "[18446744073709551615]",
        ] {
            assert!(crate::jsonb::from_json(text).is_none(), "{text}");
        }
        for repeated in [
            r#"{"b":2,"a":1,"b":3}"#,
            r#"{"a":1,"a":[2],"b\n":3,"a":{"c":4,"c":null},"b\n":"x\ty"}"#,
        ] {
            assert_eq!(
                bytes(crate::jsonb::from_json(repeated).unwrap()),
                bytes(jsonb_in(repeated)),
                "{repeated}"
            );
        }
    }

    #[pg_test]
    fn trees_the_core_builds_are_what_jsonb_in_makes() {
        use agentmem_core::{JsonTree as T, Strings};
        let many: Vec<String> = (0..70).map(|i| format!("n-{i}")).collect();
        let lists: [Vec<&str>; 4] = [
            vec![],
            vec!["a"],
            many.iter().map(String::as_str).collect(),
            vec!["q\"uote", "é∑😀", "tab\there", "back\\slash"],
        ];
        for list in lists {
            let list = Strings::of(&list);
            let tree = T::Object(vec![
                ("via".into(), T::Strings(list.clone())),
                ("id".into(), T::from("x")),
                ("filePath".into(), T::from(None)),
                (
                    "byDepth".into(),
                    T::Array(vec![T::Int(3), T::Strings(list.clone()), T::Bool(true)]),
                ),
            ]);
            let text = tree.to_text();
            let ours = crate::jsonb::from_tree(&tree).unwrap();
            assert_eq!(bytes(ours), bytes(jsonb_in(&text)), "{text}");
            let top = T::Strings(list);
            let ours = crate::jsonb::from_tree(&top).unwrap();
            assert_eq!(bytes(ours), bytes(jsonb_in(&top.to_text())));
        }
        // Scalars, and a string jsonb refuses, are left to jsonb_in.
        for scalar in [T::Int(1), T::from("s"), T::Null] {
            assert!(crate::jsonb::from_tree(&scalar).is_none());
        }
        let nul = T::Array(vec![T::Strings(Strings::of(["a\u{0}b"]))]);
        assert!(crate::jsonb::from_tree(&nul).is_none());
    }

    #[pg_test]
    fn keys_read_as_runs_are_the_keys_asked_for() {
        use agentmem_core::db::direct::{Each, Scan};
        use agentmem_core::Value;
        Spi::run("SET LOCAL search_path = public").unwrap();
        Spi::run("CREATE TABLE runs_t (k bigint PRIMARY KEY, v text)").unwrap();
        Spi::run(
            "INSERT INTO runs_t SELECT k, 'v' || k FROM generate_series(1, 40) k WHERE k <> 7",
        )
        .unwrap();
        // Runs with rows between their keys that were not asked for, a key with no row, and
        // keys alone.
        let asked = [2, 3, 5, 7, 9, 20, 22, 39];
        let keys: Vec<Value> = asked.iter().map(|&k| Value::Int(k)).collect();
        let runs = Each::single(&keys).runs(crate::direct::RUN_GAP).unwrap();
        assert!(runs.len() < keys.len() && runs.len() > 1);
        let scan = Scan {
            table: "runs_t",
            index: "runs_t_pkey",
            equal: &[],
            from: None,
            each: Some(Each::single(&keys)),
            columns: &["v", "k"],
            kept: false,
        };
        let mut got = Vec::new();
        let read = crate::direct::scan(&scan, &mut |r| {
            got.push((r[1].as_i64().unwrap(), r[0].as_str().unwrap().to_owned()));
            true
        });
        assert!(read.unwrap());
        let want: Vec<(i64, String)> = asked
            .iter()
            .filter(|&&k| k != 7)
            .map(|&k| (k, format!("v{k}")))
            .collect();
        assert_eq!(got, want);
    }

    #[pg_test]
    fn tables_are_found_in_the_extensions_schemas_whatever_the_search_path() {
        let regclass = |name: &str| {
            Spi::get_one::<pg_sys::Oid>(&format!("SELECT CAST('{name}' AS regclass)::oid"))
                .unwrap()
                .unwrap()
        };
        let home: String = Spi::get_one(
            "SELECT quote_ident(n.nspname) FROM pg_extension e \
             JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'agentmem'",
        )
        .unwrap()
        .unwrap();
        let private = agentmem_core::schema::PRIVATE_SCHEMA;
        assert_eq!(crate::relids::table("relids_t"), pg_sys::InvalidOid);
        Spi::run(&format!("CREATE TABLE {home}.relids_t (k int PRIMARY KEY)")).unwrap();
        let first = regclass(&format!("{home}.relids_t"));
        assert_eq!(crate::relids::table("relids_t"), first);
        // A table of the same name earlier on the caller's path changes nothing, nor does a
        // path without the extension's schema, nor one through the user's schema.
        Spi::run("CREATE SCHEMA relids_a; CREATE TABLE relids_a.relids_t (k int)").unwrap();
        for path in ["relids_a", "relids_a, public", "\"$user\", relids_a"] {
            Spi::run(&format!("SET LOCAL search_path = {path}")).unwrap();
            assert_eq!(crate::relids::table("relids_t"), first, "{path}");
        }
        Spi::run("RESET search_path").unwrap();
        // Dropped and made again; renamed.
        Spi::run(&format!(
            "DROP TABLE {home}.relids_t; CREATE TABLE {home}.relids_t (k int PRIMARY KEY)"
        ))
        .unwrap();
        let again = regclass(&format!("{home}.relids_t"));
        assert_ne!(again, first);
        assert_eq!(crate::relids::table("relids_t"), again);
        Spi::run(&format!("ALTER TABLE {home}.relids_t RENAME TO relids_u")).unwrap();
        assert_eq!(crate::relids::table("relids_t"), pg_sys::InvalidOid);
        assert_eq!(crate::relids::table("relids_u"), again);
        // The private schema is looked in after the extension's.
        Spi::run(&format!(
            "CREATE TABLE {private}.relids_p (k int PRIMARY KEY)"
        ))
        .unwrap();
        let private_t = regclass(&format!("{private}.relids_p"));
        assert_eq!(crate::relids::table("relids_p"), private_t);
        Spi::run(&format!("CREATE TABLE {home}.relids_p (k int)")).unwrap();
        assert_eq!(
            crate::relids::table("relids_p"),
            regclass(&format!("{home}.relids_p"))
        );
        // Indexes by schema and name.
        let ns = crate::relids::schema(private);
        assert_ne!(ns, pg_sys::InvalidOid);
        let pkey = crate::relids::in_schema("relids_p_pkey", ns);
        assert_eq!(pkey, regclass(&format!("{private}.relids_p_pkey")));
        Spi::run(&format!(
            "ALTER INDEX {private}.relids_p_pkey RENAME TO relids_p_key"
        ))
        .unwrap();
        assert_eq!(
            crate::relids::in_schema("relids_p_pkey", ns),
            pg_sys::InvalidOid
        );
        assert_eq!(crate::relids::in_schema("relids_p_key", ns), pkey);
    }

    #[pg_test(error = "thread not found: nope")]
    fn unknown_thread_is_refused() {
        Spi::run("SELECT mem_message_add('nope', 'user', 'x')").unwrap();
    }

    #[pg_test(error = "deliberate panic from mem__selftest_panic")]
    fn panic_becomes_error() {
        Spi::run("SELECT mem__selftest_panic()").unwrap();
    }
}

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
