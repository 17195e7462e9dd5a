//! The console as a browser uses it, over HTTP: no redirect followed (each answer is looked
//! at), the session cookie carried by hand, forms sent as from the console's own origin.

use reqwest::redirect::Policy;
use reqwest::{Client, Response};

use super::TestServer;

/// The first administrator's password in these tests.
pub const ADMIN_PASSWORD: &str = "a long enough password";

pub struct Console<'a> {
    pub s: &'a TestServer,
    pub client: Client,
    /// `Accept-Language` of every request; none: the server's default (Slovak).
    lang: Option<&'static str>,
}

impl<'a> Console<'a> {
    pub fn new(s: &'a TestServer) -> Console<'a> {
        Console {
            s,
            client: Client::builder().redirect(Policy::none()).build().unwrap(),
            lang: None,
        }
    }

    /// A browser that prefers English pages.
    pub fn english(s: &'a TestServer) -> Console<'a> {
        Console {
            lang: Some("en"),
            ..Console::new(s)
        }
    }

    /// A path of the server, or a whole URL (links printed or mailed).
    fn url(&self, path: &str) -> String {
        if path.starts_with("http") {
            path.to_string()
        } else {
            self.s.url(path)
        }
    }

    fn with_lang(&self, r: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match self.lang {
            Some(l) => r.header("Accept-Language", l),
            None => r,
        }
    }

    pub async fn get(&self, path: &str, cookie: Option<&str>) -> Response {
        let mut r = self.with_lang(self.client.get(self.url(path)));
        if let Some(c) = cookie {
            r = r.header("Cookie", format!("invex_session={c}"));
        }
        r.send().await.unwrap()
    }

    /// GET as the person of session `cookie`.
    pub async fn get_as(&self, path: &str, cookie: &str) -> Response {
        self.get(path, Some(cookie)).await
    }

    /// A page that must answer 200, as text.
    pub async fn page(&self, path: &str, cookie: &str) -> String {
        let r = self.get_as(path, cookie).await;
        assert_eq!(r.status(), 200, "GET {path}");
        r.text().await.unwrap()
    }

    /// A form POST as the console's own page sends it.
    pub async fn post(&self, path: &str, cookie: Option<&str>, form: &[(&str, &str)]) -> Response {
        let mut r = self
            .with_lang(self.client.post(self.url(path)))
            .header("Origin", &self.s.base)
            .header("Sec-Fetch-Site", "same-origin")
            .form(form);
        if let Some(c) = cookie {
            r = r.header("Cookie", format!("invex_session={c}"));
        }
        r.send().await.unwrap()
    }

    /// A form POST whose answer must have `status`: the page it answered.
    pub async fn answer(
        &self,
        path: &str,
        cookie: Option<&str>,
        form: &[(&str, &str)],
        status: u16,
    ) -> String {
        let r = self.post(path, cookie, form).await;
        assert_eq!(r.status(), status, "POST {path}");
        r.text().await.unwrap()
    }

    /// Set a password on a one-time link; the new session's token.
    pub async fn complete(&self, link: &str, email: Option<&str>, password: &str) -> String {
        let mut form = vec![("password", password)];
        if let Some(e) = email {
            form.push(("email", e));
        }
        let r = self.post(link, None, &form).await;
        assert_eq!(r.status(), 303, "{}", r.text().await.unwrap());
        session_cookie(&r)
    }

    /// The first admin of the bootstrap tenant, signed in.
    pub async fn first_admin(&self) -> String {
        let link = self.s.running.as_ref().unwrap().first_admin_link.clone();
        self.complete(
            &link.expect("the first admin's link"),
            Some("admin@firma.sk"),
            ADMIN_PASSWORD,
        )
        .await
    }

    /// `email` invited by `admin` as `role` on *People* (must answer 201): the answer page,
    /// with the invitation link.
    pub async fn invited(&self, admin: &str, email: &str, role: &str) -> String {
        let people = self.page("/console/people", admin).await;
        let r = self
            .post(
                "/console/people",
                Some(admin),
                &[("csrf", &csrf(&people)), ("email", email), ("role", role)],
            )
            .await;
        assert_eq!(r.status(), 201, "inviting {email}");
        r.text().await.unwrap()
    }

    pub async fn sign_in(&self, email: &str, password: &str) -> Response {
        self.post(
            "/console/sign-in",
            None,
            &[("email", email), ("password", password)],
        )
        .await
    }
}

/// The session token a sign-in set, after checking the cookie's attributes.
pub fn session_cookie(r: &Response) -> String {
    let cookie = r
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("invex_session="))
        .unwrap_or_else(|| panic!("no session cookie in {:?}", r.headers()))
        .to_string();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    assert!(cookie.contains("SameSite=Strict"), "{cookie}");
    cookie["invex_session=".len()..]
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

pub fn location(r: &Response) -> &str {
    r.headers()["location"].to_str().unwrap()
}

/// The one-time link an invitation's answer shows.
pub fn invitation_link(page: &str) -> String {
    let at = page.find("/console/links/").expect("the invitation link");
    page[at..]
        .chars()
        .take_while(|ch| ch.is_ascii_alphanumeric() || "/-_".contains(*ch))
        .collect()
}

/// The CSRF token of the page's forms.
pub fn csrf(html: &str) -> String {
    let at = html
        .find("name=\"csrf\" value=\"")
        .expect("a form with a CSRF token");
    let rest = &html[at + "name=\"csrf\" value=\"".len()..];
    rest[..rest.find('"').unwrap()].to_string()
}
