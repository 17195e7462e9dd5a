//! The console's administration screens over HTTP: a person's role, disabling and enabling
//! people (sessions end at once, sign-in is refused as for a wrong password), the guard rails
//! (own account, the tenant's last administrator, other tenants), API keys (created and shown
//! once, usable on the API, revoked), and the CSRF and same-origin checks of every form.

use crate::support::console::{csrf, invitation_link, location, session_cookie, Console};
use crate::support::{JsonBody, TestServer, BOOTSTRAP};
use reqwest::{Method, Response};
use serde_json::Value;

impl<'a> Console<'a> {
    /// `email` invited by `admin` with `role`, signed in through the invitation: the
    /// person's id and session.
    async fn join(&self, admin: &str, email: &str, role: &str) -> (String, String) {
        let page = self.invited(admin, email, role).await;
        let link = invitation_link(&page);
        let session = self.complete(&link, None, PASSWORD).await;
        (person_id(&page, email), session)
    }
}

use crate::support::console::ADMIN_PASSWORD;
const PASSWORD: &str = "another long password";

/// The id of the person the People list links with `email`.
fn person_id(people: &str, email: &str) -> String {
    let at = people
        .find(&format!("\">{email}</a>"))
        .unwrap_or_else(|| panic!("{email} is listed with a link: {people}"));
    let start = people[..at].rfind("/console/people/").unwrap() + "/console/people/".len();
    people[start..at].to_string()
}

/// The text of the People list's row of `email`.
fn row<'p>(people: &'p str, email: &str) -> &'p str {
    let at = people.find(&format!(">{email}<")).expect("listed");
    let start = people[..at].rfind("<tr>").unwrap();
    let end = at + people[at..].find("</tr>").unwrap();
    &people[start..end]
}

fn pairs(form: &[(String, String)]) -> Vec<(&str, &str)> {
    form.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// The message of the sign-in page's refusal.
async fn refusal(r: Response) -> String {
    assert_eq!(r.status(), 401);
    let page = r.text().await.unwrap();
    let at = page.find("role=\"alert\">").expect("a refusal") + "role=\"alert\">".len();
    page[at..at + page[at..].find('<').unwrap()].to_string()
}

#[tokio::test]
async fn a_new_role_applies_at_once_and_disabling_ends_sessions_and_sign_in() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let admin = c.first_admin().await;
    let (jana, session) = c.join(&admin, "jana@firma.sk", "accountant").await;
    assert_eq!(c.get_as("/console/people", &session).await.status(), 403);

    // The admin opens Jana's page from the list and makes her an administrator.
    let people = c.page("/console/people", &admin).await;
    assert!(row(&people, "jana@firma.sk").contains("Accountant"));
    let page = c.page(&format!("/console/people/{jana}"), &admin).await;
    assert!(page.contains("<h1>jana@firma.sk</h1>"), "{page}");
    assert!(page.contains("<label for=\"role\">Role</label>"), "{page}");
    assert!(
        page.contains("<option value=\"accountant\" selected>"),
        "{page}"
    );
    let token = csrf(&page);
    let page = c
        .answer(
            &format!("/console/people/{jana}/role"),
            Some(&admin),
            &[("csrf", &token), ("role", "admin")],
            200,
        )
        .await;
    assert!(
        page.contains(
            "<p class=\"notice\" role=\"status\">The role is changed. New role: Administrator.</p>"
        ),
        "{page}"
    );
    // Her next page load has the new role's rights: People and Keys.
    let home = c.page("/console", &session).await;
    assert!(home.contains("<dd>Administrator</dd>"), "{home}");
    assert!(home.contains("href=\"/console/keys\""), "{home}");
    assert_eq!(c.get_as("/console/people", &session).await.status(), 200);
    assert_eq!(c.get_as("/console/keys", &session).await.status(), 200);

    // An auditor again: the rights go as they came.
    let r = c
        .post(
            &format!("/console/people/{jana}/role"),
            Some(&admin),
            &[("csrf", &token), ("role", "auditor")],
        )
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(c.get_as("/console/people", &session).await.status(), 403);
    assert_eq!(c.get_as("/console/keys", &session).await.status(), 403);
    let home = c.page("/console", &session).await;
    assert!(home.contains("<dd>Auditor</dd>"), "{home}");
    assert!(!home.contains("href=\"/console/keys\""), "{home}");
    // Not a role: refused, nothing changed.
    let page = c
        .answer(
            &format!("/console/people/{jana}/role"),
            Some(&admin),
            &[("csrf", &token), ("role", "boss")],
            422,
        )
        .await;
    assert!(page.contains("role=\"alert\""), "{page}");

    // Disabled: her live session ends at once, and signing in is refused with the answer a
    // wrong password gets.
    let second = session_cookie(&c.sign_in("jana@firma.sk", PASSWORD).await);
    let page = c
        .answer(
            &format!("/console/people/{jana}/disable"),
            Some(&admin),
            &[("csrf", &token)],
            200,
        )
        .await;
    assert!(
        page.contains("role=\"status\">The account is disabled and all its sessions have ended."),
        "{page}"
    );
    assert!(page.contains("Enable account"), "{page}");
    for live in [&session, &second] {
        let r = c.get_as("/console", live).await;
        assert_eq!(r.status(), 303);
        assert_eq!(location(&r), "/console/sign-in");
    }
    let disabled = refusal(c.sign_in("jana@firma.sk", PASSWORD).await).await;
    let wrong = refusal(c.sign_in("nikto@firma.sk", PASSWORD).await).await;
    assert_eq!(disabled, wrong);
    let people = c.page("/console/people", &admin).await;
    assert!(
        row(&people, "jana@firma.sk").contains("<td>disabled</td>"),
        "{people}"
    );

    // Enabled again: she signs in with her password, as an auditor still.
    let page = c
        .answer(
            &format!("/console/people/{jana}/enable"),
            Some(&admin),
            &[("csrf", &token)],
            200,
        )
        .await;
    assert!(
        page.contains("role=\"status\">The account is enabled; the person can sign in again."),
        "{page}"
    );
    let r = c.sign_in("jana@firma.sk", PASSWORD).await;
    assert_eq!(r.status(), 303);
    let home = c.page("/console", &session_cookie(&r)).await;
    assert!(home.contains("<dd>Auditor</dd>"), "{home}");
    // The old sessions stay ended.
    assert_eq!(c.get_as("/console", &session).await.status(), 303);
}

#[tokio::test]
async fn own_account_last_admin_and_other_tenants_are_refused() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let admin = c.first_admin().await;
    let people = c.page("/console/people", &admin).await;
    let me = person_id(&people, "admin@firma.sk");

    // Their own page offers no way to demote or disable themself, and asking is refused.
    let page = c.page(&format!("/console/people/{me}"), &admin).await;
    assert!(page.contains("This is your own account"), "{page}");
    assert!(!page.contains("Disable account"), "{page}");
    let token = csrf(&page);
    for (path, form) in [
        ("disable", vec![("csrf", token.as_str())]),
        ("role", vec![("csrf", token.as_str()), ("role", "auditor")]),
    ] {
        let r = c
            .post(&format!("/console/people/{me}/{path}"), Some(&admin), &form)
            .await;
        assert_eq!(r.status(), 409, "{path}");
        let page = r.text().await.unwrap();
        assert!(
            page.contains("role=\"alert\">This is your own account"),
            "{page}"
        );
    }
    let home = c.page("/console", &admin).await;
    assert!(home.contains("<dd>Administrator</dd>"), "{home}");

    // Two administrators demoting (or disabling) each other at the same moment: one of
    // them goes through, the other is refused, and the tenant keeps one administrator.
    let (boss, boss_session) = c.join(&admin, "boss@firma.sk", "admin").await;
    let boss_token = csrf(&c.page("/console", &boss_session).await);
    let mut sides = [
        (me.clone(), admin.clone(), token.clone()),
        (boss.clone(), boss_session, boss_token),
    ];
    let store = &s.running.as_ref().unwrap().state.store;
    for round in 0..6 {
        let action = if round % 2 == 0 { "role" } else { "disable" };
        let requests = [(0, 1), (1, 0)].map(|(actor, target)| {
            let (_, session, token) = &sides[actor];
            let path = format!("/console/people/{}/{action}", sides[target].0);
            let request = c
                .client
                .post(s.url(&path))
                .header("Origin", &s.base)
                .header("Cookie", format!("invex_session={session}"))
                .form(&[("csrf", token.as_str()), ("role", "developer")]);
            async move { request.send().await.unwrap().status().as_u16() }
        });
        let [a, b] = requests;
        let (a, b) = tokio::join!(a, b);
        // The loser is refused as the last admin (409), or, when the winner was quicker,
        // is no admin any more (403) or has no session any more (303).
        assert_eq!(
            [a, b].iter().filter(|s| **s == 200).count(),
            1,
            "round {round}: {a} {b}"
        );
        assert!(
            [a, b].iter().all(|s| [200, 303, 403, 409].contains(s)),
            "round {round}: {a} {b}"
        );
        assert_eq!(
            store
                .active_admins(invex_server::store::OPERATOR_TENANT_ID)
                .await
                .unwrap(),
            1,
            "round {round}"
        );
        // The winner makes the other an administrator again; a disabled loser is enabled
        // and signs in anew.
        let (winner, loser) = if a == 200 { (0, 1) } else { (1, 0) };
        let (_, w_session, w_token) = sides[winner].clone();
        let loser_id = sides[loser].0.clone();
        let (path, form) = if action == "disable" {
            ("enable", vec![("csrf", w_token.as_str())])
        } else {
            ("role", vec![("csrf", w_token.as_str()), ("role", "admin")])
        };
        let r = c
            .post(
                &format!("/console/people/{loser_id}/{path}"),
                Some(&w_session),
                &form,
            )
            .await;
        assert_eq!(r.status(), 200, "round {round}");
        if action == "disable" {
            let (email, password) = if loser == 0 {
                ("admin@firma.sk", ADMIN_PASSWORD)
            } else {
                ("boss@firma.sk", PASSWORD)
            };
            let fresh = session_cookie(&c.sign_in(email, password).await);
            let fresh_token = csrf(&c.page("/console", &fresh).await);
            sides[loser].1 = fresh;
            sides[loser].2 = fresh_token;
        }
    }
    let admin = sides[0].1.clone();

    // Another tenant's administrator finds nobody of this tenant, and this one nobody of
    // theirs.
    let tenant: Value = s
        .v1(Method::POST, "/v1/tenants", BOOTSTRAP)
        .json(&serde_json::json!({"name": "Iná firma"}))
        .value()
        .await;
    let other_tenant = tenant["tenant"]["id"].as_str().unwrap();
    let accounts = &s.running.as_ref().unwrap().state.accounts;
    let link = accounts
        .first_admin(other_tenant)
        .await
        .unwrap()
        .expect("a first admin for the new tenant");
    let other = c
        .complete(
            &format!("/console/links/{}", link.token),
            Some("admin@ina.sk"),
            PASSWORD,
        )
        .await;
    let other_people = c.page("/console/people", &other).await;
    assert!(!other_people.contains("firma.sk"), "{other_people}");
    let stranger = person_id(&other_people, "admin@ina.sk");
    let other_token = csrf(&other_people);
    assert_eq!(
        c.get_as(&format!("/console/people/{boss}"), &other)
            .await
            .status(),
        404
    );
    for (path, form) in [
        ("disable", vec![("csrf", other_token.as_str())]),
        ("enable", vec![("csrf", other_token.as_str())]),
        (
            "role",
            vec![("csrf", other_token.as_str()), ("role", "auditor")],
        ),
    ] {
        let r = c
            .post(
                &format!("/console/people/{boss}/{path}"),
                Some(&other),
                &form,
            )
            .await;
        assert_eq!(r.status(), 404, "{path}");
    }
    let admin_token = csrf(&c.page("/console", &admin).await);
    let r = c
        .post(
            &format!("/console/people/{stranger}/disable"),
            Some(&admin),
            &[("csrf", &admin_token)],
        )
        .await;
    assert_eq!(r.status(), 404);
    assert_eq!(
        c.get_as(&format!("/console/people/{stranger}"), &admin)
            .await
            .status(),
        404
    );
    // Nothing changed on either side.
    let people = c.page("/console/people", &admin).await;
    assert!(row(&people, "boss@firma.sk").contains("<td>active</td>"));
    assert_eq!(c.get_as("/console/people", &other).await.status(), 200);
}

#[tokio::test]
async fn keys_are_shown_once_work_on_the_api_and_stop_when_revoked() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let admin = c.first_admin().await;

    // The admin's navigation leads to the keys; the bootstrap key is listed by prefix.
    let home = c.page("/console", &admin).await;
    assert!(
        home.contains("<a href=\"/console/keys\">Keys</a>"),
        "{home}"
    );
    let page = c.page("/console/keys", &admin).await;
    assert!(page.contains("<h1>API keys</h1>"), "{page}");
    assert!(page.contains("<th scope=\"col\">Prefix</th>"), "{page}");
    assert!(page.contains("<label for=\"name\">Label</label>"), "{page}");
    assert!(!page.contains(BOOTSTRAP), "never a key itself");
    let token = csrf(&page);

    // Created: the key is on the answer, once.
    let r = c
        .post(
            "/console/keys",
            Some(&admin),
            &[
                ("csrf", &token),
                ("name", "ERP <test>"),
                ("role", "developer"),
            ],
        )
        .await;
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["cache-control"], "no-store");
    let page = r.text().await.unwrap();
    assert!(
        page.contains("role=\"status\">Key created. Copy it now"),
        "{page}"
    );
    let at = page
        .find("<code class=\"link\" data-copy>")
        .expect("the key")
        + "<code class=\"link\" data-copy>".len();
    let key = page[at..at + page[at..].find('<').unwrap()].to_string();
    assert!(key.starts_with("inx_") && key.len() > 40, "{key}");
    assert!(page.contains("ERP &lt;test&gt;"), "the label is text");
    let list = c.page("/console/keys", &admin).await;
    assert!(!list.contains(&key), "shown only once");
    assert!(list.contains(&key[..16]), "listed by its prefix");
    assert!(list.contains("<td>Developer</td>"), "{list}");

    // It works on the API, with the role it was given.
    let r = s
        .v1(Method::GET, "/v1/rulepacks", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = s.v1(Method::GET, "/v1/keys", &key).send().await.unwrap();
    assert_eq!(r.status(), 403);
    let keys: Value = s.v1(Method::GET, "/v1/keys", BOOTSTRAP).value().await;
    let made = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "ERP <test>")
        .expect("the key is the tenant's");
    assert_eq!(made["role"], "developer");
    let id = made["id"].as_str().unwrap();

    // Bad forms: refused, nothing created.
    for (name, role) in [
        ("", "developer"),
        ("x", "boss"),
        (&*"x".repeat(101), "auditor"),
    ] {
        let r = c
            .post(
                "/console/keys",
                Some(&admin),
                &[("csrf", &token), ("name", name), ("role", role)],
            )
            .await;
        assert_eq!(r.status(), 422, "{name} {role}");
        assert!(r.text().await.unwrap().contains("role=\"alert\""));
    }

    // Revoked: the API refuses it at once; twice is refused.
    let revoke = format!("/console/keys/{id}/revoke");
    assert!(list.contains(&format!("action=\"{revoke}\"")), "{list}");
    let r = c.post(&revoke, Some(&admin), &[("csrf", &token)]).await;
    assert_eq!(r.status(), 200);
    let page = r.text().await.unwrap();
    assert!(
        page.contains(&format!(
            "role=\"status\">The key is revoked; the API refuses it from now on: {} (ERP &lt;test&gt;)",
            &key[..16]
        )),
        "{page}"
    );
    assert!(!page.contains(&format!("action=\"{revoke}\"")), "{page}");
    let r = s
        .v1(Method::GET, "/v1/rulepacks", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = c.post(&revoke, Some(&admin), &[("csrf", &token)]).await;
    assert_eq!(r.status(), 409);

    // The tenant's last admin key is kept, as on the API.
    let boot = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["role"] == "admin")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let page = c
        .answer(
            &format!("/console/keys/{boot}/revoke"),
            Some(&admin),
            &[("csrf", &token)],
            409,
        )
        .await;
    assert!(
        page.contains("role=\"alert\">This is the tenant's last active administrator key"),
        "{page}"
    );
    let r = s
        .v1(Method::GET, "/v1/keys", BOOTSTRAP)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    // Another tenant's key is not found, and keeps working.
    let tenant: Value = s
        .v1(Method::POST, "/v1/tenants", BOOTSTRAP)
        .json(&serde_json::json!({"name": "Iná firma"}))
        .value()
        .await;
    let other_id = tenant["admin_key"]["id"].as_str().unwrap();
    let other_key = tenant["admin_key"]["key"].as_str().unwrap();
    let r = c
        .post(
            &format!("/console/keys/{other_id}/revoke"),
            Some(&admin),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(r.status(), 404);
    let r = s
        .v1(Method::GET, "/v1/keys", other_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let list = c.page("/console/keys", &admin).await;
    assert!(!list.contains(&other_key[..16]), "{list}");

    // Only administrators see the keys.
    let (_, accountant) = c.join(&admin, "ucto@firma.sk", "accountant").await;
    assert_eq!(c.get_as("/console/keys", &accountant).await.status(), 403);
    let acc_token = csrf(&c.page("/console", &accountant).await);
    let r = c
        .post(
            "/console/keys",
            Some(&accountant),
            &[("csrf", &acc_token), ("name", "mine"), ("role", "admin")],
        )
        .await;
    assert_eq!(r.status(), 403);
    let home = c.page("/console", &accountant).await;
    assert!(!home.contains("/console/keys"), "{home}");
}

#[tokio::test]
async fn every_administration_form_checks_its_token_and_origin() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let admin = c.first_admin().await;
    let (jana, _) = c.join(&admin, "jana@firma.sk", "accountant").await;
    let token = csrf(&c.page("/console", &admin).await);
    let (key_id, key) = s.create_key(BOOTSTRAP, "developer").await;

    let forms: Vec<(String, Vec<(&str, &str)>)> = vec![
        (
            format!("/console/people/{jana}/role"),
            vec![("role", "admin")],
        ),
        (format!("/console/people/{jana}/disable"), vec![]),
        (format!("/console/people/{jana}/enable"), vec![]),
        (
            "/console/keys".to_string(),
            vec![("name", "sneaky"), ("role", "admin")],
        ),
        (format!("/console/keys/{key_id}/revoke"), vec![]),
    ];
    for (path, fields) in &forms {
        let with = |csrf: Option<&str>| {
            let mut form: Vec<(String, String)> = fields
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            if let Some(t) = csrf {
                form.push(("csrf".into(), t.into()));
            }
            form
        };
        // Without a token, with a wrong one, and with the right one from another site.
        let r = c.post(path, Some(&admin), &pairs(&with(None))).await;
        assert_eq!(r.status(), 403, "{path} without a token");
        let r = c
            .post(
                path,
                Some(&admin),
                &pairs(&with(Some(&token[..token.len() - 1]))),
            )
            .await;
        assert_eq!(r.status(), 403, "{path} with a wrong token");
        let r = c
            .client
            .post(s.url(path))
            .header("Cookie", format!("invex_session={admin}"))
            .header("Origin", "https://evil.example")
            .header("Sec-Fetch-Site", "cross-site")
            .form(&with(Some(&token)))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 403, "{path} from another site");
        // Not signed in: to the sign-in page.
        let r = c.post(path, None, &pairs(&with(Some(&token)))).await;
        assert_eq!(r.status(), 303, "{path} without a session");
    }
    // Nothing happened.
    let people = c.page("/console/people", &admin).await;
    assert!(row(&people, "jana@firma.sk").contains("<td>Accountant</td>"));
    assert!(row(&people, "jana@firma.sk").contains("<td>active</td>"));
    let list = c.page("/console/keys", &admin).await;
    assert!(!list.contains("sneaky"), "{list}");
    let r = s
        .v1(Method::GET, "/v1/rulepacks", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn a_person_who_has_not_signed_in_gets_a_new_invitation_link() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let admin = c.first_admin().await;
    let page = c.invited(&admin, "eva@firma.sk", "accountant").await;
    let first = invitation_link(&page);
    let eva = person_id(&page, "eva@firma.sk");

    // The mail was lost: a new link, shown once; the first one stops working.
    let person = c.page(&format!("/console/people/{eva}"), &admin).await;
    assert!(person.contains("New invitation link"), "{person}");
    let r = c
        .post(
            &format!("/console/people/{eva}/link"),
            Some(&admin),
            &[("csrf", &csrf(&person))],
        )
        .await;
    assert_eq!(r.status(), 200);
    let page = r.text().await.unwrap();
    let second = invitation_link(&page);
    assert_ne!(first, second);
    assert_eq!(c.get(&first, None).await.status(), 404);
    let session = c.complete(&second, None, PASSWORD).await;
    assert!(c.page("/console", &session).await.contains("eva@firma.sk"));

    // Signed in now: no new link (the page offers none; a form sent anyway is refused).
    let person = c.page(&format!("/console/people/{eva}"), &admin).await;
    assert!(!person.contains("New invitation link"));
    let r = c
        .post(
            &format!("/console/people/{eva}/link"),
            Some(&admin),
            &[("csrf", &csrf(&person))],
        )
        .await;
    assert_eq!(r.status(), 409);
    // Nor without the form's token, nor for another tenant's person.
    let r = c
        .post(&format!("/console/people/{eva}/link"), Some(&admin), &[])
        .await;
    assert_eq!(r.status(), 403);
    let r = c
        .post(
            "/console/people/per_unknown/link",
            Some(&admin),
            &[("csrf", &csrf(&person))],
        )
        .await;
    assert_eq!(r.status(), 404);
}
