//! `GET /v1/vat/verify`: the sandbox register without a key, and the real VIES client in
//! production against a local server speaking the VIES REST wire format.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::routing::post;
use axum::{Json, Router};
use reqwest::Method;
use serde_json::{json, Value};
use support::{problem, TestServer, BOOTSTRAP};

#[tokio::test]
async fn the_sandbox_answers_without_a_key_or_with_the_placeholder() {
    let s = TestServer::start().await;
    for key in [None, Some("sandbox"), Some(BOOTSTRAP)] {
        let mut req = s.client.get(s.url("/v1/vat/verify?vat=SK 2022 749 619"));
        if let Some(k) = key {
            req = req.header("X-API-Key", k);
        }
        let r = req.send().await.unwrap();
        assert_eq!(r.status(), 200, "{key:?}");
        assert_eq!(r.headers()["invex-environment"], "sandbox");
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["vat"], "SK2022749619");
        assert_eq!(body["valid"], true);
        assert_eq!(body["status"], "valid");
        assert_eq!(body["source"], "sandbox");
        assert_eq!(body["environment"], "sandbox");
        assert!(body["name"].as_str().unwrap().contains("Sandbox"));
        assert!(body["checked_at"].as_str().unwrap().ends_with('Z'));
    }
    // Local checks answer at once, with the reason.
    let body: Value = s
        .client
        .get(s.url("/v1/vat/verify?vat=SK2020123456"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["valid"], false);
    assert_eq!(body["status"], "invalid_format");
    assert_eq!(body["source"], "local-checks");
    assert!(!body["reason"].as_str().unwrap().is_empty());
    // A wrong key is still refused, and other routes still need a real key.
    problem(
        s.client
            .get(s.url("/v1/vat/verify?vat=SK2022749619"))
            .header("X-API-Key", "inx_000000000000_x")
            .send()
            .await
            .unwrap(),
        401,
    )
    .await;
    problem(
        s.v1(Method::GET, "/v1/rulepacks", "sandbox")
            .send()
            .await
            .unwrap(),
        401,
    )
    .await;
}

/// A local VIES: answers by national number; counts requests.
async fn vies_stub(calls: Arc<AtomicUsize>) -> String {
    let app = Router::new().route("/check-vat-number", post(move |Json(body): Json<Value>| {
        let calls = calls.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            let number = body["vatNumber"].as_str().unwrap_or("").to_string();
            let country = body["countryCode"].as_str().unwrap_or("").to_string();
            match number.as_str() {
                "2022749619" => Json(json!({"countryCode": country, "vatNumber": number, "requestDate": "2026-11-24T10:00:00.000Z",
                    "valid": true, "requestIdentifier": "", "name": "FIRMA s.r.o.", "address": "Hlavná 1\n81101 Bratislava"})),
                "129273398" => Json(json!({"countryCode": country, "vatNumber": number, "valid": true, "name": "---", "address": "---"})),
                "2020317068" => Json(json!({"actionSucceed": false, "errorWrappers": [{"error": "MS_UNAVAILABLE", "message": "SK is down"}]})),
                "1020304758" => {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    Json(json!({"valid": true}))
                }
                _ => Json(json!({"countryCode": country, "vatNumber": number, "valid": false, "name": "---", "address": "---"})),
            }
        }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

#[tokio::test]
async fn production_asks_vies_and_never_reports_an_outage_as_invalid() {
    let calls = Arc::new(AtomicUsize::new(0));
    let vies = vies_stub(calls.clone()).await;
    let s = TestServer::with(|c| {
        c.mode = invex_server::Mode::Production;
        c.vies_url = vies.clone();
        c.register_timeout_ms = 300;
    })
    .await;
    let get = |vat: &str| {
        s.v1(Method::GET, &format!("/v1/vat/verify?vat={vat}"), BOOTSTRAP)
            .send()
    };

    let body: Value = get("SK2022749619").await.unwrap().json().await.unwrap();
    assert_eq!(
        (body["valid"].clone(), body["source"].clone()),
        (json!(true), json!("VIES"))
    );
    assert_eq!(body["name"], "FIRMA s.r.o.");
    assert_eq!(body["environment"], "production");
    let body: Value = get("DE129273398").await.unwrap().json().await.unwrap();
    assert_eq!(body["valid"], true);
    assert!(body["name"].is_null(), "undisclosed `---` is no name");
    let body: Value = get("SK2020317060").await.unwrap().json().await.unwrap();
    assert_eq!(body["status"], "invalid_format");
    let before = calls.load(Ordering::SeqCst);
    // Locally invalid numbers never reach the register.
    assert_eq!(before, 2);

    let r = get("SK2020317068").await.unwrap();
    assert_eq!(r.headers()["retry-after"], "300");
    let p = problem(r, 503).await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("#register-unavailable"));
    assert!(p["detail"].as_str().unwrap().contains("MS_UNAVAILABLE"));
    // A register slower than the budget: unavailable, not invalid, and not held for 5 s.
    let p = problem(get("SK1020304758").await.unwrap(), 503).await;
    assert!(p["detail"].as_str().unwrap().contains("time budget"), "{p}");

    // Production needs a real key on this route.
    problem(
        s.client
            .get(s.url("/v1/vat/verify?vat=SK2022749619"))
            .send()
            .await
            .unwrap(),
        401,
    )
    .await;
    problem(
        s.client
            .get(s.url("/v1/vat/verify?vat=SK2022749619"))
            .header("X-API-Key", "sandbox")
            .send()
            .await
            .unwrap(),
        401,
    )
    .await;
}
