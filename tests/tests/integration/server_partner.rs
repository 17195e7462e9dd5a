//! Sending through an HTTP delivery partner: the real adapter against a local partner API,
//! and the partner's signed status callbacks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::{example, problem, JsonBody, TestServer, BOOTSTRAP};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::Sha256;

/// The partner's record of submissions: idempotency key → (transmission id, count).
#[derive(Clone, Default)]
struct Partner {
    submissions: Arc<Mutex<HashMap<String, (String, usize)>>>,
}

async fn submissions(
    State(p): State<Partner>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> (StatusCode, Json<Value>) {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if auth == "Bearer refuse-me" {
        return (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(json!({"error": "receiver not reachable on this network"})),
        );
    }
    assert_eq!(auth, "Bearer partner-key");
    assert!(body["document"].as_str().unwrap().contains("<Invoice"));
    let key = headers["idempotency-key"].to_str().unwrap().to_string();
    let mut all = p.submissions.lock().unwrap();
    let n = all.len();
    let entry = all.entry(key).or_insert_with(|| (format!("tx-{n}"), 0));
    entry.1 += 1;
    (
        StatusCode::CREATED,
        Json(json!({"transmission_id": entry.0, "events": [{"kind": "MLS", "code": "AB"}]})),
    )
}

async fn connect(s: &TestServer, base: &str, api_key: &str) -> (String, String) {
    let r = s
        .v1(Method::POST, "/v1/connections", BOOTSTRAP)
        .json(&json!({"partner": "http", "base_url": base, "api_key": api_key}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let c: Value = r.json().await.unwrap();
    let id = c["id"].as_str().unwrap().to_string();
    assert_eq!(c["callback_url"], format!("/v1/partner/callbacks/{id}"));
    let secret = c["callback_secret"].as_str().unwrap().to_string();
    let r = s
        .v1(
            Method::POST,
            &format!("/v1/connections/{id}/activate"),
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    (id, secret)
}

async fn timeline_until(s: &TestServer, id: &str, status: &str) -> Value {
    for _ in 0..100 {
        let t: Value = s
            .api(Method::GET, &format!("/api/messages/{id}"), BOOTSTRAP)
            .value()
            .await;
        if t["status"] == status {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{id} never reached {status}");
}

fn sign(secret: &str, id: &str, ts: i64, body: &str) -> String {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{ts}.{body}").as_bytes());
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

async fn callback(
    s: &TestServer,
    connection: &str,
    secret: &str,
    ts: i64,
    body: &Value,
) -> reqwest::Response {
    let text = body.to_string();
    s.client
        .post(s.url(&format!("/v1/partner/callbacks/{connection}")))
        .header("webhook-id", "msg_cb_1")
        .header("webhook-timestamp", ts.to_string())
        .header("webhook-signature", sign(secret, "msg_cb_1", ts, &text))
        .header("content-type", "application/json")
        .body(text)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn invoices_go_to_the_partner_api_and_its_signed_callbacks_move_them_on() {
    let partner = Partner::default();
    let base = crate::support::serve_stub(
        Router::new()
            .route("/api/submissions", post(submissions))
            .with_state(partner.clone()),
    )
    .await;
    let s = TestServer::start().await;
    let (connection, secret) = connect(&s, &format!("{base}/api"), "partner-key").await;
    let r = s
        .v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .header("Idempotency-Key", "p-1")
        .body(example("invoice-sk.xml"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let t = timeline_until(&s, &id, "delivered").await;
    let tx = t["transmission_id"].as_str().unwrap().to_string();
    {
        let all = partner.submissions.lock().unwrap();
        assert_eq!(
            all.get(&id).map(|e| (e.0.as_str(), e.1)),
            Some((tx.as_str(), 1))
        );
    }

    // The buyer accepts: the partner calls back, signed.
    let now = chrono_now();
    let accepted = json!({"transmission_id": tx, "event": {"kind": "IR", "code": "AP"}});
    assert_eq!(
        callback(&s, &connection, &secret, now, &accepted)
            .await
            .status(),
        204
    );
    let t = timeline_until(&s, &id, "accepted").await;
    // A repeated callback changes nothing.
    assert_eq!(
        callback(&s, &connection, &secret, now, &accepted)
            .await
            .status(),
        204
    );
    let again: Value = s
        .api(Method::GET, &format!("/api/messages/{id}"), BOOTSTRAP)
        .value()
        .await;
    assert_eq!(again["events"], t["events"]);

    // Forged, stale and misdirected callbacks are refused.
    problem(
        callback(
            &s,
            &connection,
            "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
            now,
            &accepted,
        )
        .await,
        401,
    )
    .await;
    problem(
        callback(&s, &connection, &secret, now - 3600, &accepted).await,
        401,
    )
    .await;
    let unknown = json!({"transmission_id": "tx-999", "event": {"kind": "IR", "code": "AP"}});
    problem(callback(&s, &connection, &secret, now, &unknown).await, 404).await;
    let bad = json!({"transmission_id": tx, "event": {"kind": "IR", "code": "ZZ"}});
    problem(callback(&s, &connection, &secret, now, &bad).await, 422).await;
    problem(callback(&s, "con_nope", &secret, now, &accepted).await, 404).await;
}

#[tokio::test]
async fn a_refusal_by_the_partner_fails_the_invoice() {
    let base = crate::support::serve_stub(
        Router::new()
            .route("/submissions", post(submissions))
            .with_state(Partner::default()),
    )
    .await;
    let s = TestServer::start().await;
    connect(&s, &base, "refuse-me").await;
    let r = s
        .v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .header("Idempotency-Key", "p-2")
        .body(example("invoice-sk.xml"))
        .send()
        .await
        .unwrap();
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let t = timeline_until(&s, &id, "failed").await;
    let last = t["events"].as_array().unwrap().last().unwrap();
    assert!(
        last["meaning"]
            .as_str()
            .unwrap()
            .contains("receiver not reachable"),
        "{last}"
    );
}

#[tokio::test]
async fn http_partners_need_an_https_root_and_a_key() {
    let s = TestServer::with(|c| c.mode = invex_server::Mode::Production).await;
    let create = |body: Value| {
        s.v1(Method::POST, "/v1/connections", BOOTSTRAP)
            .json(&body)
            .send()
    };
    problem(
        create(json!({"partner": "http", "api_key": "k"}))
            .await
            .unwrap(),
        422,
    )
    .await;
    problem(
        create(json!({"partner": "http", "base_url": "https://ap.example"}))
            .await
            .unwrap(),
        422,
    )
    .await;
    problem(
        create(json!({"partner": "http", "base_url": "http://127.0.0.1:9/api", "api_key": "k"}))
            .await
            .unwrap(),
        422,
    )
    .await;
    problem(create(json!({"partner": "sandbox"})).await.unwrap(), 422).await;
    let r =
        create(json!({"partner": "http", "base_url": "https://ap.example/api", "api_key": "k"}))
            .await
            .unwrap();
    assert_eq!(r.status(), 201);
    let listed: Value = s
        .v1(Method::GET, "/v1/connections", BOOTSTRAP)
        .value()
        .await;
    assert!(
        listed["connections"][0].get("callback_secret").is_none(),
        "shown once"
    );
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}
