//! Each command: the function it calls, with its options, and how its answer is shown.

use crate::args::{self, Command};
use crate::db::{self, Db, Result};
use crate::output::{self, Style};
use crate::progress::{size, Progress};
use serde_json::{Map, Value as Json};
use std::io::{Read, Write};

/// An options object with only the keys that were given.
#[derive(Default)]
struct Options(Map<String, Json>);

impl Options {
    fn set(mut self, key: &str, v: Option<impl Into<Json>>) -> Self {
        if let Some(v) = v {
            self.0.insert(key.into(), v.into());
        }
        self
    }

    fn text(self) -> String {
        Json::Object(self.0).to_string()
    }
}

/// Runs `command`; returns what goes to standard output.
pub fn run(db: &mut dyn Db, style: Style, show: bool, command: Command) -> Result<String> {
    match command {
        Command::Init => Ok(output::json(style, &db::scalar(db, "mem_init", &[])?)),
        Command::Search(a) => {
            let o = Options::default()
                .set("limit", Some(a.limit))
                .set("thread_id", a.thread)
                .set("resource_id", a.resource)
                .set("role", a.role)
                .text();
            let t = db::table(db, "mem_search", &[Some(&a.query), Some(&o)])?;
            Ok(output::table(
                style,
                &t,
                &[
                    "message_id",
                    "role",
                    "score",
                    "created_at",
                    "source",
                    "snippet",
                ],
            ))
        }
        Command::Threads(a) => {
            let o = Options::default()
                .set("resource_id", a.resource)
                .set("agent_id", a.agent)
                .set("state", a.state)
                .set("title", a.title)
                .set("limit", Some(a.limit))
                .set("cursor", a.cursor)
                .text();
            let t = db::table(db, "mem_thread_list", &[Some(&o)])?;
            Ok(output::table(
                style,
                &t,
                &[
                    "id",
                    "resource_id",
                    "title",
                    "state",
                    "message_count",
                    "token_count",
                    "updated_at",
                ],
            ))
        }
        Command::Messages(a) => {
            let o = Options::default()
                .set("limit", Some(a.limit))
                .set("after", a.after)
                .set("before", a.before)
                .set("order", a.desc.then_some("desc"))
                .text();
            let t = db::table(db, "mem_messages_page", &[Some(&a.thread), Some(&o)])?;
            Ok(output::table(
                style,
                &t,
                &[
                    "message_index",
                    "role",
                    "token_count",
                    "created_at",
                    "content",
                ],
            ))
        }
        Command::Recall(a) => {
            let o = Options::default()
                .set("resource_id", a.resource)
                .set("phase", a.phase)
                .set("current_files", (!a.files.is_empty()).then_some(a.files))
                .set("limit", Some(a.limit))
                .set("budget", a.budget)
                .text();
            let t = db::table(db, "mem_recall_hybrid", &[Some(&a.query), Some(&o)])?;
            Ok(output::table(
                style,
                &t,
                &["kind", "id", "score", "tokens", "content"],
            ))
        }
        Command::Tasks(t) => tasks(db, style, t),
        Command::Stats(a) => {
            let by = a.by.map(|b| match b {
                args::By::Resource => "resource",
                args::By::Agent => "agent",
                args::By::Day => "day",
            });
            let o = Options::default()
                .set("by", by)
                .set("resource_id", a.resource)
                .text();
            Ok(output::json(
                style,
                &db::scalar(db, "mem_stats", &[Some(&o)])?,
            ))
        }
        Command::Export(a) => export(db, show, a),
        Command::Import(a) => import(db, style, show, a),
        Command::Forget(a) => {
            if !a.yes {
                return Err(format!(
                    "forget deletes every row of resource {:?} for good; add --yes to do it",
                    a.resource
                ));
            }
            Ok(output::json(
                style,
                &db::scalar(db, "mem_forget", &[Some(&a.resource)])?,
            ))
        }
        Command::Reindex => timed(show, "reindex", || {
            let n = db::scalar(db, "mem_reindex", &[])?;
            Ok((format!("{n} messages indexed"), n))
        })
        .map(|v| output::json(style, &v)),
        Command::Optimize => timed(show, "optimize", || {
            let v = db::scalar(db, "mem_optimize", &[])?;
            Ok(("index merged".to_string(), v))
        })
        .map(|v| output::json(style, &v)),
        Command::Check => {
            let t = db::table(db, "mem_index_check", &[])?;
            Ok(output::table(style, &t, &["problem"]))
        }
        Command::Tools(a) => {
            let format = match a.format {
                args::ToolFormat::Mcp => "mcp",
                args::ToolFormat::Openai => "openai",
                args::ToolFormat::Anthropic => "anthropic",
            };
            Ok(output::json(
                style,
                &db::scalar(db, "mem_tools", &[Some(format)])?,
            ))
        }
        Command::Tool(a) => {
            let ctx = a.scope.context();
            let answer = db::scalar(db, "mem_tool", &[Some(&a.name), Some(&a.input), Some(&ctx)])?;
            Ok(output::json(style, &answer))
        }
        Command::Observe(a) => {
            let mut payload = String::new();
            std::io::stdin()
                .read_to_string(&mut payload)
                .map_err(|e| format!("reading the hook payload from standard input: {e}"))?;
            let o = Options::default()
                .set("session_type", a.session_type)
                .set("outcome", a.outcome)
                .set("thread_id", a.thread)
                .text();
            let answer = db::scalar(
                db,
                "mem_observe_hook",
                &[Some(&a.resource), Some(&payload), Some(&o)],
            )?;
            Ok(output::json(style, &answer))
        }
        Command::Mcp(_) => unreachable!("the MCP server is started by main"),
        Command::Ui(_) => unreachable!("the panel is started by main"),
        Command::Index(_) => unreachable!("an index is begun by main"),
    }
}

fn tasks(db: &mut dyn Db, style: Style, command: args::Tasks) -> Result<String> {
    let list_columns: &[&str] = &[
        "id", "title", "status", "priority", "type", "assignee", "labels",
    ];
    match command {
        args::Tasks::Ready { limit } => {
            let o = Options::default().set("limit", Some(limit)).text();
            let t = db::table(db, "task_ready", &[Some(&o)])?;
            Ok(output::table(style, &t, list_columns))
        }
        args::Tasks::List { status, limit } => {
            let o = Options::default()
                .set("status", status)
                .set("limit", Some(limit))
                .text();
            let t = db::table(db, "task_list", &[Some(&o)])?;
            Ok(output::table(style, &t, list_columns))
        }
        args::Tasks::Show { id } => Ok(output::json(
            style,
            &db::scalar(db, "task_show", &[Some(&id)])?,
        )),
        args::Tasks::Create(a) => {
            let o = Options::default()
                .set("description", a.description)
                .set("priority", a.priority)
                .set("type", a.kind)
                .set("labels", (!a.labels.is_empty()).then_some(a.labels))
                .set("parent", a.parent)
                .set("id", a.id)
                .text();
            let id = db::scalar(db, "task_create", &[Some(&a.title), Some(&o)])?;
            Ok(output::json(style, &id))
        }
        args::Tasks::Claim {
            id,
            session,
            thread,
        } => {
            let s = db::scalar(
                db,
                "task_claim",
                &[Some(&id), Some(&session), thread.as_deref()],
            )?;
            Ok(output::json(style, &s))
        }
        args::Tasks::Close {
            id,
            summary,
            reason,
        } => {
            let s = db::scalar(
                db,
                "task_close",
                &[Some(&id), Some(&reason), Some(&summary)],
            )?;
            Ok(output::json(style, &s))
        }
    }
}

/// Runs `work` with a progress line; the line ends with the summary `work` gives.
fn timed(show: bool, label: &str, work: impl FnOnce() -> Result<(String, Json)>) -> Result<Json> {
    let p = Progress::start(label, show);
    let (summary, value) = work()?;
    p.finish(&summary);
    Ok(value)
}

/// Streams the export a row at a time (`mem_export_rows`) to the output, so neither side
/// holds it whole. JSON is reassembled into `mem_export`'s document, key for key.
fn export(db: &mut dyn Db, show: bool, a: args::Export) -> Result<String> {
    let scope = Options::default()
        .set("thread_id", a.thread)
        .set("resource_id", a.resource)
        .text();
    let format = match a.format {
        args::Format::Json => "json",
        args::Format::Markdown => "markdown",
    };
    let mut out: Box<dyn Write> = match &a.output {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let p = Progress::start("export", show);
    let mut writer = ExportWriter::new(format == "json");
    db::rows_each(
        db,
        "mem_export_rows",
        &[Some(&scope), Some(format)],
        &mut |_, row| {
            let mut cells = row.into_iter().skip(1);
            let part = cells
                .next()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let body = match cells.next() {
                Some(Json::String(s)) => s,
                Some(other) => other.to_string(),
                None => String::new(),
            };
            p.item(body.len());
            writer
                .row(&mut out, &part, &body)
                .map_err(|e| e.to_string())
        },
    )?;
    writer.end(&mut out).map_err(|e| e.to_string())?;
    out.flush().map_err(|e| e.to_string())?;
    p.finish(&format!(
        "{} records, {}",
        writer.records,
        size(writer.bytes)
    ));
    Ok(String::new())
}

/// Writes export rows out: Markdown sections as they come; JSON as the document
/// `mem_export` gives, its tables filled as their records come (the first row is the
/// document with every table empty).
struct ExportWriter {
    json: bool,
    /// Tables of the document not written yet, and the one being written.
    pending: Vec<String>,
    table: Option<String>,
    records: u64,
    bytes: u64,
}

impl ExportWriter {
    fn new(json: bool) -> ExportWriter {
        ExportWriter {
            json,
            pending: Vec::new(),
            table: None,
            records: 0,
            bytes: 0,
        }
    }

    fn row(&mut self, out: &mut dyn Write, part: &str, body: &str) -> std::io::Result<()> {
        self.bytes += body.len() as u64;
        if !self.json {
            self.records += 1;
            return out.write_all(body.as_bytes());
        }
        if part == "export" {
            let Ok(Json::Object(mut doc)) = serde_json::from_str::<Json>(body) else {
                return Err(std::io::Error::other(
                    "the export's first row is not its document",
                ));
            };
            if let Some(Json::Object(tables)) = doc.remove("tables") {
                self.pending = tables.keys().cloned().collect();
            }
            let head = Json::Object(doc).to_string();
            let head = head.strip_suffix('}').unwrap_or(&head);
            let comma = if head.len() > 1 { "," } else { "" };
            return write!(out, "{head}{comma}\"tables\":{{");
        }
        self.records += 1;
        if self.table.as_deref() == Some(part) {
            out.write_all(b",")?;
        } else {
            self.open(out, part)?;
        }
        out.write_all(body.as_bytes())
    }

    /// Closes the table being written and opens `table`.
    fn open(&mut self, out: &mut dyn Write, table: &str) -> std::io::Result<()> {
        if self.table.is_some() {
            out.write_all(b"],")?;
        }
        self.pending.retain(|t| t != table);
        self.table = Some(table.to_string());
        write!(out, "{}:[", Json::from(table))
    }

    fn end(&mut self, out: &mut dyn Write) -> std::io::Result<()> {
        if !self.json {
            return Ok(());
        }
        // Tables without a record are in the document too.
        for t in std::mem::take(&mut self.pending) {
            self.open(out, &t)?;
        }
        if self.table.is_some() {
            out.write_all(b"]")?;
        }
        out.write_all(b"}}\n")
    }
}

/// Reads the export (reporting the bytes read), then writes it in one transaction.
fn import(db: &mut dyn Db, style: Style, show: bool, a: args::Import) -> Result<String> {
    let mut text = String::new();
    let read = if a.file == "-" {
        std::io::stdin().read_to_string(&mut text)
    } else {
        std::fs::File::open(&a.file).and_then(|mut f| f.read_to_string(&mut text))
    };
    read.map_err(|e| format!("{}: {e}", a.file))?;
    let answer = timed(show, "import", || {
        let v = db::scalar(db, "mem_import", &[Some(&text)])?;
        Ok((format!("{} read", size(text.len() as u64)), v))
    })?;
    Ok(output::json(style, &answer))
}
