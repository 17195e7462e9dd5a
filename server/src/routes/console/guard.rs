//! What every console request is checked for: the session cookie, the same-origin rule for
//! state-changing requests, the CSRF token of signed-in forms, and the security headers
//! of every page.

use axum::http::{header, HeaderMap, HeaderValue, Response};

use crate::settings::Mode;

pub const SESSION_COOKIE: &str = "invex_session";

/// A cookie's value from the request's `Cookie` headers. (Hand-parsed: names and values
/// the console sets are plain tokens, and a cookie crate would add nothing here.)
pub fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.trim_matches('"').to_string())
}

/// The session cookie: `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's
/// page sends it), `Secure` in production (HTTPS only), for the console's paths only.
pub fn session_cookie(token: &str, mode: Mode) -> String {
    let secure = if mode == Mode::Production {
        "; Secure"
    } else {
        ""
    };
    format!("{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict{secure}")
}

/// A cookie that removes the session cookie.
pub fn cleared_session_cookie(mode: Mode) -> String {
    let secure = if mode == Mode::Production {
        "; Secure"
    } else {
        ""
    };
    format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}")
}

/// Whether a state-changing request comes from the console's own pages. Browsers say
/// where a request comes from in `Sec-Fetch-Site` (and `Origin` on every cross-origin
/// POST): anything but `same-origin`, or an `Origin` other than this host, is refused.
/// A request with neither header comes from no browser page, so no other site can have
/// caused it.
pub fn same_origin(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site") {
        if site.as_bytes() != b"same-origin" {
            return false;
        }
    }
    match headers.get(header::ORIGIN) {
        None => true,
        Some(origin) => {
            let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
                return false;
            };
            let origin = origin.to_str().unwrap_or("");
            origin == format!("http://{host}") || origin == format!("https://{host}")
        }
    }
}

/// The headers of every console page: a Content-Security-Policy that allows only the
/// console's own stylesheet, script file and forms (no inline script, no framing), no referrer to other
/// sites (link tokens are in URLs; `no-referrer` would also make browsers send
/// `Origin: null` with the console's own forms, which the same-origin check must refuse), no
/// caching of pages that show personal data, HSTS in production.
pub fn secure<B>(mut response: Response<B>, mode: Mode) -> Response<B> {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    if mode == Mode::Production {
        h.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000; includeSubDomains"),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn cookies_are_found_by_name() {
        let h = headers(&[("cookie", "a=1; invex_session=tok"), ("cookie", "b=2")]);
        assert_eq!(cookie(&h, "invex_session").as_deref(), Some("tok"));
        assert_eq!(cookie(&h, "b").as_deref(), Some("2"));
        assert_eq!(cookie(&h, "invex"), None);
    }

    #[test]
    fn only_same_origin_requests_change_state() {
        let host = ("host", "console.example:8080");
        assert!(same_origin(&headers(&[host])));
        assert!(same_origin(&headers(&[
            host,
            ("origin", "http://console.example:8080"),
            ("sec-fetch-site", "same-origin"),
        ])));
        assert!(!same_origin(&headers(&[
            host,
            ("origin", "https://evil.example")
        ])));
        assert!(!same_origin(&headers(&[
            host,
            ("sec-fetch-site", "cross-site")
        ])));
        assert!(!same_origin(&headers(&[
            host,
            ("sec-fetch-site", "same-site")
        ])));
        assert!(!same_origin(&headers(&[(
            "origin",
            "http://console.example:8080"
        )])));
    }

    #[test]
    fn the_session_cookie_is_secure_in_production() {
        let c = session_cookie("t", Mode::Production);
        assert!(c.contains("HttpOnly") && c.contains("SameSite=Strict") && c.contains("Secure"));
        assert!(!session_cookie("t", Mode::Sandbox).contains("Secure"));
        assert!(cleared_session_cookie(Mode::Sandbox).contains("Max-Age=0"));
    }
}
