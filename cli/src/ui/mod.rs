//! `agentmem ui`: the memory panel, a local web app over the catalog's functions.
//!
//! One synchronous server on one connection: requests are served one at a time, as a person
//! clicks, each one a catalog call (api.rs) after the guard's checks (guard.rs). The pages
//! are plain script over that API (assets.rs, `cli/ui/`), which writes every value into the
//! page as text, never as markup.

mod api;
mod assets;
mod guard;

use crate::args::Ui;
use crate::db::Db;
use guard::{Guard, Seen};
use std::io::{Read, Write};
use std::time::Instant;
use tiny_http::{Header, Method, Request, Response, Server};

/// The largest request body read: a memory's content is at most 100,000 characters.
const MAX_BODY: u64 = 2 << 20;

/// The headers of every answer: nothing is cached, framed, sniffed or referred, and a page
/// runs only the panel's own script.
const HEADERS: &[(&str, &str)] = &[
    (
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    ),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
    ("Cache-Control", "no-store"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
];

/// Serves the panel until the process is stopped.
pub fn serve(mut db: Box<dyn Db>, options: &Ui) -> Result<(), String> {
    // The default is the loopback interface; any other address came from --host.
    if !guard::is_loopback(&options.host) {
        eprintln!(
            "agentmem ui: serving on {} as --host asks: anyone who can reach it and holds the \
             token can read and change this memory",
            options.host
        );
    }
    let at = format!("{}:{}", options.host, options.port);
    let listener = std::net::TcpListener::bind((options.host.as_str(), options.port))
        .map_err(|e| format!("{at}: {e}"))?;
    // Accepted connections inherit it (Linux): without it an answer written in two parts
    // waits for the client's delayed acknowledgement, 40 ms a request.
    socket2::SockRef::from(&listener)
        .set_tcp_nodelay(true)
        .map_err(|e| format!("{at}: {e}"))?;
    let server = Server::from_listener(listener, None).map_err(|e| format!("{at}: {e}"))?;
    let port = server
        .server_addr()
        .to_ip()
        .map(|a| a.port())
        .ok_or("the server has no IP address")?;
    let guard = Guard::new(&options.host, port, guard::new_token()?);
    let config = serde_json::json!({
        "resource": options.resource,
        "version": agentmem_core::VERSION,
    });
    println!("agentmem ui: {}", guard.url());
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    for request in server.incoming_requests() {
        let response = answer(db.as_mut(), &guard, &config, request);
        if let Err(e) = response {
            eprintln!("agentmem ui: {e}");
        }
    }
    Ok(())
}

/// Answers one request.
fn answer(
    db: &mut dyn Db,
    guard: &Guard,
    config: &serde_json::Value,
    mut request: Request,
) -> std::io::Result<()> {
    let path = request
        .url()
        .split(['?', '#'])
        .next()
        .unwrap_or("/")
        .to_owned();
    let api = path == "/api" || path.starts_with("/api/");
    let header = |name: &str| {
        request
            .headers()
            .iter()
            .find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name))
            .map(|h| h.value.as_str().to_owned())
    };
    let (host, origin, site, token) = (
        header("host"),
        header("origin"),
        header("sec-fetch-site"),
        header(guard::TOKEN_HEADER),
    );
    let seen = Seen {
        host: host.as_deref(),
        origin: origin.as_deref(),
        fetch_site: site.as_deref(),
        token: token.as_deref(),
    };
    if let Err(r) = guard.check(&seen, api) {
        return respond(request, r.status, error(r.reason), None);
    }
    match (request.method(), path.as_str()) {
        (Method::Get, "/api") => respond(request, 200, api::index(), None),
        (Method::Get, "/api/config") => respond(request, 200, config.clone(), None),
        (Method::Post, p) if p.starts_with("/api/") => {
            let name = p["/api/".len()..].to_owned();
            let mut body = Vec::new();
            let read = request
                .as_reader()
                .take(MAX_BODY + 1)
                .read_to_end(&mut body);
            if read.is_err() {
                return respond(request, 400, error("the body could not be read"), None);
            }
            if body.len() as u64 > MAX_BODY {
                return respond(request, 413, error("the body is larger than 2 MiB"), None);
            }
            let started = Instant::now();
            let result = api::call(db, &name, &body);
            let took = started.elapsed();
            match result {
                Ok(v) => respond(request, 200, v, Some(took)),
                Err(f) => respond(request, f.status, error(&f.message), Some(took)),
            }
        }
        (_, _) if api => respond(
            request,
            405,
            error("the API takes GET /api, GET /api/config and POST /api/<function>"),
            None,
        ),
        (Method::Get | Method::Head, p) => match assets::find(p) {
            Some(a) => send(request, 200, a.media_type, a.body.as_bytes().to_vec(), None),
            None => send(
                request,
                404,
                "text/plain; charset=utf-8",
                b"not found".to_vec(),
                None,
            ),
        },
        _ => send(
            request,
            405,
            "text/plain; charset=utf-8",
            b"method not allowed".to_vec(),
            None,
        ),
    }
}

fn error(message: &str) -> serde_json::Value {
    serde_json::json!({ "error": message })
}

fn respond(
    request: Request,
    status: u16,
    body: serde_json::Value,
    took: Option<std::time::Duration>,
) -> std::io::Result<()> {
    send(
        request,
        status,
        "application/json",
        body.to_string().into_bytes(),
        took,
    )
}

/// Sends `body` with the panel's headers; an API answer says how long the database took
/// (`Server-Timing`, which the benchmark reads).
fn send(
    request: Request,
    status: u16,
    media_type: &str,
    body: Vec<u8>,
    took: Option<std::time::Duration>,
) -> std::io::Result<()> {
    let mut response = Response::from_data(body).with_status_code(status);
    let mut add = |name: &str, value: &str| {
        if let Ok(h) = Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            response.add_header(h);
        }
    };
    add("Content-Type", media_type);
    for (name, value) in HEADERS {
        add(name, value);
    }
    if let Some(t) = took {
        add(
            "Server-Timing",
            &format!("db;dur={:.3}", t.as_secs_f64() * 1000.0),
        );
    }
    request.respond(response)
}
