//! Console invitations by e-mail (issue 19): with `[smtp]` configured, an invitation is
//! stored, then mailed through a real SMTP exchange (the local server of
//! `invex_tests::smtp`); when the mail cannot be sent the invitation still exists and the
//! administrator is told so and given the link. Configuration mistakes stop the start.

use crate::support::console::{csrf, Console};
use crate::support::TestServer;
use invex_server::config::Mode;
use invex_server::mail::{SmtpConfig, SmtpSecurity};
use invex_tests::smtp::{decode_words, Behaviour, SmtpServer};

const FROM: &str = "invex <noreply@firma.sk>";

fn smtp_config(port: u16, credentials: Option<(&str, &str)>, timeout_ms: u64) -> SmtpConfig {
    SmtpConfig {
        host: Some("127.0.0.1".into()),
        port: Some(port),
        security: SmtpSecurity::None,
        username: credentials.map(|(u, _)| u.to_string()),
        password: credentials.map(|(_, p)| p.to_string()),
        from: Some(FROM.into()),
        timeout_ms,
        ..SmtpConfig::default()
    }
}

fn credentials(user: &str, password: &str) -> Option<(String, String)> {
    Some((user.to_string(), password.to_string()))
}

impl<'a> Console<'a> {
    /// Invite `email` as `role` from the people page in `lang`: the answer's status and page.
    async fn invite(&self, admin: &str, email: &str, role: &str, lang: &str) -> (u16, String) {
        let page = self
            .get(&format!("/console/people?lang={lang}"), Some(admin))
            .await
            .text()
            .await
            .unwrap();
        let token = csrf(&page);
        let r = self
            .post(
                "/console/people",
                Some(&format!("{admin}; invex_lang={lang}")),
                &[("csrf", &token), ("email", email), ("role", role)],
            )
            .await;
        (r.status().as_u16(), r.text().await.unwrap())
    }

    /// Open an invitation link, set a password, sign in with it.
    async fn accept(&self, link: &str, email: &str) {
        let r = self.get(link, None).await;
        assert_eq!(r.status(), 200, "{link}");
        let form = r.text().await.unwrap();
        assert!(form.contains("name=\"password\""), "{form}");
        assert!(
            !form.contains("name=\"email\""),
            "an invitation sets no address"
        );
        let r = self
            .post(link, None, &[("password", "the invited person's password")])
            .await;
        assert_eq!(r.status(), 303);
        let r = self
            .post(
                "/console/sign-in",
                None,
                &[
                    ("email", email),
                    ("password", "the invited person's password"),
                ],
            )
            .await;
        assert_eq!(r.status(), 303, "{email} signs in");
    }
}

/// The first `http://…/console/links/…` in `text`.
fn link_in(text: &str) -> Option<String> {
    let end_of_path = text.find("/console/links/")?;
    let start = text[..end_of_path].rfind("http://")?;
    Some(
        text[start..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || ":/.-_".contains(*c))
            .collect(),
    )
}

#[tokio::test]
async fn an_invitation_is_mailed_through_smtp_and_its_link_works() {
    let smtp = SmtpServer::start(Behaviour {
        credentials: credentials("invex-mailer", "smtp pass wörd"),
        mechanisms: "PLAIN LOGIN".into(),
        ..Behaviour::default()
    });
    let s = TestServer::with(|c| {
        c.smtp = smtp_config(
            smtp.port(),
            Some(("invex-mailer", "smtp pass wörd")),
            10_000,
        );
    })
    .await;
    let c = Console::new(&s);
    let admin = c.first_admin().await;

    let (status, page) = c.invite(&admin, "Ucto@Firma.sk", "accountant", "en").await;
    assert_eq!(status, 201, "{page}");
    assert!(
        page.contains("The invitation link was sent by e-mail to <strong>ucto@firma.sk</strong>."),
        "{page}"
    );
    assert!(
        !page.contains("/console/links/"),
        "a mailed link is not shown: {page}"
    );

    // One message, to the invitee, from the configured sender, after AUTH PLAIN with the
    // configured credentials.
    let messages = smtp.messages();
    assert_eq!(messages.len(), 1, "{:?}", smtp.commands());
    let m = &messages[0];
    assert_eq!(m.rcpt_to, ["ucto@firma.sk"]);
    assert_eq!(m.mail_from, "noreply@firma.sk");
    assert_eq!(
        m.auth,
        Some((
            "PLAIN".to_string(),
            "invex-mailer".to_string(),
            "smtp pass wörd".to_string()
        ))
    );
    assert!(!m.hello.is_empty());
    assert_eq!(m.header("From").as_deref(), Some(FROM));
    assert_eq!(m.header("To").as_deref(), Some("ucto@firma.sk"));
    assert!(m.header_all("Bcc").is_empty() && m.header_all("Cc").is_empty());
    let subject = m.header("Subject").expect("a subject");
    assert!(subject.is_ascii(), "{subject}");
    assert_eq!(
        decode_words(&subject),
        "Invitation to invex / Pozvánka do invex"
    );
    assert!(m
        .header("Content-Type")
        .is_some_and(|t| t.starts_with("text/plain") && t.contains("utf-8")));
    // The admin's console language first, then the other; who invited, as what, until when.
    let text = m.text();
    let en = text.find("Hello,").expect("English");
    let sk = text.find("Dobrý deň,").expect("Slovak");
    assert!(en < sk, "{text}");
    assert!(
        text.contains("admin@firma.sk invites you to the invex console as Accountant."),
        "{text}"
    );
    assert!(
        text.contains("admin@firma.sk vás pozýva do konzoly invex s rolou Účtovník."),
        "{text}"
    );
    assert!(
        text.contains("valid until ") && text.contains(" UTC)"),
        "{text}"
    );
    let link = link_in(&text).expect("the link is in the mail");
    assert!(
        link.starts_with(&format!("{}/console/links/", s.base)),
        "{link}"
    );
    // Exactly one exchange: AUTH once, one MAIL, one RCPT.
    let commands = smtp.commands();
    let count = |verb: &str| commands.iter().filter(|c| c.starts_with(verb)).count();
    assert_eq!(
        (count("AUTH"), count("MAIL FROM"), count("RCPT TO")),
        (1, 1, 1)
    );

    // The mailed link works: the set-password form, then a sign-in.
    c.accept(&link, "ucto@firma.sk").await;

    // The password of the SMTP server is in no page and no answer of the console.
    let people = c
        .get("/console/people", Some(&admin))
        .await
        .text()
        .await
        .unwrap();
    assert!(!people.contains("smtp pass"));
}

#[tokio::test]
async fn auth_login_is_used_when_the_server_offers_only_login() {
    let smtp = SmtpServer::start(Behaviour {
        credentials: credentials("mailer", "login-secret"),
        mechanisms: "LOGIN".into(),
        ..Behaviour::default()
    });
    let s = TestServer::with(|c| {
        c.smtp = smtp_config(smtp.port(), Some(("mailer", "login-secret")), 10_000);
    })
    .await;
    let c = Console::new(&s);
    let admin = c.first_admin().await;
    // In Slovak: Slovak first.
    let (status, page) = c.invite(&admin, "audit@firma.sk", "auditor", "sk").await;
    assert_eq!(status, 201);
    assert!(
        page.contains("Odkaz pozvánky sme poslali e-mailom na adresu"),
        "{page}"
    );
    let messages = smtp.messages();
    assert_eq!(messages.len(), 1);
    assert_eq!(
        messages[0].auth,
        Some((
            "LOGIN".to_string(),
            "mailer".to_string(),
            "login-secret".to_string()
        ))
    );
    let text = messages[0].text();
    assert!(text.find("Dobrý deň,") < text.find("Hello,"), "{text}");
    assert!(text.contains("s rolou Audítor"), "{text}");
}

/// The invitation page when the mail did not go: 201 (the invitation exists), an alert that
/// says so, and the link to pass on, which works.
async fn not_mailed(c: &Console<'_>, admin: &str, email: &str) -> String {
    let (status, page) = c.invite(admin, email, "developer", "en").await;
    assert_eq!(status, 201, "{page}");
    assert!(
        page.contains(
            "The invitation was created, but the e-mail to this address could not be sent:"
        ),
        "{page}"
    );
    assert!(page.contains("role=\"alert\""), "{page}");
    assert!(
        page.contains("Send this link to the person yourself"),
        "{page}"
    );
    link_in(&page).expect("the link is shown")
}

#[tokio::test]
async fn when_the_mail_cannot_be_sent_the_admin_gets_the_link() {
    let smtp = SmtpServer::start(Behaviour {
        credentials: credentials("mailer", "right"),
        rcpt_reply: Some("550 5.1.1 <x>: Recipient address rejected: User unknown".into()),
        ..Behaviour::default()
    });
    let s = TestServer::with(|c| {
        c.smtp = smtp_config(smtp.port(), Some(("mailer", "right")), 1_500);
    })
    .await;
    let c = Console::new(&s);
    let admin = c.first_admin().await;

    // 550 on RCPT TO: refused; nothing accepted.
    let link = not_mailed(&c, &admin, "refused@firma.sk").await;
    assert!(smtp.messages().is_empty());
    assert!(smtp
        .commands()
        .iter()
        .any(|l| l == "RCPT TO:<refused@firma.sk>"));
    // The invitation exists: listed, and the address is taken.
    let people = c
        .get("/console/people?lang=en", Some(&admin))
        .await
        .text()
        .await
        .unwrap();
    assert!(
        people.contains("refused@firma.sk") && people.contains("invited, no password yet"),
        "{people}"
    );
    let (status, _) = c
        .invite(&admin, "refused@firma.sk", "developer", "en")
        .await;
    assert_eq!(status, 409);
    c.accept(&link, "refused@firma.sk").await;

    // Wrong credentials: 535 on AUTH; no MAIL is sent.
    smtp.set(Behaviour {
        credentials: credentials("mailer", "another password"),
        ..Behaviour::default()
    });
    let before = smtp.commands().len();
    let link = not_mailed(&c, &admin, "auth@firma.sk").await;
    let after = smtp.commands()[before..].to_vec();
    assert!(
        after.iter().any(|l| l.starts_with("AUTH PLAIN")),
        "{after:?}"
    );
    assert!(!after.iter().any(|l| l.starts_with("MAIL")), "{after:?}");
    c.accept(&link, "auth@firma.sk").await;

    // The server hangs up at once.
    smtp.set(Behaviour {
        hang_up: true,
        ..Behaviour::default()
    });
    let link = not_mailed(&c, &admin, "hangup@firma.sk").await;
    c.accept(&link, "hangup@firma.sk").await;

    // The server never answers: the page comes back after the timeout, not later.
    smtp.set(Behaviour {
        silent: true,
        ..Behaviour::default()
    });
    let started = std::time::Instant::now();
    let link = not_mailed(&c, &admin, "silent@firma.sk").await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    c.accept(&link, "silent@firma.sk").await;
    assert!(smtp.messages().is_empty());
}

#[tokio::test]
async fn nothing_is_sent_in_the_clear_when_starttls_is_required_and_not_offered() {
    let smtp = SmtpServer::start(Behaviour {
        credentials: credentials("mailer", "secret"),
        ..Behaviour::default()
    });
    let s = TestServer::with(|c| {
        c.smtp = SmtpConfig {
            security: SmtpSecurity::Starttls,
            ..smtp_config(smtp.port(), Some(("mailer", "secret")), 5_000)
        };
    })
    .await;
    let c = Console::new(&s);
    let admin = c.first_admin().await;
    let link = not_mailed(&c, &admin, "tls@firma.sk").await;
    let commands = smtp.commands();
    assert!(
        commands.iter().any(|l| l.starts_with("EHLO")),
        "{commands:?}"
    );
    assert!(
        !commands
            .iter()
            .any(|l| l.starts_with("AUTH") || l.starts_with("MAIL")),
        "no credentials or mail without TLS: {commands:?}"
    );
    c.accept(&link, "tls@firma.sk").await;
}

#[tokio::test]
async fn without_smtp_the_link_is_shown_as_before() {
    let s = TestServer::start().await;
    let c = Console::new(&s);
    let admin = c.first_admin().await;
    let (status, page) = c.invite(&admin, "shown@firma.sk", "auditor", "en").await;
    assert_eq!(status, 201);
    assert!(
        page.contains("Invitation created. Send this link to the person"),
        "{page}"
    );
    assert!(
        !page.contains("sent by e-mail") && !page.contains("could not be sent"),
        "{page}"
    );
    let link = link_in(&page).expect("the link is shown");
    c.accept(&link, "shown@firma.sk").await;
}

#[tokio::test]
async fn a_wrong_smtp_configuration_stops_the_start() {
    let start = |adjust: fn(&mut invex_server::Config)| async move {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut c = crate::support::config(dir.path());
        adjust(&mut c);
        match invex_server::start(c, Some(crate::support::shipped())).await {
            Ok(_) => panic!("the server started"),
            Err(e) => e.to_string(),
        }
    };
    let err = start(|c| {
        c.smtp = SmtpConfig {
            host: Some("mail.firma.sk".into()),
            ..SmtpConfig::default()
        }
    })
    .await;
    assert!(
        err.contains("smtp.from (INVEX_SMTP_FROM): is required"),
        "{err}"
    );
    let err = start(|c| {
        c.mode = Mode::Production;
        c.smtp = SmtpConfig {
            host: Some("mail.firma.sk".into()),
            security: SmtpSecurity::None,
            from: Some("noreply@firma.sk".into()),
            ..SmtpConfig::default()
        }
    })
    .await;
    assert!(
        err.contains("smtp.security (INVEX_SMTP_SECURITY)") && err.contains("mail.firma.sk"),
        "{err}"
    );
    let err = start(|c| {
        c.smtp = SmtpConfig {
            host: Some("mail.firma.sk".into()),
            from: Some("invex\r\nBcc: spy@evil.example <noreply@firma.sk>".into()),
            ..SmtpConfig::default()
        }
    })
    .await;
    assert!(err.contains("smtp.from"), "{err}");
}
