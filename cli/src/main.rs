//! `agentmem`: the memory of an AI coding agent on the command line, and as an MCP server.
//!
//! Every command is a call of one of agentmem's SQL functions on a SQLite file (the extension
//! is linked into this binary) or a Postgres database (the extension installed there); the
//! rules all live in the core, as for any other client.

mod args;
mod commands;
mod db;
mod index;
mod mcp;
mod output;
mod progress;
mod ui;

use args::{Cli, Command};
use clap::Parser;
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let g = cli.global;
    // An index's walk starts before the database opens.
    let begun = match &cli.command {
        Command::Index(a) => match index::begin(a) {
            Ok(b) => Some(b),
            Err(e) => return fail(&e),
        },
        _ => None,
    };
    let mut db = match db::open(g.db.as_deref(), g.pg.as_deref()) {
        Ok(db) => db,
        Err(e) => return fail(&e),
    };
    if let Command::Mcp(scope) = &cli.command {
        return match mcp::serve(db, scope) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        };
    }
    if let Command::Ui(options) = &cli.command {
        return match ui::serve(db, options) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        };
    }
    let style = output::Style {
        json: g.json,
        width: g.width,
    };
    let show = !g.quiet && (g.progress || std::io::stderr().is_terminal());
    let done = match (cli.command, begun) {
        (Command::Index(a), Some(begun)) => index::run(db.as_mut(), style, show, a, begun),
        (command, _) => commands::run(db.as_mut(), style, show, command),
    };
    match done {
        Ok(text) => {
            output::print(&text);
            ExitCode::SUCCESS
        }
        Err(e) => fail(&e),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("agentmem: {message}");
    ExitCode::FAILURE
}
