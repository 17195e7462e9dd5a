//! Single sign-on in the console over HTTP, against a local OpenID provider speaking the
//! real wire format (tests/tests/integration/support/oidc.rs): the flow (PKCE, state bound to the
//! browser, nonce), accounts made at the first sign-in with the mapped role and following
//! it afterwards, every check of the ID token (each one broken in turn opens no session),
//! the tenant's domains and verified addresses, requiring single sign-on, and the settings
//! screen's guards. The browser suite (tests/browser) does the same sign-in through the
//! certified `oidc-provider` package in Chromium.

use crate::support::console::{
    csrf, invitation_link, location, session_cookie, Console, ADMIN_PASSWORD,
};
use crate::support::oidc::{Misbehave, Provider, User};
use crate::support::{JsonBody, TestServer, BOOTSTRAP};
use reqwest::redirect::Policy;
use reqwest::Response;
use serde_json::{json, Value};

const SETTINGS: &str = "/console/settings/sso";
const SECRET: &str = "the client's secret";

/// The provider's domain in these tests, and the role map the administrator enters.
const DOMAIN: &str = "sso.example";
const ROLE_MAP: &str = "invex-accountants = accountant\ninvex-admins = admin";

fn anna(groups: Value) -> User {
    User::new("anna-1")
        .with_email("anna@sso.example", true)
        .with_claim("groups", groups)
}

/// Save the single sign-on settings as `admin`; the answer.
async fn save(c: &Console<'_>, admin: &str, fields: &[(&str, &str)]) -> Response {
    let page = c.page(SETTINGS, admin).await;
    let token = csrf(&page);
    let mut form = vec![("csrf", token.as_str())];
    form.extend_from_slice(fields);
    c.post(SETTINGS, Some(admin), &form).await
}

fn settings<'a>(issuer: &'a str, domains: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("issuer", issuer),
        ("client_id", "invex"),
        ("client_secret", SECRET),
        ("domains", domains),
        ("scopes", "email profile groups"),
        ("role_claim", "groups"),
        ("role_map", ROLE_MAP),
        ("default_role", ""),
    ]
}

/// A browser's way through a sign-in: the console's start (which sets the state cookie),
/// the provider's authorization endpoint, and back to the callback with the cookie the
/// start set (or `cookie` instead, when given). The callback's answer.
async fn through(c: &Console<'_>, email: &str, cookie: Option<&str>) -> Response {
    let start = c.get(&format!("/console/sso?email={email}"), None).await;
    assert_eq!(start.status(), 200);
    let state_cookie = start
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("invex_sso="))
        .expect("the start sets the state cookie")
        .to_string();
    assert!(state_cookie.contains("HttpOnly") && state_cookie.contains("SameSite=Lax"));
    let state = state_cookie["invex_sso=".len()..]
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let browser = reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap();
    let at_provider = browser.get(onward(&start)).send().await.unwrap();
    assert_eq!(
        at_provider.status(),
        302,
        "{}",
        at_provider.text().await.unwrap()
    );
    let back = location(&at_provider).to_string();
    assert!(
        back.starts_with(&c.s.url("/console/sso/callback?")),
        "{back}"
    );
    browser
        .get(&back)
        .header("Cookie", format!("invex_sso={}", cookie.unwrap_or(&state)))
        .header("Sec-Fetch-Site", "cross-site")
        .header("Accept-Language", "en")
        .send()
        .await
        .unwrap()
}

/// Where a page that moves on by itself (`Refresh`) goes.
fn onward(r: &Response) -> String {
    let refresh = r.headers()["refresh"].to_str().unwrap();
    refresh
        .strip_prefix("0; url=")
        .unwrap_or_else(|| panic!("{refresh}"))
        .to_string()
}

/// The first administrator signed in, with the provider set up for [`DOMAIN`].
async fn with_provider(c: &Console<'_>) -> (Provider, String) {
    let p = Provider::start("invex", SECRET).await;
    let admin = c.first_admin().await;
    let issuer = p.issuer();
    let r = save(c, &admin, &settings(&issuer, DOMAIN)).await;
    assert_eq!(r.status(), 200);
    (p, admin)
}

fn has_session(r: &Response) -> bool {
    r.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|c| c.starts_with("invex_session=") && !c.contains("Max-Age=0"))
}

#[tokio::test]
async fn people_sign_in_through_the_provider_with_mapped_roles_and_accounts_made_at_once() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let p = Provider::start("invex", SECRET).await;
    let admin = c.first_admin().await;

    // Not set up: the screen says so and shows the redirect URI to register.
    let page = c.page(SETTINGS, &admin).await;
    let redirect = s.url("/console/sso/callback");
    assert!(page.contains(&redirect), "{page}");
    assert!(page.contains("not set up"), "{page}");

    let issuer = p.issuer();
    let r = save(&c, &admin, &settings(&issuer, DOMAIN)).await;
    let page = r.text().await.unwrap();
    assert!(page.contains("saved"), "{page}");
    assert!(!page.contains(SECRET), "the secret is never shown");

    // A sign-in: PKCE with S256, a nonce, the scopes, the address as a hint.
    p.sign_in_as(anna(json!(["staff", "invex-accountants"])));
    let r = through(&c, "anna@sso.example", None).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["refresh"], "0; url=/console");
    let anna_session = session_cookie(&r);
    let asked = p.authorizations().pop().unwrap();
    assert_eq!(asked.param("code_challenge_method"), Some("S256"));
    assert!(asked.param("code_challenge").is_some_and(|v| v.len() == 43));
    assert!(asked.param("nonce").is_some_and(|v| v.len() >= 32));
    assert_eq!(asked.param("redirect_uri"), Some(redirect.as_str()));
    assert_eq!(asked.param("login_hint"), Some("anna@sso.example"));
    let scopes: Vec<&str> = asked.param("scope").unwrap().split(' ').collect();
    for scope in ["openid", "email", "profile", "groups"] {
        assert!(scopes.contains(&scope), "{scopes:?}");
    }
    assert_eq!(p.tokens_issued(), 1);

    // Anna got an account as an accountant: she is no administrator.
    let home = c.page("/console", &anna_session).await;
    assert!(
        home.contains("anna@sso.example") && home.contains("Accountant"),
        "{home}"
    );
    assert_eq!(
        c.get_as("/console/people", &anna_session).await.status(),
        403
    );
    assert_eq!(c.get_as(SETTINGS, &anna_session).await.status(), 403);
    let people = c.page("/console/people", &admin).await;
    assert!(people.contains("anna@sso.example"), "{people}");

    // Her groups change at the provider: her role follows at the next sign-in, and the
    // account is the same one (bound to her subject, not her address).
    p.sign_in_as(anna(json!(["invex-admins"])).with_email("Anna@SSO.example", true));
    let r = through(&c, "anna@sso.example", None).await;
    assert_eq!(r.status(), 200);
    let again = session_cookie(&r);
    assert!(c.page("/console", &again).await.contains("Administrator"));
    let people = c.page("/console/people", &admin).await;
    assert_eq!(people.matches("anna@sso.example").count(), 1, "{people}");

    // Claims only at the userinfo endpoint (as many providers send them) serve as well.
    p.misbehave(Misbehave::ClaimsOnlyAtUserinfo);
    let before = p.userinfo_requests();
    let r = through(&c, "anna@sso.example", None).await;
    assert_eq!(r.status(), 200);
    assert!(p.userinfo_requests() > before);
}

#[tokio::test]
async fn a_callback_counts_only_once_and_only_in_the_browser_that_started_it() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let (p, _admin) = with_provider(&c).await;
    p.sign_in_as(anna(json!(["invex-accountants"])));

    // Another browser's state (an attacker's callback link opened by someone else).
    let r = through(
        &c,
        "anna@sso.example",
        Some("someone-elses-state-0000000000000000000000"),
    )
    .await;
    assert_eq!(r.status(), 400);
    assert!(!has_session(&r));
    let tokens = p.tokens_issued();

    // No cookie at all.
    let start = c.get("/console/sso?email=anna@sso.example", None).await;
    let browser = reqwest::Client::builder()
        .redirect(Policy::none())
        .build()
        .unwrap();
    let back = browser.get(onward(&start)).send().await.unwrap();
    let callback = location(&back).to_string();
    let r = browser.get(&callback).send().await.unwrap();
    assert_eq!(r.status(), 400);
    assert!(!has_session(&r));
    assert_eq!(
        p.tokens_issued(),
        tokens,
        "no code is exchanged without the browser's state"
    );

    // The right browser, then the same answer replayed: the second one is refused.
    let r = through(&c, "anna@sso.example", None).await;
    assert_eq!(r.status(), 200);
    let start = c.get("/console/sso?email=anna@sso.example", None).await;
    let state = start.headers()["set-cookie"].to_str().unwrap()["invex_sso=".len()..]
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let back = browser.get(onward(&start)).send().await.unwrap();
    let callback = location(&back).to_string();
    let first = browser
        .get(&callback)
        .header("Cookie", format!("invex_sso={state}"))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let replay = browser
        .get(&callback)
        .header("Cookie", format!("invex_sso={state}"))
        .send()
        .await
        .unwrap();
    assert_eq!(replay.status(), 400);
    assert!(!has_session(&replay));

    // The person declines at the provider: its error, and no session.
    p.decline();
    let r = through(&c, "anna@sso.example", None).await;
    assert_eq!(r.status(), 401);
    assert!(r.text().await.unwrap().contains("access_denied"));

    // An address no tenant routes: the sign-in page says so.
    let r = c
        .get("/console/sso?email=eva@elsewhere.example", None)
        .await;
    assert_eq!(r.status(), 404);
    assert!(r.text().await.unwrap().contains("No organisation"));
}

#[tokio::test]
async fn an_id_token_failing_any_check_opens_no_session() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let (p, admin) = with_provider(&c).await;
    p.sign_in_as(anna(json!(["invex-accountants"])));
    for wrong in [
        Misbehave::WrongNonce,
        Misbehave::WrongAudience,
        Misbehave::WrongIssuer,
        Misbehave::Expired,
        Misbehave::OtherKey,
        Misbehave::AlgNone,
        Misbehave::UserinfoOtherSubject,
    ] {
        p.misbehave(wrong);
        if wrong == Misbehave::UserinfoOtherSubject {
            // The userinfo endpoint is asked only for what the ID token lacks.
            p.sign_in_as(User::new("anna-1").with_claim("groups", json!(["invex-accountants"])));
        }
        let r = through(&c, "anna@sso.example", None).await;
        assert_eq!(r.status(), 502, "{wrong:?}");
        assert!(!has_session(&r), "{wrong:?}");
        let page = r.text().await.unwrap();
        assert!(page.contains("cannot be used"), "{wrong:?}: {page}");
    }
    // Nobody got an account on the way.
    let people = c.page("/console/people", &admin).await;
    assert!(!people.contains("anna@sso.example"), "{people}");
    // And the same provider behaving: signed in.
    p.misbehave(Misbehave::Nothing);
    p.sign_in_as(anna(json!(["invex-accountants"])));
    assert_eq!(through(&c, "anna@sso.example", None).await.status(), 200);
}

#[tokio::test]
async fn the_provider_speaks_only_for_verified_addresses_of_the_tenants_domains() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let (p, admin) = with_provider(&c).await;

    let refused = |r: Response| async move {
        assert_eq!(r.status(), 403);
        assert!(!has_session(&r));
        r.text().await.unwrap()
    };
    // Unverified; outside the tenant's domains (the provider may know other addresses); no
    // group that maps to a role, and no default role.
    for (sub, address, verified, groups, says) in [
        ("u1", "eva@sso.example", false, "invex-admins", "verified"),
        ("u2", "eva@gmail.example", true, "invex-admins", "domains"),
        ("u3", "bob@sso.example", true, "staff", "role"),
    ] {
        p.sign_in_as(
            User::new(sub)
                .with_email(address, verified)
                .with_claim("groups", json!([groups])),
        );
        let page = refused(through(&c, "eva@sso.example", None).await).await;
        assert!(page.contains(says), "{sub}: {page}");
    }

    // An address of another tenant's account is not taken over.
    let tenant: Value = s
        .v1(reqwest::Method::POST, "/v1/tenants", BOOTSTRAP)
        .json(&json!({"name": "Iná firma"}))
        .value()
        .await;
    let other_tenant = tenant["tenant"]["id"].as_str().unwrap();
    let accounts = &s.running.as_ref().unwrap().state.accounts;
    let link = accounts.first_admin(other_tenant).await.unwrap().unwrap();
    c.complete(
        &format!("/console/links/{}", link.token),
        Some("boss@sso.example"),
        ADMIN_PASSWORD,
    )
    .await;
    p.sign_in_as(
        User::new("u4")
            .with_email("boss@sso.example", true)
            .with_claim("groups", json!(["invex-admins"])),
    );
    assert!(refused(through(&c, "boss@sso.example", None).await)
        .await
        .contains("another organisation"));

    // An account of this tenant with the same address (invited before) is bound to the
    // identity at its first sign-in; disabled, it signs in no more.
    c.invited(&admin, "cyril@sso.example", "auditor").await;
    p.sign_in_as(
        User::new("u5")
            .with_email("cyril@sso.example", true)
            .with_claim("groups", json!(["invex-accountants"])),
    );
    let r = through(&c, "cyril@sso.example", None).await;
    assert_eq!(r.status(), 200);
    let people = c.page("/console/people", &admin).await;
    assert_eq!(people.matches("cyril@sso.example").count(), 1);
    let at = people.find("cyril@sso.example").unwrap();
    let id_start = people[..at].rfind("/console/people/").unwrap() + "/console/people/".len();
    let id = &people[id_start..people[id_start..].find('"').unwrap() + id_start];
    let page = c.page(&format!("/console/people/{id}"), &admin).await;
    // Bound to the provider: said so, and no invitation link is offered any more.
    assert!(
        page.contains("signs in through the identity provider"),
        "{page}"
    );
    assert!(!page.contains("New invitation link"));
    let r = c
        .post(
            &format!("/console/people/{id}/disable"),
            Some(&admin),
            &[("csrf", &csrf(&page))],
        )
        .await;
    assert!(
        r.status().is_redirection() || r.status() == 200,
        "{}",
        r.status()
    );
    assert!(refused(through(&c, "cyril@sso.example", None).await)
        .await
        .contains("disabled"));
}

#[tokio::test]
async fn requiring_the_provider_refuses_passwords_once_an_admin_proved_it_works() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let p = Provider::start("invex", SECRET).await;
    let admin = c.first_admin().await;
    let issuer = p.issuer();
    let domains = format!("{DOMAIN} firma.sk");
    let mut fields = settings(&issuer, &domains);
    fields.push(("required", "on"));

    // Signed in with a password: requiring the provider is refused (it might not work).
    let r = save(&c, &admin, &fields).await;
    assert_eq!(r.status(), 422);
    assert!(r
        .text()
        .await
        .unwrap()
        .contains("has just signed in through it"));

    // The administrator signs in through the provider (their account is bound), then may.
    fields.pop();
    assert_eq!(save(&c, &admin, &fields).await.status(), 200);
    p.sign_in_as(
        User::new("admin-1")
            .with_email("admin@firma.sk", true)
            .with_claim("groups", json!(["invex-admins"])),
    );
    let r = through(&c, "admin@firma.sk", None).await;
    assert_eq!(r.status(), 200);
    let sso_admin = session_cookie(&r);
    fields.push(("required", "on"));
    let r = save(&c, &sso_admin, &fields).await;
    assert_eq!(r.status(), 200);

    // Passwords are refused now, with the right password told so (a wrong one learns
    // nothing new); invitations cannot set one either.
    let r = c.sign_in("admin@firma.sk", ADMIN_PASSWORD).await;
    assert_eq!(r.status(), 403);
    assert!(r.text().await.unwrap().contains("identity provider only"));
    let r = c.sign_in("admin@firma.sk", "not the password at all").await;
    assert_eq!(r.status(), 401);
    let page = c.invited(&sso_admin, "dana@sso.example", "auditor").await;
    let link = invitation_link(&page);
    let r = c
        .post(&link, None, &[("password", "a long enough password")])
        .await;
    assert_eq!(r.status(), 403);
}

#[tokio::test]
async fn the_settings_screen_checks_its_fields_roles_and_forms() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let p = Provider::start("invex", SECRET).await;
    let admin = c.first_admin().await;
    let issuer = p.issuer();

    // A provider that does not answer, a domain that is not one, a role that is not one:
    // the form again, with the field named.
    let nowhere = "http://127.0.0.1:9/";
    let r = save(&c, &admin, &settings(nowhere, DOMAIN)).await;
    assert_eq!(r.status(), 422);
    let page = r.text().await.unwrap();
    assert!(page.contains("issuer:"), "{page}");
    assert!(page.contains("id=\"issuer\"") && page.contains("aria-invalid=\"true\""));
    let r = save(&c, &admin, &settings(&issuer, "not-a-domain")).await;
    assert_eq!(r.status(), 422);
    assert!(r.text().await.unwrap().contains("domains:"));
    let mut bad_map = settings(&issuer, DOMAIN);
    bad_map[6] = ("role_map", "invex-admins = boss");
    let r = save(&c, &admin, &bad_map).await;
    assert_eq!(r.status(), 422);
    assert!(r.text().await.unwrap().contains("role_map: line 1"));
    // A public-looking issuer that leads inside is refused like a webhook target.
    let r = save(&c, &admin, &settings("https://10.1.2.3/", DOMAIN)).await;
    assert_eq!(r.status(), 422);

    // Without the form's token, or from another site: refused, nothing saved.
    let good = settings(&issuer, DOMAIN);
    let r = c.post(SETTINGS, Some(&admin), &good).await;
    assert_eq!(r.status(), 403);
    let page = c.page(SETTINGS, &admin).await;
    let token = csrf(&page);
    let mut form = vec![("csrf", token.as_str())];
    form.extend_from_slice(&good);
    let r = c
        .client
        .post(s.url(SETTINGS))
        .header("Cookie", format!("invex_session={admin}"))
        .header("Origin", "https://evil.example")
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert!(c.page(SETTINGS, &admin).await.contains("not set up"));

    // Saved; Anna gets her account through the provider (no password).
    assert_eq!(save(&c, &admin, &good).await.status(), 200);
    p.sign_in_as(anna(json!(["invex-accountants"])));
    assert_eq!(through(&c, "anna@sso.example", None).await.status(), 200);
    let people = c.page("/console/people", &admin).await;
    assert!(
        people.contains("signs in through the identity provider"),
        "{people}"
    );

    // Removed: the provider signs nobody in any more, and Anna, who has no password, can be
    // sent an invitation link to set one.
    let page = c.page(SETTINGS, &admin).await;
    assert!(page.contains(&issuer) && !page.contains(SECRET));
    let r = c
        .post(
            "/console/settings/sso/remove",
            Some(&admin),
            &[("csrf", &csrf(&page))],
        )
        .await;
    assert_eq!(r.status(), 303);
    assert_eq!(
        c.get("/console/sso?email=anna@sso.example", None)
            .await
            .status(),
        404
    );
    let people = c.page("/console/people", &admin).await;
    assert!(
        !people.contains("signs in through the identity provider"),
        "{people}"
    );
    let at = people.find(">anna@sso.example<").unwrap();
    let start = people[..at].rfind("/console/people/").unwrap();
    let anna_page = &people[start..people[start..].find('"').unwrap() + start];
    let page = c.page(anna_page, &admin).await;
    assert!(page.contains("New invitation link"), "{page}");
    let r = c
        .post(
            &format!("{anna_page}/link"),
            Some(&admin),
            &[("csrf", &csrf(&page))],
        )
        .await;
    assert_eq!(r.status(), 200);
    let link = invitation_link(&r.text().await.unwrap());
    let session = c.complete(&link, None, ADMIN_PASSWORD).await;
    assert!(c
        .page("/console", &session)
        .await
        .contains("anna@sso.example"));
}
