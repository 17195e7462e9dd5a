//! Console accounts over HTTP (issue 19, part 1): the first admin's one-time link, sign-in
//! with a password, server-side sessions in an HttpOnly cookie, CSRF and same-origin checks
//! on every state-changing form, invitations, roles, sign-out and sign-out everywhere.
//! The pages are HTML; the API routes never take the session cookie.

use crate::support::console::{csrf, location, session_cookie, Console};
use crate::support::TestServer;
use reqwest::{Response, StatusCode};

async fn text(r: Response) -> String {
    r.text().await.unwrap()
}

/// The first admin signs in through the link printed at the first start.
async fn first_admin(c: &Console<'_>) -> String {
    let link = c.s.running.as_ref().unwrap().first_admin_link.clone();
    let link = link.expect("the first start creates the first admin's link");
    let form = c.get(&link, None).await;
    assert_eq!(form.status(), 200);
    assert!(form.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let page = text(form).await;
    assert!(
        page.contains("name=\"email\""),
        "the first admin chooses an address"
    );

    // Too short a password: the form again, nothing spent.
    let r = c
        .post(
            &link,
            None,
            &[("email", "Admin@Firma.sk"), ("password", "short")],
        )
        .await;
    assert_eq!(r.status(), 422);
    let r = c
        .post(
            &link,
            None,
            &[
                ("email", "Admin@Firma.sk"),
                ("password", "a long enough password"),
            ],
        )
        .await;
    assert_eq!(r.status(), 303, "{}", text(r).await);
    assert_eq!(location(&r), "/console");
    let token = session_cookie(&r);
    // Used once: gone.
    assert_eq!(c.get(&link, None).await.status(), 404);
    let r = c
        .post(
            &link,
            None,
            &[
                ("email", "x@firma.sk"),
                ("password", "another long password"),
            ],
        )
        .await;
    assert_eq!(r.status(), 410);
    token
}

#[tokio::test]
async fn people_sign_in_invite_and_sign_out() {
    let s = TestServer::start().await;
    let c = Console::new(&s);

    // Not signed in: the console sends people to the sign-in page.
    let r = c.get("/", None).await;
    assert!(r.status().is_redirection());
    let r = c.get("/console", None).await;
    assert_eq!(r.status(), 303);
    assert_eq!(location(&r), "/console/sign-in");
    let r = c.get("/console/sign-in", None).await;
    assert_eq!(r.status(), 200);
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert_eq!(r.headers()["referrer-policy"], "same-origin");
    assert!(csp.contains("script-src 'self'"), "{csp}");
    let page = text(r).await;
    // The one script is the console's own file; no inline script anywhere.
    assert_eq!(page.matches("<script").count(), 1, "{page}");
    assert!(page.contains("<script src=\"/console/assets/console.js\" defer></script>"));
    for (path, kind) in [
        ("/console/assets/console.js", "text/javascript"),
        ("/console/assets/favicon.svg", "image/svg+xml"),
        ("/console/assets/console.css", "text/css"),
    ] {
        let r = c.get(path, None).await;
        assert_eq!(r.status(), 200, "{path}");
        assert!(r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with(kind));
    }
    let r = c.get("/favicon.ico", None).await;
    assert_eq!(r.status(), 308);
    assert_eq!(location(&r), "/console/assets/favicon.svg");
    assert!(
        page.contains("<html lang=\"sk\""),
        "Slovak without a preference"
    );
    assert!(
        page.contains("Sandbox"),
        "the sandbox is marked on every page"
    );

    let admin = first_admin(&c).await;
    let home = text(c.get("/console", Some(&admin)).await).await;
    assert!(home.contains("admin@firma.sk"), "{home}");

    // The admin invites an accountant: the link is shown once.
    let people = text(c.get("/console/people?lang=en", Some(&admin)).await).await;
    assert!(people.contains("<html lang=\"en\""));
    let token = csrf(&people);
    let r = c
        .post(
            "/console/people",
            Some(&admin),
            &[
                ("csrf", &token),
                ("email", "ucto@firma.sk"),
                ("role", "accountant"),
            ],
        )
        .await;
    assert_eq!(r.status(), 201);
    let page = text(r).await;
    let at = page
        .find("/console/links/")
        .expect("the invitation link is shown");
    let link: String = page[at..]
        .chars()
        .take_while(|ch| ch.is_ascii_alphanumeric() || "/-_".contains(*ch))
        .collect();
    // The same address twice: refused.
    let r = c
        .post(
            "/console/people",
            Some(&admin),
            &[
                ("csrf", &token),
                ("email", "UCTO@firma.sk"),
                ("role", "auditor"),
            ],
        )
        .await;
    assert_eq!(r.status(), 409);

    // The accountant sets a password and signs in; an invitation sets no address.
    let page = text(c.get(&link, None).await).await;
    assert!(!page.contains("name=\"email\""));
    let r = c
        .post(&link, None, &[("password", "účtovníkovo heslo")])
        .await;
    assert_eq!(r.status(), 303);
    let r = c
        .post(
            "/console/sign-in",
            None,
            &[
                ("email", "ucto@firma.sk"),
                ("password", "účtovníkovo heslo"),
            ],
        )
        .await;
    assert_eq!(r.status(), 303);
    let accountant = session_cookie(&r);
    // An accountant is refused the admin screen.
    assert_eq!(
        c.get("/console/people", Some(&accountant)).await.status(),
        403
    );
    let page = text(c.get("/console", Some(&accountant)).await).await;
    let acc_csrf = csrf(&page);
    let r = c
        .post(
            "/console/people",
            Some(&accountant),
            &[
                ("csrf", &acc_csrf),
                ("email", "x@firma.sk"),
                ("role", "admin"),
            ],
        )
        .await;
    assert_eq!(r.status(), 403);

    // A wrong password: refused, the same answer as an unknown address.
    let wrong = c
        .post(
            "/console/sign-in",
            None,
            &[("email", "ucto@firma.sk"), ("password", "nope nope nope")],
        )
        .await;
    assert_eq!(wrong.status(), 401);
    let unknown = c
        .post(
            "/console/sign-in",
            None,
            &[("email", "nikto@firma.sk"), ("password", "nope nope nope")],
        )
        .await;
    assert_eq!(unknown.status(), 401);

    // Sign out ends that session only; sign out everywhere ends all of a person's.
    let second = session_cookie(
        &c.post(
            "/console/sign-in",
            None,
            &[
                ("email", "ucto@firma.sk"),
                ("password", "účtovníkovo heslo"),
            ],
        )
        .await,
    );
    let r = c
        .post(
            "/console/sign-out",
            Some(&accountant),
            &[("csrf", &acc_csrf)],
        )
        .await;
    assert_eq!(r.status(), 303);
    assert_eq!(c.get("/console", Some(&accountant)).await.status(), 303);
    assert_eq!(c.get("/console", Some(&second)).await.status(), 200);
    let page = text(c.get("/console", Some(&admin)).await).await;
    let admin_csrf = csrf(&page);
    let third = session_cookie(
        &c.post(
            "/console/sign-in",
            None,
            &[
                ("email", "admin@firma.sk"),
                ("password", "a long enough password"),
            ],
        )
        .await,
    );
    let r = c
        .post(
            "/console/sign-out-everywhere",
            Some(&admin),
            &[("csrf", &admin_csrf)],
        )
        .await;
    assert_eq!(r.status(), 303);
    assert_eq!(c.get("/console", Some(&admin)).await.status(), 303);
    assert_eq!(c.get("/console", Some(&third)).await.status(), 303);
    // The accountant's session is not the admin's: still open.
    assert_eq!(c.get("/console", Some(&second)).await.status(), 200);
}

#[tokio::test]
async fn forms_without_the_token_or_from_other_sites_are_refused() {
    let s = TestServer::start().await;
    let c = Console::new(&s);
    let admin = first_admin(&c).await;
    let page = text(c.get("/console/people", Some(&admin)).await).await;
    let token = csrf(&page);

    // No CSRF token, or a wrong one.
    let r = c
        .post(
            "/console/people",
            Some(&admin),
            &[("csrf", ""), ("email", "a@b.sk"), ("role", "auditor")],
        )
        .await;
    assert_eq!(r.status(), 403);
    let r = c
        .post(
            "/console/people",
            Some(&admin),
            &[
                ("csrf", &token[..token.len() - 1]),
                ("email", "a@b.sk"),
                ("role", "auditor"),
            ],
        )
        .await;
    assert_eq!(r.status(), 403);

    // The right token, sent from another site's page.
    let cross = |path: &str, site: &'static str, origin: &'static str| {
        c.client
            .post(s.url(path))
            .header("Cookie", format!("invex_session={admin}"))
            .header("Origin", origin)
            .header("Sec-Fetch-Site", site)
            .form(&[
                ("csrf", token.as_str()),
                ("email", "a@b.sk"),
                ("role", "auditor"),
            ])
    };
    let r = cross("/console/people", "cross-site", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let r = cross(
        "/console/sign-out-everywhere",
        "same-site",
        "https://sub.example",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 403);
    // Signing a browser in from another site is refused too (login CSRF).
    let r = c
        .client
        .post(s.url("/console/sign-in"))
        .header("Origin", "https://evil.example")
        .form(&[
            ("email", "admin@firma.sk"),
            ("password", "a long enough password"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    // Nothing happened: the session is open and nobody was invited.
    let page = text(c.get("/console/people", Some(&admin)).await).await;
    assert!(!page.contains("a@b.sk"));

    // The console takes no API keys, and the API takes no session cookie.
    let r = c
        .client
        .get(s.url("/console"))
        .header("X-API-Key", crate::support::BOOTSTRAP)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = c
        .client
        .get(s.url("/v1/keys"))
        .header("Cookie", format!("invex_session={admin}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

#[tokio::test]
async fn sign_in_attempts_are_throttled() {
    let s = TestServer::start().await;
    let c = Console::new(&s);
    first_admin(&c).await;
    // Twelve guesses at once (the budget comes back one attempt every six seconds).
    let guesses = (0..12).map(|_| {
        c.post(
            "/console/sign-in",
            None,
            &[
                ("email", "admin@firma.sk"),
                ("password", "guess guess guess"),
            ],
        )
    });
    let mut statuses: Vec<u16> = futures_util::future::join_all(guesses)
        .await
        .iter()
        .map(|r| r.status().as_u16())
        .collect();
    statuses.sort();
    assert_eq!(
        statuses,
        [401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 429, 429]
    );
    // Throttled even with the right password: a guesser learns nothing.
    let r = c
        .post(
            "/console/sign-in",
            None,
            &[
                ("email", "admin@firma.sk"),
                ("password", "a long enough password"),
            ],
        )
        .await;
    assert_eq!(r.status(), 429);
    assert!(r.headers().contains_key("retry-after"));
}

#[tokio::test]
async fn the_rule_catalogue_is_searched_and_read_in_the_console() {
    let s = TestServer::start().await;
    let c = Console::new(&s);
    assert_eq!(c.get("/console/rules", None).await.status(), 303);
    let admin = first_admin(&c).await;

    let r = c
        .get(
            "/console/rules?q=sk-r-00&pack=peppol-bis3%402026.11&owner=&severity=&lang=en",
            Some(&admin),
        )
        .await;
    assert_eq!(r.status(), 200);
    let page = text(r).await;
    assert!(page.contains("7 rules found"), "{page}");
    // The language switch keeps the search (only `lang` changes).
    assert!(
        page.contains("href=\"/console/rules?q=sk-r-00&amp;pack=peppol-bis3%402026.11&amp;owner=&amp;severity=&amp;lang=sk\""),
        "{page}"
    );
    for n in 1..=7 {
        assert!(
            page.contains(&format!("href=\"/console/rules/SK-R-00{n}\"")),
            "SK-R-00{n}"
        );
    }
    // The chosen pack stays selected.
    assert!(
        page.contains("<option value=\"peppol-bis3@2026.11\" selected>"),
        "{page}"
    );

    // Paging: the next page link carries the filters.
    let page = text(c.get("/console/rules?pack=peppol-bis3", Some(&admin)).await).await;
    let at = page.find("rel=\"next\"").expect("a next page");
    let href_at = page[..at].rfind("href=\"").unwrap();
    let href = &page[href_at + 6..at - 2];
    assert!(
        href.contains("pack=peppol%2Dbis3") && href.contains("after="),
        "{href}"
    );
    let href = href.replace("&amp;", "&");
    assert_eq!(c.get(&href, Some(&admin)).await.status(), 200);

    // One rule: versions, what changed, fixtures.
    let page = text(
        c.get("/console/rules/PEPPOL-COMMON-R054?lang=en", Some(&admin))
            .await,
    )
    .await;
    assert!(page.contains("Changed since peppol-bis3@2026.5"), "{page}");
    assert!(
        page.contains("<del>warning</del> → <ins>fatal</ins>"),
        "{page}"
    );
    assert!(page.contains("Documents it must report"), "{page}");
    let page = text(
        c.get("/console/rules/GR-R-001-5?lang=sk", Some(&admin))
            .await,
    )
    .await;
    assert!(
        page.contains("Odstránené vo <strong>peppol-bis3@2026.11</strong>"),
        "{page}"
    );
    assert_eq!(
        c.get("/console/rules/NO-SUCH-RULE", Some(&admin))
            .await
            .status(),
        404
    );

    // What a person types is shown as text, never as markup.
    let page = text(
        c.get(
            "/console/rules?q=%3Cscript%3Ex%3C%2Fscript%3E",
            Some(&admin),
        )
        .await,
    )
    .await;
    assert!(!page.contains("<script>"), "{page}");
    assert!(page.contains("&lt;script&gt;"), "{page}");
}
