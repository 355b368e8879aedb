//! The command line.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// agentmem: the memory of an AI coding agent, in a SQLite file or a Postgres database.
#[derive(Parser)]
#[command(name = "agentmem", version, about, max_term_width = 100)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args)]
pub struct Global {
    /// A SQLite file (created and initialised when new).
    #[arg(long, global = true, env = "AGENTMEM_DB", value_name = "FILE")]
    pub db: Option<String>,
    /// A Postgres connection string or URL, of a database with the agentmem extension.
    #[arg(long, global = true, env = "AGENTMEM_PG", value_name = "CONNINFO")]
    pub pg: Option<String>,
    /// Print JSON instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
    /// Cut table cells to this many characters (0: never).
    #[arg(long, global = true, default_value_t = 60, value_name = "CHARS")]
    pub width: usize,
    /// Show the progress of long operations even when standard error is not a terminal.
    #[arg(long, global = true, conflicts_with = "quiet")]
    pub progress: bool,
    /// Never show progress.
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// Create or migrate the schema (SQLite); report its version.
    Init,
    /// Search past messages and observations (BM25 with a recency boost).
    Search(Search),
    /// List threads, newest first.
    Threads(Threads),
    /// A thread's messages in order.
    Messages(Messages),
    /// Ask the long-term memory what bears on a question.
    Recall(Recall),
    /// Task memory: the ready queue, claims, dependencies.
    #[command(subcommand)]
    Tasks(Tasks),
    /// What the memory holds: totals, averages, a breakdown.
    Stats(Stats),
    /// Write a thread, a resource or everything as JSON or Markdown.
    Export(Export),
    /// Read an export (JSON) into this database.
    Import(Import),
    /// Delete everything of a resource, search index included.
    Forget(Forget),
    /// Rebuild the search index from the messages.
    Reindex,
    /// Merge the search index into one segment.
    Optimize,
    /// Compare the search index with the messages; list every difference.
    Check,
    /// The tools the model gets, as definitions (MCP, OpenAI or Anthropic shape).
    Tools(Tools),
    /// Run one tool call, as the model would.
    Tool(Tool),
    /// Serve the tools to an MCP client over standard input and output.
    Mcp(Scope),
    /// Feed the memory observer one hook event of a coding agent, read as JSON on standard
    /// input (docs/observer.md).
    Observe(Observe),
    /// Index a source tree into the code graph: the files that changed since the last run,
    /// and the removal of those that are gone (docs/graph.md, "The code graph").
    Index(Index),
    /// Serve the memory panel: a local web app to see and govern what the agent knows
    /// (docs/ui.md).
    Ui(Ui),
}

#[derive(Args)]
pub struct Ui {
    /// The resource the pages open with (a project, `project:webapp`).
    #[arg(long)]
    pub resource: Option<String>,
    /// The port (0: a free one, chosen by the system).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// The address to listen on. Anything but the loopback interface must be given here
    /// explicitly: the panel reads and changes the memory of whoever holds its token.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
}

#[derive(Args)]
pub struct Index {
    /// The root of the tree (its `.gitignore` files are respected, as by git).
    #[arg(default_value = ".")]
    pub dir: String,
    /// The resource the graph belongs to (default: `project:` and the root folder's name).
    #[arg(long)]
    pub resource: Option<String>,
    /// Index every text file, not only those of a language with a grammar (the others are
    /// cut into windows of lines).
    #[arg(long)]
    pub all: bool,
    /// Skip files larger than this many bytes.
    #[arg(long, default_value_t = 1 << 20, value_name = "BYTES")]
    pub max_size: u64,
    /// Keep watching the tree: after each change settles, index what changed (one line of
    /// JSON per pass that wrote something).
    #[arg(long)]
    pub watch: bool,
    /// Files per call (and transaction): a batch's references to each other are resolved
    /// once.
    #[arg(long, default_value_t = 128, value_name = "FILES")]
    pub batch: usize,
}

#[derive(Args)]
pub struct Observe {
    /// The project the agent works on: the session's resource.
    #[arg(long)]
    pub resource: String,
    /// The session's type when the hook starts it (build, insights, roadmap, terminal,
    /// changelog, spec, pr_review).
    #[arg(long)]
    pub session_type: Option<String>,
    /// How a session that ends with this hook ended (success, failure, partial, abandoned).
    #[arg(long)]
    pub outcome: Option<String>,
    /// The thread the session belongs to.
    #[arg(long)]
    pub thread: Option<String>,
}

#[derive(Args)]
pub struct Search {
    /// What to look for (an agent's words: identifiers, paths, phrases in quotes).
    pub query: String,
    #[arg(long, default_value_t = 10)]
    pub limit: i64,
    #[arg(long)]
    pub thread: Option<String>,
    #[arg(long)]
    pub resource: Option<String>,
    /// user, assistant, system or tool.
    #[arg(long)]
    pub role: Option<String>,
}

#[derive(Args)]
pub struct Threads {
    #[arg(long)]
    pub resource: Option<String>,
    #[arg(long)]
    pub agent: Option<String>,
    /// active, archived or deleted.
    #[arg(long)]
    pub state: Option<String>,
    /// A case-insensitive part of the title.
    #[arg(long)]
    pub title: Option<String>,
    #[arg(long, default_value_t = 50)]
    pub limit: i64,
    /// The last row's cursor, for the next page.
    #[arg(long)]
    pub cursor: Option<String>,
}

#[derive(Args)]
pub struct Messages {
    pub thread: String,
    #[arg(long, default_value_t = 50)]
    pub limit: i64,
    /// Messages after this index.
    #[arg(long)]
    pub after: Option<i64>,
    /// Messages before this index.
    #[arg(long)]
    pub before: Option<i64>,
    /// Newest first.
    #[arg(long)]
    pub desc: bool,
}

#[derive(Args)]
pub struct Recall {
    pub query: String,
    #[arg(long)]
    pub resource: Option<String>,
    /// define, implement, validate, refine, explore or reflect.
    #[arg(long)]
    pub phase: Option<String>,
    /// A file you are working in (repeat for more).
    #[arg(long = "file", value_name = "PATH")]
    pub files: Vec<String>,
    #[arg(long, default_value_t = 20)]
    pub limit: i64,
    /// Most tokens the results may take.
    #[arg(long)]
    pub budget: Option<i64>,
}

#[derive(Subcommand)]
pub enum Tasks {
    /// Tasks that can be worked on: open, not blocked.
    Ready {
        #[arg(long, default_value_t = 10)]
        limit: i64,
    },
    /// Tasks by status.
    List {
        /// open, in_progress or closed.
        #[arg(long)]
        status: Option<String>,
        #[arg(long, default_value_t = 100)]
        limit: i64,
    },
    /// One task with its dependencies and what blocks it.
    Show { id: String },
    /// A new task; prints its id.
    Create(CreateTask),
    /// Take a task for a session, atomically.
    Claim {
        id: String,
        #[arg(long)]
        session: String,
        /// The conversation working on it.
        #[arg(long)]
        thread: Option<String>,
    },
    /// Close a task with what was done.
    Close {
        id: String,
        #[arg(long)]
        summary: String,
        /// completed, wontfix or duplicate.
        #[arg(long, default_value = "completed")]
        reason: String,
    },
}

#[derive(Args)]
pub struct CreateTask {
    pub title: String,
    #[arg(long)]
    pub description: Option<String>,
    /// 0 (highest) to 4.
    #[arg(long)]
    pub priority: Option<i64>,
    /// bug, feature, task, epic or chore.
    #[arg(long = "type")]
    pub kind: Option<String>,
    /// A label (repeat for more).
    #[arg(long = "label")]
    pub labels: Vec<String>,
    /// The epic it belongs to.
    #[arg(long)]
    pub parent: Option<String>,
    /// Your own id.
    #[arg(long)]
    pub id: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum By {
    Resource,
    Agent,
    Day,
}

#[derive(Args)]
pub struct Stats {
    #[arg(long)]
    pub by: Option<By>,
    #[arg(long)]
    pub resource: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    Json,
    Markdown,
}

#[derive(Args)]
pub struct Export {
    #[arg(long, conflicts_with = "resource")]
    pub thread: Option<String>,
    #[arg(long)]
    pub resource: Option<String>,
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    /// Write here instead of standard output.
    #[arg(long, short)]
    pub output: Option<String>,
}

#[derive(Args)]
pub struct Import {
    /// A JSON export (`-` for standard input).
    pub file: String,
}

#[derive(Args)]
pub struct Forget {
    pub resource: String,
    /// Confirms the hard delete.
    #[arg(long)]
    pub yes: bool,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum ToolFormat {
    Mcp,
    Openai,
    Anthropic,
}

#[derive(Args)]
pub struct Tools {
    #[arg(long, value_enum, default_value = "mcp")]
    pub format: ToolFormat,
}

#[derive(Args)]
pub struct Tool {
    /// memory_search, task_query, task_mutate, memory_recall, memory_remember, graph_impact
    /// or graph_neighbors.
    pub name: String,
    /// The model's arguments, a JSON object.
    pub input: String,
    #[command(flatten)]
    pub scope: Scope,
}

/// What the agent knows and the model does not: bounds every tool call.
#[derive(Args, Clone)]
pub struct Scope {
    /// The project (or user) the session works for; searches and recalls stay within it.
    #[arg(long)]
    pub resource: Option<String>,
    /// The conversation; searches stay within it, claims link it.
    #[arg(long)]
    pub thread: Option<String>,
    /// The agent session; claims and memories record it.
    #[arg(long)]
    pub session: Option<String>,
}

impl Scope {
    /// The tools' `context` argument.
    pub fn context(&self) -> String {
        let mut o = serde_json::Map::new();
        for (key, v) in [
            ("resourceId", &self.resource),
            ("threadId", &self.thread),
            ("sessionId", &self.session),
        ] {
            if let Some(v) = v {
                o.insert(key.into(), v.clone().into());
            }
        }
        serde_json::Value::Object(o).to_string()
    }
}
