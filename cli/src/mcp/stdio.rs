//! rmcp's transport over standard input and output, with [`Frame`] in front of it: every line
//! is checked before rmcp sees it, and the bad ones are answered here.

use super::frames::Frame;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use serde::Serialize;
use std::io::{self, BufRead, Read, Write};
use tokio::sync::mpsc;

/// rmcp's own bound on one message: a line that never ends must not take all memory.
const MAX_LINE: u64 = 16 << 20;

pub struct Stdio {
    messages: mpsc::Receiver<ClientJsonRpcMessage>,
}

impl Stdio {
    /// Reads standard input on a thread of its own. rmcp polls `receive` in a `select!` and
    /// drops it whenever another branch wins: a channel's `recv` survives that, a half-read
    /// line would not.
    pub fn open() -> Stdio {
        let (sender, messages) = mpsc::channel(16);
        std::thread::spawn(move || read(io::stdin().lock(), &sender));
        Stdio { messages }
    }
}

impl Transport<RoleServer> for Stdio {
    type Error = io::Error;

    /// Written at once, blocking: a client that does not read its input stalls the server
    /// whichever way the line is written.
    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = io::Result<()>> + Send + 'static {
        std::future::ready(write(&item))
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.messages.recv().await
    }

    async fn close(&mut self) -> io::Result<()> {
        self.messages.close();
        Ok(())
    }
}

/// Passes the good lines on to rmcp and answers the others, until the input ends or rmcp
/// stops listening. Before `initialize` only requests are passed on: rmcp ends the session on
/// any other first message, and JSON-RPC answers neither a notification nor a response.
fn read(mut input: impl BufRead, messages: &mpsc::Sender<ClientJsonRpcMessage>) -> io::Result<()> {
    let mut line = Vec::new();
    let mut initialized = false;
    loop {
        line.clear();
        if input
            .by_ref()
            .take(MAX_LINE + 1)
            .read_until(b'\n', &mut line)?
            == 0
        {
            return Ok(());
        }
        let frame = if line.len() as u64 > MAX_LINE && line.last() != Some(&b'\n') {
            input.skip_until(b'\n')?;
            Frame::parse_error(format!(
                "Parse error: a message longer than {MAX_LINE} bytes"
            ))
        } else {
            Frame::check(&line)
        };
        match frame {
            Frame::Message(message) => {
                match &message {
                    ClientJsonRpcMessage::Request(r) => {
                        initialized |= matches!(r.request, ClientRequest::InitializeRequest(_));
                    }
                    _ if !initialized => continue,
                    _ => {}
                }
                if messages.blocking_send(message).is_err() {
                    return Ok(());
                }
            }
            Frame::Refused(answer) => write(&answer)?,
            Frame::Ignored => {}
        }
    }
}

/// Writes one message as one line, whole, under standard output's lock: the answers of the
/// reading thread and rmcp's never interleave.
fn write(message: &impl Serialize) -> io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    let mut out = io::stdout().lock();
    out.write_all(&line)?;
    out.flush()
}
