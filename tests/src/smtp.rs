//! A local SMTP server for the tests, speaking the real wire protocol (RFC 5321) over plain
//! TCP on 127.0.0.1: greeting, EHLO/HELO, AUTH PLAIN and LOGIN (RFC 4954), MAIL FROM,
//! RCPT TO, DATA (dot-unstuffed), RSET, NOOP, QUIT. It records every command line and every
//! message it accepted, and can be told to refuse recipients, refuse credentials, hang up
//! at once or never answer. STARTTLS is not offered (a client that requires it must give
//! up before AUTH or MAIL).
//!
//! One thread per connection (std, blocking): it needs nothing of the test's runtime and
//! stops with the test process.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use base64::Engine;

/// How the server behaves; may be changed while it runs ([`SmtpServer::set`]).
#[derive(Clone, Debug)]
pub struct Behaviour {
    /// `(user, password)` AUTH accepts; `None`: AUTH is not offered and MAIL needs none.
    /// When set, MAIL without a successful AUTH is refused (530).
    pub credentials: Option<(String, String)>,
    /// The AUTH mechanisms offered in EHLO, e.g. `"PLAIN LOGIN"`.
    pub mechanisms: String,
    /// The reply to every RCPT TO instead of `250`, e.g. `"550 5.1.1 No such user"`.
    pub rcpt_reply: Option<String>,
    /// Close every connection at once, before the greeting.
    pub hang_up: bool,
    /// Accept connections and never say a word.
    pub silent: bool,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            credentials: None,
            mechanisms: "PLAIN LOGIN".into(),
            rcpt_reply: None,
            hang_up: false,
            silent: false,
        }
    }
}

/// A message the server accepted (250 after DATA).
#[derive(Clone, Debug)]
pub struct Received {
    /// The EHLO/HELO name of the connection.
    pub hello: String,
    /// `(mechanism, user, password)` of the connection's successful AUTH.
    pub auth: Option<(String, String, String)>,
    /// The reverse path of MAIL FROM, without the angle brackets.
    pub mail_from: String,
    /// The forward paths of the accepted RCPT TOs.
    pub rcpt_to: Vec<String>,
    /// The message as transferred (CRLF line ends, dots unstuffed).
    pub data: String,
}

impl Received {
    /// The header block (before the first empty line), folded lines joined.
    fn headers(&self) -> Vec<(String, String)> {
        let head = self.data.split("\r\n\r\n").next().unwrap_or("");
        let mut out: Vec<(String, String)> = Vec::new();
        for line in head.split("\r\n") {
            if line.starts_with(' ') || line.starts_with('\t') {
                if let Some(last) = out.last_mut() {
                    last.1.push_str(line.trim_start());
                }
            } else if let Some((name, value)) = line.split_once(':') {
                out.push((name.to_string(), value.trim().to_string()));
            }
        }
        out
    }

    /// Every value of the header `name` (case-insensitive), unfolded.
    pub fn header_all(&self, name: &str) -> Vec<String> {
        self.headers()
            .into_iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
            .collect()
    }

    /// The header `name`, when it appears once.
    pub fn header(&self, name: &str) -> Option<String> {
        let mut all = self.header_all(name);
        (all.len() == 1).then(|| all.remove(0))
    }

    /// The names of the headers, in order.
    pub fn header_names(&self) -> Vec<String> {
        self.headers().into_iter().map(|(n, _)| n).collect()
    }

    /// The body as text: quoted-printable decoded when the message says so.
    pub fn text(&self) -> String {
        let body = self
            .data
            .split_once("\r\n\r\n")
            .map(|(_, b)| b)
            .unwrap_or("");
        let qp = self
            .header("Content-Transfer-Encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("quoted-printable"));
        if qp {
            decode_quoted_printable(body)
        } else {
            body.to_string()
        }
    }
}

/// A header value with RFC 2047 encoded words (`=?utf-8?b?…?=`, `=?utf-8?q?…?=`) decoded;
/// the white space between two adjacent encoded words is dropped, as the RFC says.
pub fn decode_words(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    let mut after_word = false;
    while let Some(start) = rest.find("=?") {
        let decoded = rest[start + 2..].split_once("?=").and_then(|(word, tail)| {
            let mut parts = word.splitn(3, '?');
            let (_charset, encoding, text) = (parts.next()?, parts.next()?, parts.next()?);
            let bytes = match encoding.to_ascii_lowercase().as_str() {
                "b" => base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .ok()?,
                "q" => decode_quoted_printable(&text.replace('_', " ")).into_bytes(),
                _ => return None,
            };
            Some((String::from_utf8_lossy(&bytes).into_owned(), tail))
        });
        let Some((text, tail)) = decoded else {
            break;
        };
        let between = &rest[..start];
        if !(after_word && between.trim().is_empty()) {
            out.push_str(between);
        }
        out.push_str(&text);
        rest = tail;
        after_word = true;
    }
    out.push_str(rest);
    out
}

/// Quoted-printable (RFC 2045 6.7): soft line breaks removed, `=XX` decoded, as UTF-8.
pub fn decode_quoted_printable(text: &str) -> String {
    let text = text.replace("=\r\n", "");
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'=' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
            if let Ok(b) = u8::from_str_radix(hex, 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Default)]
struct Record {
    behaviour: Behaviour,
    commands: Vec<String>,
    messages: Vec<Received>,
    connections: usize,
}

/// The running server; it stops with the test process.
pub struct SmtpServer {
    addr: SocketAddr,
    record: Arc<Mutex<Record>>,
}

fn lock(record: &Mutex<Record>) -> MutexGuard<'_, Record> {
    record.lock().unwrap_or_else(|e| e.into_inner())
}

impl SmtpServer {
    /// Listen on a random port of 127.0.0.1.
    pub fn start(behaviour: Behaviour) -> SmtpServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the SMTP server");
        let addr = listener.local_addr().expect("address");
        let record = Arc::new(Mutex::new(Record {
            behaviour,
            ..Record::default()
        }));
        let shared = record.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let record = shared.clone();
                std::thread::spawn(move || session(stream, &record));
            }
        });
        SmtpServer { addr, record }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Behave differently from the next connection on.
    pub fn set(&self, behaviour: Behaviour) {
        lock(&self.record).behaviour = behaviour;
    }

    /// The messages accepted so far.
    pub fn messages(&self) -> Vec<Received> {
        lock(&self.record).messages.clone()
    }

    /// Every command line received so far (AUTH payloads included, as sent).
    pub fn commands(&self) -> Vec<String> {
        lock(&self.record).commands.clone()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        lock(&self.record).connections
    }
}

fn session(stream: TcpStream, record: &Mutex<Record>) {
    let behaviour = {
        let mut r = lock(record);
        r.connections += 1;
        r.behaviour.clone()
    };
    if behaviour.hang_up {
        return;
    }
    if behaviour.silent {
        // Keep the connection open without a word until the client gives up.
        let mut reader = BufReader::new(stream);
        let mut sink = String::new();
        let _ = reader.read_line(&mut sink);
        return;
    }
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    let mut say = |line: &str| writer.write_all(format!("{line}\r\n").as_bytes()).is_ok();
    if !say("220 invex-test ESMTP ready") {
        return;
    }
    let mut hello = String::new();
    let mut auth: Option<(String, String, String)> = None;
    let mut mail_from: Option<String> = None;
    let mut rcpt_to: Vec<String> = Vec::new();
    let read = |reader: &mut BufReader<TcpStream>| -> Option<String> {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line.trim_end_matches(['\r', '\n']).to_string()),
        }
    };
    let decode = |b64: &str| -> String {
        base64::engine::general_purpose::STANDARD
            .decode(b64.trim())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    while let Some(line) = read(&mut reader) {
        lock(record).commands.push(line.clone());
        let upper = line.to_ascii_uppercase();
        let verb = upper.split(' ').next().unwrap_or("").to_string();
        let ok = match verb.as_str() {
            "EHLO" => {
                hello = line[4..].trim().to_string();
                let mut ok = say(&format!("250-invex-test greets {hello}"));
                if behaviour.credentials.is_some() {
                    ok &= say(&format!("250-AUTH {}", behaviour.mechanisms));
                }
                ok && say("250-8BITMIME") && say("250 SMTPUTF8")
            }
            "HELO" => {
                hello = line[4..].trim().to_string();
                say("250 invex-test")
            }
            "AUTH" => {
                let mut parts = line.split(' ').skip(1);
                let mechanism = parts.next().unwrap_or("").to_ascii_uppercase();
                let initial = parts.next().map(str::to_string);
                let given = match mechanism.as_str() {
                    "PLAIN" => {
                        let payload = match initial {
                            Some(p) => Some(p),
                            None => {
                                say("334 ");
                                read(&mut reader)
                            }
                        };
                        payload.map(|p| {
                            let decoded = decode(&p);
                            let mut fields = decoded.split('\0').skip(1);
                            (
                                fields.next().unwrap_or("").to_string(),
                                fields.next().unwrap_or("").to_string(),
                            )
                        })
                    }
                    "LOGIN" => {
                        say("334 VXNlcm5hbWU6"); // "Username:"
                        let user = read(&mut reader).map(|u| decode(&u));
                        say("334 UGFzc3dvcmQ6"); // "Password:"
                        let password = read(&mut reader).map(|p| decode(&p));
                        user.zip(password)
                    }
                    _ => None,
                };
                let offered = behaviour
                    .mechanisms
                    .split(' ')
                    .any(|m| m.eq_ignore_ascii_case(&mechanism));
                match (&behaviour.credentials, given) {
                    (Some(expected), Some(given)) if offered && *expected == given => {
                        auth = Some((mechanism, given.0, given.1));
                        say("235 2.7.0 Authentication successful")
                    }
                    (Some(_), Some(_)) => say("535 5.7.8 Authentication credentials invalid"),
                    _ => say("504 5.5.4 Unrecognized authentication type"),
                }
            }
            "MAIL" => {
                if behaviour.credentials.is_some() && auth.is_none() {
                    say("530 5.7.0 Authentication required")
                } else {
                    mail_from = Some(path(&line));
                    rcpt_to.clear();
                    say("250 2.1.0 OK")
                }
            }
            "RCPT" => match (&mail_from, &behaviour.rcpt_reply) {
                (None, _) => say("503 5.5.1 MAIL first"),
                (Some(_), Some(reply)) => say(reply),
                (Some(_), None) => {
                    rcpt_to.push(path(&line));
                    say("250 2.1.5 OK")
                }
            },
            "DATA" => {
                if mail_from.is_none() || rcpt_to.is_empty() {
                    say("503 5.5.1 RCPT first")
                } else {
                    say("354 End data with <CR><LF>.<CR><LF>");
                    let mut data = String::new();
                    let mut complete = false;
                    while let Some(l) = read(&mut reader) {
                        if l == "." {
                            complete = true;
                            break;
                        }
                        data.push_str(l.strip_prefix('.').unwrap_or(&l));
                        data.push_str("\r\n");
                        if data.len() > 1 << 20 {
                            break;
                        }
                    }
                    if !complete {
                        break;
                    }
                    let n = {
                        let mut r = lock(record);
                        r.messages.push(Received {
                            hello: hello.clone(),
                            auth: auth.clone(),
                            mail_from: mail_from.take().unwrap_or_default(),
                            rcpt_to: std::mem::take(&mut rcpt_to),
                            data,
                        });
                        r.messages.len()
                    };
                    say(&format!("250 2.0.0 OK queued as {n}"))
                }
            }
            "RSET" => {
                mail_from = None;
                rcpt_to.clear();
                say("250 2.0.0 OK")
            }
            "NOOP" => say("250 2.0.0 OK"),
            "QUIT" => {
                say("221 2.0.0 Bye");
                break;
            }
            _ => say("502 5.5.2 Command not recognized"),
        };
        if !ok {
            break;
        }
    }
}

/// The path of `MAIL FROM:<a@b> ...` or `RCPT TO:<a@b>`.
fn path(line: &str) -> String {
    let start = line.find('<').map_or(line.len(), |i| i + 1);
    let end = line[start..].find('>').map_or(line.len(), |i| start + i);
    line[start..end].to_string()
}
