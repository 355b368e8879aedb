//! Progress of a long operation on standard error: what it is doing, for how long, and how
//! much it has done when that is known. Shown when standard error is a terminal (or when
//! asked for); the final line stays, so a log shows what ran and how long it took.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(250);

struct Shared {
    label: String,
    start: Instant,
    /// Items done (rows, records), and bytes, when the operation counts them.
    items: AtomicU64,
    bytes: AtomicU64,
    counts: AtomicBool,
    done: AtomicBool,
    /// A terminal gets the line redrawn as the work goes; elsewhere (a log) only the final
    /// line is written.
    terminal: bool,
}

pub struct Progress {
    shared: Option<Arc<Shared>>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Starts showing `label` when `show` is true.
    pub fn start(label: &str, show: bool) -> Progress {
        if !show {
            return Progress {
                shared: None,
                ticker: None,
            };
        }
        let shared = Arc::new(Shared {
            label: label.to_string(),
            start: Instant::now(),
            items: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            counts: AtomicBool::new(false),
            done: AtomicBool::new(false),
            terminal: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        });
        let ticker = shared.terminal.then(|| {
            let s = shared.clone();
            std::thread::spawn(move || {
                while !s.done.load(Ordering::Acquire) {
                    eprint!("\r{}\x1b[K", s.line());
                    std::thread::sleep(TICK);
                }
            })
        });
        Progress {
            shared: Some(shared),
            ticker,
        }
    }

    /// Records that one more item of `bytes` bytes is done.
    pub fn item(&self, bytes: usize) {
        if let Some(s) = &self.shared {
            s.counts.store(true, Ordering::Relaxed);
            s.items.fetch_add(1, Ordering::Relaxed);
            s.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        }
    }

    /// Ends the display with `summary` after the label and the time taken.
    pub fn finish(mut self, summary: &str) {
        let Some(s) = self.shared.take() else {
            return;
        };
        s.done.store(true, Ordering::Release);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        let clear = if s.terminal { "\r\x1b[K" } else { "" };
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "{clear}{}: {summary} in {:.1} s",
            s.label,
            s.start.elapsed().as_secs_f64()
        );
    }
}

impl Shared {
    fn line(&self) -> String {
        let mut l = format!(
            "{}: {:.1} s",
            self.label,
            self.start.elapsed().as_secs_f64()
        );
        if self.counts.load(Ordering::Relaxed) {
            l.push_str(&format!(
                ", {} items, {}",
                self.items.load(Ordering::Relaxed),
                size(self.bytes.load(Ordering::Relaxed))
            ));
        }
        l
    }
}

/// A byte count for people.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(s) = &self.shared {
            s.done.store(true, Ordering::Release);
        }
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
            eprint!("\r\x1b[K");
        }
    }
}
