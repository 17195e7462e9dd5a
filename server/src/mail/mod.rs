//! Sending e-mail over SMTP (`[smtp]`): a [`Mailer`] built once at start from the
//! configuration, sending plain-text UTF-8 messages through lettre's async transport on the
//! server's tokio runtime.
//!
//! Messages are made only with lettre's typed builders: addresses are parsed whole (a
//! line break or any control character in one is refused) and header values are encoded,
//! so nothing a message carries can add a header. The connection is encrypted (STARTTLS,
//! which must succeed before credentials or mail are sent, or implicit TLS) unless the
//! configuration says `none`, which [`SmtpConfig::check`] allows only in the
//! sandbox or to a relay on this machine. This module knows no HTTP and no database.

pub mod config;

use std::time::Duration;

use lettre::message::header::{ContentTransferEncoding, ContentType};
use lettre::message::{Mailbox, SinglePart};
use lettre::transport::smtp::authentication::{Credentials, Mechanism};
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{Address, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

pub use config::{SmtpConfig, SmtpSecurity};

use crate::settings::{ConfigError, Mode};

/// Why a message was not sent (or not made).
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// An address that cannot be written into a message (malformed, or with a line break
    /// or another control character).
    #[error("`{0}` is not an address a message can be sent to or from")]
    Address(String),
    /// lettre refused to build the message.
    #[error("the message could not be made: {0}")]
    Message(String),
    /// The SMTP server answered with an error reply (4xx: try later, 5xx: refused), e.g. to
    /// AUTH, MAIL FROM, RCPT TO or DATA.
    #[error("the mail server {server} refused the message: {detail}")]
    Refused { server: String, detail: String },
    /// TLS could not be established (or STARTTLS was required and not offered).
    #[error("no secure connection to the mail server {server}: {detail}")]
    Tls { server: String, detail: String },
    /// The whole exchange took longer than the configured timeout.
    #[error("the mail server {server} did not finish within {ms} ms")]
    Timeout { server: String, ms: u64 },
    /// Connecting, reading or writing failed, or the server did not speak SMTP as expected.
    #[error("the mail server {server} could not be reached or failed: {detail}")]
    Connection { server: String, detail: String },
}

/// A plain-text message to one recipient.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The recipient's address (no display name).
    pub to: String,
    pub subject: String,
    /// The text; line breaks are written as CRLF and the body is sent quoted-printable.
    pub text: String,
}

/// Sends messages through the configured SMTP server. One connection per message (no
/// pool): invitations are rare, and a kept connection would only go stale.
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    timeout: Duration,
    /// `host:port`, for errors and logs.
    server: String,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("server", &self.server)
            .field("from", &self.from.to_string())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The sender of the configuration: `noreply@firma.sk` or `invex <noreply@firma.sk>`.
/// The address must be a whole address; no part may hold a control character.
pub fn sender(raw: &str) -> Result<Mailbox, MailError> {
    let shown = || MailError::Address(raw.escape_debug().take(200).collect());
    let raw = raw.trim();
    if raw.chars().any(char::is_control) {
        return Err(shown());
    }
    let (name, address) = match raw.strip_suffix('>').and_then(|r| r.rsplit_once('<')) {
        Some((name, address)) => {
            let name = name.trim().trim_matches('"').trim();
            ((!name.is_empty()).then(|| name.to_string()), address.trim())
        }
        None => (None, raw),
    };
    let address: Address = address.parse().map_err(|_| shown())?;
    Ok(Mailbox::new(name, address))
}

/// A recipient's address, parsed whole (it comes from `people::email::normalise`, which
/// already refuses spaces and control characters; this is the last line).
fn recipient(raw: &str) -> Result<Mailbox, MailError> {
    if raw.chars().any(char::is_control) {
        return Err(MailError::Address(raw.escape_debug().take(200).collect()));
    }
    raw.parse::<Address>()
        .map(Mailbox::from)
        .map_err(|_| MailError::Address(raw.escape_debug().take(200).collect()))
}

/// The message `out` from `from`, as it goes on the wire: typed headers (encoded by
/// lettre), a text/plain UTF-8 body in quoted-printable.
pub fn message(from: &Mailbox, out: &Outgoing) -> Result<Message, MailError> {
    Message::builder()
        .from(from.clone())
        .to(recipient(&out.to)?)
        .subject(out.subject.as_str())
        .singlepart(
            SinglePart::builder()
                .header(ContentType::TEXT_PLAIN)
                .header(ContentTransferEncoding::QuotedPrintable)
                .body(out.text.clone()),
        )
        .map_err(|e| MailError::Message(e.to_string()))
}

impl Mailer {
    /// The mailer of `config` under `mode`; `None` when SMTP is not configured. Checks the
    /// configuration (as [`SmtpConfig::check`]) and reads the password file.
    pub fn from_config(config: &SmtpConfig, mode: Mode) -> Result<Option<Mailer>, ConfigError> {
        config.check(mode)?;
        let Some(host) = config
            .host
            .as_deref()
            .map(str::trim)
            .filter(|h| !h.is_empty())
        else {
            return Ok(None);
        };
        let from = config.from.as_deref().unwrap_or_default();
        let from = sender(from).map_err(|e| ConfigError::Invalid {
            setting: "smtp.from (INVEX_SMTP_FROM)",
            message: e.to_string(),
        })?;
        let port = config.effective_port();
        let timeout = Duration::from_millis(config.timeout_ms);
        // A literal IPv6 address may be written in brackets; TLS checks the name as given.
        let server_name = host.trim_start_matches('[').trim_end_matches(']');
        let tls = |wrap: fn(TlsParameters) -> Tls| {
            TlsParameters::new(server_name.to_string())
                .map(wrap)
                .map_err(|e| ConfigError::Invalid {
                    setting: "smtp.host (INVEX_SMTP_HOST)",
                    message: format!("TLS for `{host}`: {e}"),
                })
        };
        let tls = match config.security {
            SmtpSecurity::Starttls => tls(Tls::Required)?,
            SmtpSecurity::Tls => tls(Tls::Wrapper)?,
            SmtpSecurity::None => Tls::None,
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(server_name)
            .port(port)
            .tls(tls)
            .timeout(Some(timeout));
        if let (Some(user), Some(password)) = (&config.username, config.resolve_password()?) {
            builder = builder
                .credentials(Credentials::new(user.clone(), password))
                .authentication(vec![Mechanism::Plain, Mechanism::Login]);
        }
        Ok(Some(Mailer {
            transport: builder.build(),
            from,
            timeout,
            server: format!("{host}:{port}"),
        }))
    }

    /// `host:port` of the SMTP server.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The configured sender.
    pub fn from(&self) -> &Mailbox {
        &self.from
    }

    /// Send `out`; returns once the server accepted it (250 after DATA) or failed. The
    /// whole exchange is bounded by the configured timeout.
    pub async fn send(&self, out: &Outgoing) -> Result<(), MailError> {
        let message = message(&self.from, out)?;
        match tokio::time::timeout(self.timeout, self.transport.send(message)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(self.failed(&e)),
            Err(_) => Err(MailError::Timeout {
                server: self.server.clone(),
                ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            }),
        }
    }

    fn failed(&self, e: &lettre::transport::smtp::Error) -> MailError {
        let server = self.server.clone();
        let detail = e.to_string();
        if e.is_timeout() {
            MailError::Timeout {
                server,
                ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            }
        } else if e.is_permanent() || e.is_transient() {
            MailError::Refused { server, detail }
        } else if e.is_tls() || detail.contains("STARTTLS") {
            MailError::Tls { server, detail }
        } else {
            MailError::Connection { server, detail }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn formatted(from: &str, out: &Outgoing) -> String {
        let m = message(&sender(from).expect("sender"), out).expect("message");
        String::from_utf8(m.formatted()).expect("utf8")
    }

    fn outgoing(to: &str, subject: &str) -> Outgoing {
        Outgoing {
            to: to.into(),
            subject: subject.into(),
            text: "Dobrý deň,\nodkaz: https://invex.example/console/links/abc\n".into(),
        }
    }

    #[test]
    fn senders_are_addresses_with_an_optional_name() {
        assert_eq!(
            sender("noreply@firma.sk").expect("plain").to_string(),
            "noreply@firma.sk"
        );
        let m = sender(" invex <noreply@firma.sk> ").expect("named");
        assert_eq!(m.name.as_deref(), Some("invex"));
        assert_eq!(m.email.to_string(), "noreply@firma.sk");
        let m = sender("\"Firma, s.r.o.\" <noreply@firma.sk>").expect("quoted");
        assert_eq!(m.name.as_deref(), Some("Firma, s.r.o."));
        for bad in [
            "",
            "noreply",
            "invex <noreply>",
            "noreply@firma.sk\r\nBcc: spy@evil.example",
            "invex\r\nBcc: spy@evil.example <noreply@firma.sk>",
            "invex <noreply@firma.sk\nBcc: spy@evil.example>",
            "a@b.sk, c@d.sk",
        ] {
            assert!(sender(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_recipient_with_a_line_break_is_refused() {
        let from = sender("noreply@firma.sk").expect("sender");
        for bad in [
            "jana@firma.sk\r\nBcc: spy@evil.example",
            "jana@firma.sk\nBcc: spy@evil.example",
            "jana@firma.sk\r",
            "Jana <jana@firma.sk>",
            "jana@firma.sk, spy@evil.example",
        ] {
            let err = message(&from, &outgoing(bad, "x")).expect_err(bad);
            assert!(matches!(err, MailError::Address(_)), "{bad:?}: {err}");
        }
    }

    #[test]
    fn a_subject_cannot_add_a_header() {
        let text = formatted(
            "invex <noreply@firma.sk>",
            &outgoing(
                "jana@firma.sk",
                "Pozvánka\r\nBcc: spy@evil.example\r\n\r\nbody",
            ),
        );
        let head = &text[..text.find("\r\n\r\n").expect("end of the header")];
        assert!(
            !head
                .lines()
                .any(|l| l.to_ascii_lowercase().starts_with("bcc:")),
            "{head}"
        );
        assert!(!text.contains("spy@evil.example\r\n"), "{text}");
        // Every header line is a header or its folded continuation.
        for line in head.split("\r\n") {
            assert!(
                line.starts_with(' ') || line.starts_with('\t') || line.contains(": "),
                "{line:?} in {head}"
            );
        }
    }

    #[test]
    fn messages_are_plain_text_utf8_quoted_printable() {
        let text = formatted(
            "invex <noreply@firma.sk>",
            &outgoing("jana@firma.sk", "Pozvánka do invex"),
        );
        assert!(
            text.contains("From: invex <noreply@firma.sk>\r\n"),
            "{text}"
        );
        assert!(text.contains("To: jana@firma.sk\r\n"), "{text}");
        assert!(
            text.contains("Content-Type: text/plain; charset=utf-8\r\n"),
            "{text}"
        );
        assert!(
            text.contains("Content-Transfer-Encoding: quoted-printable\r\n"),
            "{text}"
        );
        assert!(text.contains("Date: "), "{text}");
        // The subject is an encoded word: no raw UTF-8 in a header.
        assert!(text.contains("Subject: =?utf-8?"), "{text}");
    }
}
