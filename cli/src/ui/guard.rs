//! Who may talk to the panel: the checks every request passes before anything is read.
//!
//! The panel listens on the loopback interface, but a browser runs code from every site it
//! visits, and that code can reach 127.0.0.1. So three checks stand between a web page and
//! the memory:
//!
//! * **Host**: the `Host` header must name the address the panel serves (a DNS-rebinding page
//!   reaches the port under its own host name, and is refused).
//! * **Origin**: a request a browser marks as coming from another site (`Origin`, or
//!   `Sec-Fetch-Site: cross-site`) is refused; the panel sends no CORS headers, so no other
//!   origin can read an answer either.
//! * **Token**: every API call carries the one-time token of this run in a header, which a
//!   page of another origin cannot set without a CORS preflight the panel never grants. The
//!   pages themselves (HTML, script, style) hold no data and need no token.

/// The header an API call carries the token in.
pub const TOKEN_HEADER: &str = "x-agentmem-token";

/// A refused request: the status and why, for the response.
#[derive(Debug, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub reason: &'static str,
}

/// What a request shows of itself, as the guard reads it (header names in lower case).
pub struct Seen<'a> {
    pub host: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub fetch_site: Option<&'a str>,
    pub token: Option<&'a str>,
}

/// The panel's address and secret.
pub struct Guard {
    /// The host names (with the port) requests may be addressed to.
    hosts: Vec<String>,
    token: String,
}

impl Guard {
    /// A guard for a panel on `host`:`port` with `token`. The loopback names are always
    /// accepted for a loopback address.
    pub fn new(host: &str, port: u16, token: String) -> Guard {
        let mut hosts = vec![authority(host, port)];
        if is_loopback(host) {
            for name in ["127.0.0.1", "localhost", "[::1]"] {
                let a = authority(name, port);
                if !hosts.contains(&a) {
                    hosts.push(a);
                }
            }
        }
        Guard { hosts, token }
    }

    /// The URL the panel is opened with: the token rides in the fragment, which the browser
    /// never sends to a server or in a `Referer`.
    pub fn url(&self) -> String {
        format!("http://{}/#token={}", self.hosts[0], self.token)
    }

    /// Whether a request may be served at all (`api`: whether it reads or changes data).
    pub fn check(&self, seen: &Seen, api: bool) -> Result<(), Refusal> {
        let host = seen.host.ok_or(Refusal {
            status: 400,
            reason: "the request has no Host header",
        })?;
        if !self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Err(Refusal {
                status: 403,
                reason: "the request is addressed to another host",
            });
        }
        if let Some(origin) = seen.origin {
            let same = origin
                .strip_prefix("http://")
                .is_some_and(|o| self.hosts.iter().any(|h| h.eq_ignore_ascii_case(o)));
            if !same {
                return Err(Refusal {
                    status: 403,
                    reason: "the request comes from another origin",
                });
            }
        }
        if seen.fetch_site == Some("cross-site") {
            return Err(Refusal {
                status: 403,
                reason: "the request comes from another site",
            });
        }
        if api && !seen.token.is_some_and(|t| same_secret(t, &self.token)) {
            return Err(Refusal {
                status: 401,
                reason: "the request lacks this panel's token",
            });
        }
        Ok(())
    }
}

/// A fresh token: 32 bytes of the system's randomness, in hex.
pub fn new_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness for the token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `host` is a loopback address (the only kind served without `--host`).
pub fn is_loopback(host: &str) -> bool {
    host == "localhost"
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn authority(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Compares in time independent of where the two differ.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard::new("127.0.0.1", 8123, "t0k3n".into())
    }

    fn seen<'a>(host: &'a str, origin: Option<&'a str>, token: Option<&'a str>) -> Seen<'a> {
        Seen {
            host: Some(host),
            origin,
            fetch_site: None,
            token,
        }
    }

    #[test]
    fn an_api_call_needs_the_token() {
        let g = guard();
        assert!(g
            .check(&seen("127.0.0.1:8123", None, Some("t0k3n")), true)
            .is_ok());
        assert_eq!(
            g.check(&seen("127.0.0.1:8123", None, None), true)
                .unwrap_err()
                .status,
            401
        );
        assert_eq!(
            g.check(&seen("127.0.0.1:8123", None, Some("t0k3m")), true)
                .unwrap_err()
                .status,
            401
        );
        assert_eq!(
            g.check(&seen("127.0.0.1:8123", None, Some("t0k")), true)
                .unwrap_err()
                .status,
            401
        );
        // A page's assets need none.
        assert!(g.check(&seen("localhost:8123", None, None), false).is_ok());
    }

    #[test]
    fn another_host_or_origin_is_refused() {
        let g = guard();
        for host in ["evil.example:8123", "127.0.0.1:8124", "127.0.0.1"] {
            assert_eq!(
                g.check(&seen(host, None, Some("t0k3n")), true)
                    .unwrap_err()
                    .status,
                403
            );
        }
        for origin in [
            "http://evil.example",
            "https://127.0.0.1:8123",
            "null",
            "http://127.0.0.1:9",
        ] {
            let s = seen("127.0.0.1:8123", Some(origin), Some("t0k3n"));
            assert_eq!(g.check(&s, true).unwrap_err().status, 403, "{origin}");
        }
        assert!(g
            .check(
                &seen("[::1]:8123", Some("http://localhost:8123"), Some("t0k3n")),
                true
            )
            .is_ok());
        let cross = Seen {
            fetch_site: Some("cross-site"),
            ..seen("127.0.0.1:8123", None, Some("t0k3n"))
        };
        assert_eq!(g.check(&cross, true).unwrap_err().status, 403);
        let none = Seen {
            host: None,
            ..seen("", None, Some("t0k3n"))
        };
        assert_eq!(g.check(&none, true).unwrap_err().status, 400);
    }

    #[test]
    fn only_loopback_addresses_are_loopback() {
        for h in ["127.0.0.1", "::1", "[::1]", "localhost", "127.1.2.3"] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["0.0.0.0", "192.168.1.2", "::", "example.com"] {
            assert!(!is_loopback(h), "{h}");
        }
    }

    #[test]
    fn tokens_are_fresh() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
