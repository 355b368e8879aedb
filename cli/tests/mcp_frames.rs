//! `agentmem mcp` fed raw JSON-RPC frames, as an adversarial client writes them: each bad
//! frame gets JSON-RPC's error, with its id wherever it has one, and the server goes on
//! serving. Each frame waits for its answer, so a missing one fails the test, never hangs it.

use serde_json::{json, Value as Json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_agentmem");

/// Ample for a debug build on a busy machine.
const WAIT: Duration = Duration::from_secs(20);

const PARSE_ERROR: i64 = -32700;

/// The server as a child process, with its answers read line by line on a thread.
struct Server {
    child: Child,
    input: Option<ChildStdin>,
    answers: Receiver<String>,
}

impl Server {
    fn start(name: &str) -> Server {
        let dir = std::env::temp_dir().join(format!("agentmem-mcp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = Command::new(BIN)
            .env_remove("AGENTMEM_PG")
            .env_remove("AGENTMEM_DB")
            .args(["mcp", "--db"])
            .arg(dir.join("memory.db"))
            .args(["--resource", "project:webapp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("starting agentmem mcp");
        let output = BufReader::new(child.stdout.take().unwrap());
        let (sender, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in output.lines() {
                if sender.send(line.unwrap()).is_err() {
                    return;
                }
            }
        });
        let input = child.stdin.take();
        Server {
            child,
            input,
            answers,
        }
    }

    fn send(&mut self, frame: &[u8]) {
        let input = self.input.as_mut().unwrap();
        input.write_all(frame).unwrap();
        input.write_all(b"\n").unwrap();
        input.flush().unwrap();
    }

    /// Sends `frame`; the next line the server writes, which must be a JSON-RPC 2.0 message.
    fn ask(&mut self, frame: impl AsRef<[u8]>) -> Json {
        let frame = frame.as_ref();
        self.send(frame);
        let shown = shown(frame);
        let line = self
            .answers
            .recv_timeout(WAIT)
            .unwrap_or_else(|e| panic!("no answer to {shown}: {e}"));
        let answer: Json = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(answer["jsonrpc"], "2.0", "{shown}: {answer}");
        answer
    }

    /// Sends `frame` and checks that it is refused with `code`, answering `id`.
    fn refused(&mut self, frame: &[u8], code: i64, id: Json) {
        let answer = self.ask(frame);
        let shown = shown(frame);
        assert_eq!(answer["error"]["code"], code, "{shown}: {answer}");
        assert_eq!(answer.get("id"), Some(&id), "{shown}: {answer}");
    }

    /// A ping answered next: whatever was sent before it got no answer.
    fn alive(&mut self, id: i64) {
        let answer = self.ask(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string());
        assert_eq!(answer, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    }

    fn initialize(&mut self) {
        let answer = self.ask(
            json!({
                "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "raw-frames", "version": "1"},
                },
            })
            .to_string(),
        );
        assert_eq!(
            answer["result"]["serverInfo"]["name"], "agentmem",
            "{answer}"
        );
        self.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// Closes the server's input; how it exited.
    fn close(mut self) -> ExitStatus {
        drop(self.input.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                started.elapsed() < WAIT,
                "the server did not exit on end of input"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    /// A failed test leaves no server behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The start of a frame, for a failure's message.
fn shown(frame: &[u8]) -> String {
    String::from_utf8_lossy(&frame[..frame.len().min(200)]).into_owned()
}

/// Frames and the error each gets, one a line: the frame, the code, the id answered.
const REFUSED: &str = r#"
{bad                                                                         -32700 null
{"jsonrpc":"2.0","id":2,"method":"ping"                                      -32700 null
{"jsonrpc":"2.0","id":7,"method":5}                                          -32600 7
{"jsonrpc":"2.0","id":"seven","method":5}                                    -32600 "seven"
{"id":8,"method":"tools/list"}                                               -32600 8
{"jsonrpc":"1.0","id":9,"method":"tools/list"}                               -32600 9
{"jsonrpc":"2.0","id":10,"method":"tools/list","params":"x"}                 -32600 10
{"jsonrpc":"2.0","id":11}                                                    -32600 11
{"jsonrpc":"2.0","id":{},"method":"ping"}                                    -32600 null
{"jsonrpc":"2.0","method":5}                                                 -32600 null
42                                                                           -32600 null
[{"jsonrpc":"2.0","id":12,"method":"ping"}]                                  -32600 null
[]                                                                           -32600 null
{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{}}                  -32602 20
{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":5}}          -32602 21
{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"task_query","arguments":"x"}} -32602 22
{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"task_query","arguments":[1]}} -32602 23
{"jsonrpc":"2.0","id":24,"method":"tools/call"}                              -32602 24
{"jsonrpc":"2.0","id":30,"method":"no/such/method"}                          -32601 30
"#;

#[test]
fn bad_frames_get_their_errors_and_the_server_serves_on() {
    let mut s = Server::start("frames");
    // Before `initialize`: a notification is not answered and does not end the session.
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    s.refused(b"{bad", PARSE_ERROR, Json::Null);
    s.alive(100);
    s.initialize();

    // Not JSON (-32700), not a request (-32600, with its id where it has one; a batch too,
    // since MCP 2025-06-18 removed them), tools/call params that do not fit (-32602), an
    // unknown method (-32601).
    for row in REFUSED.lines().filter(|l| !l.is_empty()) {
        let mut fields = row.split_whitespace();
        let (frame, code, id) = (fields.next(), fields.next(), fields.next());
        let code: i64 = code.unwrap().parse().unwrap();
        let id: Json = serde_json::from_str(id.unwrap()).unwrap();
        s.refused(frame.unwrap().as_bytes(), code, id);
    }
    s.refused(b"\xff\xfe{}", PARSE_ERROR, Json::Null);
    let deep = "[".repeat(100_000);
    let started = Instant::now();
    s.refused(deep.as_bytes(), PARSE_ERROR, Json::Null);
    assert!(started.elapsed() < Duration::from_secs(5));
    let huge = format!("\"{}\"", "a".repeat(17 << 20));
    s.refused(huge.as_bytes(), PARSE_ERROR, Json::Null);

    // Neither a malformed notification nor a stray response nor a blank line is answered.
    s.send(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}"#);
    s.send(br#"{"jsonrpc":"2.0","id":99,"result":{}}"#);
    s.send(b"");
    s.alive(101);

    // And the session goes on: tools are listed and called.
    let listed = s.ask(br#"{"jsonrpc":"2.0","id":40,"method":"tools/list"}"#);
    assert_eq!(listed["id"], 40, "{listed}");
    let tools = listed["result"]["tools"].as_array();
    assert!(tools.is_some_and(|t| !t.is_empty()), "{listed}");
    let called = s.ask(
        br#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"task_query","arguments":{"action":"list"}}}"#,
    );
    assert_eq!(called["id"], 41, "{called}");
    assert_eq!(called["result"]["isError"], false, "{called}");

    assert!(s.close().success());
}
