//! Webhooks: registration, signed delivery to a local receiver that checks signatures on
//! its own, retries, 410, secret rotation, tenant isolation, restarts, validation.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::receiver::{Received, Receiver};
use crate::support::{problem, JsonBody, TestServer, BOOTSTRAP};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use invex_server::config::Config;
use invex_server::webhooks::{self, EventType};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::Sha256;

/// The Standard Webhooks signature, computed here without the server's code.
fn expected_signature(secret: &str, id: &str, timestamp: &str, body: &[u8]) -> String {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

fn fast(c: &mut Config) {
    c.webhooks.poll_interval_ms = 20;
    c.webhooks.retry_schedule_ms = vec![60; 7];
    c.webhooks.timeout_ms = 2000;
}

async fn create(s: &TestServer, key: &str, url: &str, types: Value) -> reqwest::Response {
    s.v1(Method::POST, "/v1/webhooks", key)
        .json(&json!({"url": url, "event_types": types, "description": "ERP"}))
        .send()
        .await
        .unwrap()
}

/// Register an endpoint; returns (id, secret).
async fn register(s: &TestServer, key: &str, url: &str) -> (String, String) {
    let r = create(s, key, url, json!(["invoice.delivered", "webhook.test"])).await;
    assert_eq!(r.status(), 201);
    let body: Value = r.json().await.unwrap();
    (
        body["id"].as_str().unwrap().to_string(),
        body["secret"].as_str().unwrap().to_string(),
    )
}

async fn send_test(s: &TestServer, key: &str, id: &str) -> Value {
    let r = s
        .v1(Method::POST, &format!("/v1/webhooks/{id}/test"), key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    r.json().await.unwrap()
}

async fn get_json(s: &TestServer, key: &str, path: &str) -> Value {
    let r = s.v1(Method::GET, path, key).send().await.unwrap();
    assert_eq!(r.status(), 200, "{path}");
    r.json().await.unwrap()
}

/// The delivery log once `n` attempts are in it and the last delivery is no longer pending.
async fn attempts(s: &TestServer, id: &str, n: usize) -> Vec<Value> {
    let start = Instant::now();
    loop {
        let page = get_json(s, BOOTSTRAP, &format!("/v1/webhooks/{id}/deliveries")).await;
        let list = page["attempts"].as_array().unwrap().clone();
        if list.len() >= n && list[0]["delivery_status"] != "pending" {
            return list;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "log: {page}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_test_event_arrives_signed_and_is_logged_and_redelivered() {
    let receiver = Receiver::default();
    let url = receiver.serve().await;
    let s = TestServer::with(fast).await;
    let r = create(
        &s,
        BOOTSTRAP,
        &url,
        json!(["webhook.test", "invoice.delivered"]),
    )
    .await;
    assert_eq!(r.status(), 201);
    let created: Value = r.json().await.unwrap();
    let id = created["id"].as_str().unwrap().to_string();
    let secret = created["secret"].as_str().unwrap().to_string();
    assert!(id.starts_with("whe_"));
    assert!(secret.starts_with("whsec_"));
    assert_eq!(STANDARD.decode(&secret[6..]).unwrap().len(), 32);
    assert_eq!(created["enabled"], true);
    assert_eq!(created["description"], "ERP");
    // Stored in the canonical order.
    assert_eq!(
        created["event_types"],
        json!(["invoice.delivered", "webhook.test"])
    );
    // The secret is never shown again.
    let one = get_json(&s, BOOTSTRAP, &format!("/v1/webhooks/{id}")).await;
    assert!(one.get("secret").is_none(), "{one}");
    let list = get_json(&s, BOOTSTRAP, "/v1/webhooks").await;
    assert_eq!(list["webhooks"].as_array().unwrap().len(), 1);
    assert!(list["webhooks"][0].get("secret").is_none());

    let before = chrono_now();
    let queued = send_test(&s, BOOTSTRAP, &id).await;
    let event_id = queued["event_id"].as_str().unwrap().to_string();
    assert!(event_id.starts_with("msg_"));
    let got = receiver.wait_for(1).await;
    let hit = &got[0];
    assert_eq!(hit.header("webhook-id"), event_id);
    assert_eq!(hit.header("content-type"), "application/json");
    let ts = hit.header("webhook-timestamp");
    let ts_num: i64 = ts.parse().unwrap();
    assert!((ts_num - before).abs() <= 5, "{ts} vs {before}");
    assert_eq!(
        hit.header("webhook-signature"),
        expected_signature(&secret, &event_id, &ts, &hit.body)
    );
    assert!(!hit.header("invex-correlation-id").is_empty());
    let body = hit.json();
    assert_eq!(body["type"], "webhook.test");
    assert_eq!(body["data"]["webhook_id"], id.as_str());
    assert!(body["timestamp"].as_str().unwrap().ends_with('Z'));

    let log = attempts(&s, &id, 1).await;
    assert_eq!(log.len(), 1);
    let a = &log[0];
    assert_eq!(a["event_id"], event_id.as_str());
    assert_eq!(a["event_type"], "webhook.test");
    assert_eq!(a["attempt"], 1);
    assert_eq!(a["http_status"], 200);
    assert_eq!(a["delivery_status"], "delivered");
    assert!(a["duration_ms"].is_i64());
    assert_eq!(
        a["correlation_id"],
        hit.header("invex-correlation-id").as_str()
    );

    // Redelivery: the same event again, same webhook-id, a new delivery.
    let delivery_id = a["delivery_id"].as_str().unwrap();
    let r = s
        .v1(
            Method::POST,
            &format!("/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver"),
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let again: Value = r.json().await.unwrap();
    assert_eq!(again["event_id"], event_id.as_str());
    assert_ne!(again["delivery_id"], delivery_id);
    let got = receiver.wait_for(2).await;
    assert_eq!(got[1].header("webhook-id"), event_id);
    assert_eq!(got[1].body, got[0].body);
    // Paging (once the second attempt is logged): one per page, newest first.
    attempts(&s, &id, 2).await;
    let page = get_json(
        &s,
        BOOTSTRAP,
        &format!("/v1/webhooks/{id}/deliveries?limit=1"),
    )
    .await;
    assert_eq!(page["attempts"].as_array().unwrap().len(), 1);
    let cursor = page["next"].as_str().unwrap();
    let older = get_json(
        &s,
        BOOTSTRAP,
        &format!("/v1/webhooks/{id}/deliveries?limit=1&before={cursor}"),
    )
    .await;
    assert_eq!(older["attempts"][0]["delivery_id"], delivery_id);
    assert!(older["next"].is_null());
    // The former names still page the same way.
    assert_eq!(page["next_cursor"], page["next"]);
    let again = get_json(
        &s,
        BOOTSTRAP,
        &format!("/v1/webhooks/{id}/deliveries?limit=1&cursor={cursor}"),
    )
    .await;
    assert_eq!(again["attempts"], older["attempts"]);

    // Developers manage webhooks too; auditors and accountants do not.
    let (_, dev) = s.create_key(BOOTSTRAP, "developer").await;
    get_json(&s, &dev, "/v1/webhooks").await;
    for role in ["auditor", "accountant"] {
        let (_, k) = s.create_key(BOOTSTRAP, role).await;
        problem(
            s.v1(Method::GET, "/v1/webhooks", &k).send().await.unwrap(),
            403,
        )
        .await;
    }
    // Delete: gone with its log.
    let r = s
        .v1(Method::DELETE, &format!("/v1/webhooks/{id}"), &dev)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    problem(
        s.v1(Method::GET, &format!("/v1/webhooks/{id}"), BOOTSTRAP)
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

#[tokio::test]
async fn failures_are_retried_with_the_same_webhook_id_until_delivered() {
    let receiver = Receiver::scripted(&[500, 500]);
    let url = receiver.serve().await;
    let s = TestServer::with(fast).await;
    let (id, secret) = register(&s, BOOTSTRAP, &url).await;
    let event_id = send_test(&s, BOOTSTRAP, &id).await["event_id"]
        .as_str()
        .unwrap()
        .to_string();
    let got = receiver.wait_for(3).await;
    for hit in &got {
        assert_eq!(hit.header("webhook-id"), event_id);
        // Each attempt is signed with its own timestamp.
        let ts = hit.header("webhook-timestamp");
        assert_eq!(
            hit.header("webhook-signature"),
            expected_signature(&secret, &event_id, &ts, &hit.body)
        );
    }
    let log = attempts(&s, &id, 3).await;
    let seen: Vec<(i64, i64)> = log
        .iter()
        .map(|a| {
            (
                a["attempt"].as_i64().unwrap(),
                a["http_status"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, vec![(3, 200), (2, 500), (1, 500)]);
    assert!(log.iter().all(|a| a["event_id"] == event_id.as_str()));
    assert!(log.iter().all(|a| a["delivery_status"] == "delivered"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(receiver.received().len(), 3, "nothing after delivery");
    // The attempts are counted by outcome for monitoring.
    let metrics = reqwest::get(s.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let count = |outcome: &str| {
        let prefix = format!(
            "invex_webhook_attempts_total{{event_type=\"webhook.test\",outcome=\"{outcome}\"}} "
        );
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .map(|v| v.trim().to_string())
    };
    assert_eq!(count("retry").as_deref(), Some("2"), "{metrics}");
    assert_eq!(count("delivered").as_deref(), Some("1"), "{metrics}");
    assert!(metrics
        .contains("invex_webhook_attempt_duration_seconds_count{event_type=\"webhook.test\"} 3"));
}

#[tokio::test]
async fn the_schedule_runs_out_and_the_delivery_fails() {
    let receiver = Receiver::scripted(&[503; 10]);
    let url = receiver.serve().await;
    let s = TestServer::with(|c| {
        fast(c);
        c.webhooks.retry_schedule_ms = vec![30, 30];
    })
    .await;
    let (id, _) = register(&s, BOOTSTRAP, &url).await;
    send_test(&s, BOOTSTRAP, &id).await;
    let log = attempts(&s, &id, 3).await;
    assert_eq!(log.len(), 3);
    assert!(
        log.iter().all(|a| a["delivery_status"] == "failed"),
        "{log:?}"
    );
    assert!(
        log.iter().all(|a| a["next_attempt_at"].is_null()),
        "{log:?}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(receiver.received().len(), 3);
}

/// The delivery log did not say when a failed delivery would be tried again.
#[tokio::test]
async fn the_log_says_when_the_next_attempt_is_due() {
    let receiver = Receiver::scripted(&[500]);
    let url = receiver.serve().await;
    let s = TestServer::with(|c| {
        fast(c);
        c.webhooks.retry_schedule_ms = vec![600_000];
    })
    .await;
    let (id, _) = register(&s, BOOTSTRAP, &url).await;
    let before = chrono::Utc::now();
    send_test(&s, BOOTSTRAP, &id).await;
    let start = Instant::now();
    let log = loop {
        let page = get_json(&s, BOOTSTRAP, &format!("/v1/webhooks/{id}/deliveries")).await;
        let list = page["attempts"].as_array().unwrap().clone();
        if !list.is_empty() {
            break list;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "log: {page}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(log[0]["delivery_status"], "pending", "{log:?}");
    let next = chrono::DateTime::parse_from_rfc3339(log[0]["next_attempt_at"].as_str().unwrap())
        .unwrap()
        .with_timezone(&chrono::Utc);
    // About ten minutes after the attempt (the schedule's ±20 % jitter).
    let wait = (next - before).num_seconds();
    assert!((400..=800).contains(&wait), "next attempt in {wait} s");
}

#[tokio::test]
async fn gone_disables_the_endpoint() {
    let receiver = Receiver::scripted(&[410]);
    let url = receiver.serve().await;
    let s = TestServer::with(fast).await;
    let (id, _) = register(&s, BOOTSTRAP, &url).await;
    send_test(&s, BOOTSTRAP, &id).await;
    let log = attempts(&s, &id, 1).await;
    assert_eq!(log[0]["http_status"], 410);
    assert_eq!(log[0]["delivery_status"], "failed");
    let one = get_json(&s, BOOTSTRAP, &format!("/v1/webhooks/{id}")).await;
    assert_eq!(one["enabled"], false);
    assert!(one["disabled_reason"].as_str().unwrap().contains("410"));
    let p = problem(
        s.v1(Method::POST, &format!("/v1/webhooks/{id}/test"), BOOTSTRAP)
            .send()
            .await
            .unwrap(),
        409,
    )
    .await;
    assert!(p["type"].as_str().unwrap().ends_with("#webhook-disabled"));
    // Enabled again, it receives again.
    let r = s
        .v1(Method::PATCH, &format!("/v1/webhooks/{id}"), BOOTSTRAP)
        .json(&json!({"enabled": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["enabled"], true);
    assert!(body["disabled_reason"].is_null());
    send_test(&s, BOOTSTRAP, &id).await;
    receiver.wait_for(2).await;
}

#[tokio::test]
async fn a_rotated_secret_signs_beside_the_old_one() {
    let receiver = Receiver::default();
    let url = receiver.serve().await;
    let s = TestServer::with(fast).await;
    let (id, old) = register(&s, BOOTSTRAP, &url).await;
    let r = s
        .v1(
            Method::POST,
            &format!("/v1/webhooks/{id}/rotate-secret"),
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let rotated: Value = r.json().await.unwrap();
    let new = rotated["secret"].as_str().unwrap().to_string();
    assert!(new.starts_with("whsec_") && new != old);
    assert!(rotated["previous_secret_expires_at"].is_string());
    send_test(&s, BOOTSTRAP, &id).await;
    let hit = &receiver.wait_for(1).await[0];
    let (msg, ts) = (hit.header("webhook-id"), hit.header("webhook-timestamp"));
    let signatures: Vec<String> = hit
        .header("webhook-signature")
        .split(' ')
        .map(str::to_string)
        .collect();
    assert_eq!(
        signatures,
        vec![
            expected_signature(&new, &msg, &ts, &hit.body),
            expected_signature(&old, &msg, &ts, &hit.body),
        ]
    );
}

#[tokio::test]
async fn tenants_only_see_their_own_endpoints() {
    let receiver = Receiver::default();
    let url = receiver.serve().await;
    let s = TestServer::with(fast).await;
    let (id, _) = register(&s, BOOTSTRAP, &url).await;
    let r = s
        .v1(Method::POST, "/v1/tenants", BOOTSTRAP)
        .json(&json!({"name": "Acme s.r.o."}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let acme = r.json::<Value>().await.unwrap()["admin_key"]["key"]
        .as_str()
        .unwrap()
        .to_string();
    let list = get_json(&s, &acme, "/v1/webhooks").await;
    assert_eq!(list["webhooks"], json!([]));
    for (method, path) in [
        (Method::GET, format!("/v1/webhooks/{id}")),
        (Method::DELETE, format!("/v1/webhooks/{id}")),
        (Method::POST, format!("/v1/webhooks/{id}/test")),
        (Method::POST, format!("/v1/webhooks/{id}/rotate-secret")),
        (Method::GET, format!("/v1/webhooks/{id}/deliveries")),
    ] {
        problem(
            s.v1(method.clone(), &path, &acme).send().await.unwrap(),
            404,
        )
        .await;
    }
    problem(
        s.v1(Method::PATCH, &format!("/v1/webhooks/{id}"), &acme)
            .json(&json!({"enabled": false}))
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    // Still there and untouched for its owner.
    let one = get_json(&s, BOOTSTRAP, &format!("/v1/webhooks/{id}")).await;
    assert_eq!(one["enabled"], true);
    assert!(receiver.received().is_empty());
}

#[tokio::test]
async fn a_delivery_queued_while_the_receiver_is_down_survives_a_restart() {
    // A port with nothing listening: the receiver is down.
    let parked = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr: SocketAddr = parked.local_addr().unwrap();
    drop(parked);
    let url = format!("http://{addr}/hooks");
    let mut s = TestServer::with(|c| {
        fast(c);
        c.webhooks.retry_schedule_ms = vec![100; 50];
    })
    .await;
    let (id, secret) = register(&s, BOOTSTRAP, &url).await;
    let event_id = send_test(&s, BOOTSTRAP, &id).await["event_id"]
        .as_str()
        .unwrap()
        .to_string();
    // At least one failed attempt (connection refused) before the shutdown.
    let start = Instant::now();
    loop {
        let page = get_json(&s, BOOTSTRAP, &format!("/v1/webhooks/{id}/deliveries")).await;
        if let Some(a) = page["attempts"].as_array().unwrap().first() {
            assert!(a["http_status"].is_null());
            assert!(!a["error"].as_str().unwrap().is_empty());
            assert_eq!(a["delivery_status"], "pending");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    s.running.take().unwrap().shutdown().await.unwrap();
    let dir = std::mem::replace(&mut s.dir, tempfile::tempdir().unwrap());
    drop(s);

    // The receiver comes up on that port, then the server restarts on the same database.
    let receiver = Receiver::default();
    receiver.serve_on(tokio::net::TcpListener::bind(addr).await.unwrap());
    let mut config = crate::support::config(dir.path());
    fast(&mut config);
    config.webhooks.retry_schedule_ms = vec![100; 50];
    let s = TestServer::launch(config, Some(crate::support::shipped()), dir).await;
    let got = receiver.wait_for(1).await;
    assert_eq!(got[0].header("webhook-id"), event_id);
    let ts = got[0].header("webhook-timestamp");
    assert_eq!(
        got[0].header("webhook-signature"),
        expected_signature(&secret, &event_id, &ts, &got[0].body)
    );
    let log = attempts(&s, &id, 2).await;
    assert_eq!(log[0]["http_status"], 200);
    assert_eq!(log[0]["delivery_status"], "delivered");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.received().len(), 1, "delivered exactly once");
}

#[tokio::test]
async fn bad_registrations_are_422_problems() {
    let s = TestServer::with(|c| {
        fast(c);
        c.mode = invex_server::Mode::Production;
    })
    .await;
    let p = problem(
        create(
            &s,
            BOOTSTRAP,
            "http://127.0.0.1:9/hooks",
            json!(["invoice.delivered"]),
        )
        .await,
        422,
    )
    .await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("#webhook-url-not-allowed"));
    assert_eq!(p["field"], "url");
    // Production does not call into private networks.
    let p = problem(
        create(
            &s,
            BOOTSTRAP,
            "https://169.254.169.254/latest/meta-data",
            json!(["invoice.delivered"]),
        )
        .await,
        422,
    )
    .await;
    assert!(p["detail"].as_str().unwrap().contains("private"), "{p}");
    let p = problem(
        create(
            &s,
            BOOTSTRAP,
            "https://erp.example.com/h",
            json!(["invoice.sent"]),
        )
        .await,
        422,
    )
    .await;
    assert!(p["type"].as_str().unwrap().ends_with("#unknown-event-type"));
    assert_eq!(p["unknown"], json!(["invoice.sent"]));
    assert!(p["known_event_types"]
        .as_array()
        .unwrap()
        .contains(&json!("invoice.artifacts_ready")));
    let p = problem(
        create(&s, BOOTSTRAP, "https://erp.example.com/h", json!([])).await,
        422,
    )
    .await;
    assert_eq!(p["field"], "event_types");
    let r = create(
        &s,
        BOOTSTRAP,
        "https://erp.example.com/h",
        json!(["invoice.failed"]),
    )
    .await;
    assert_eq!(r.status(), 201);
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let p = problem(
        s.v1(Method::PATCH, &format!("/v1/webhooks/{id}"), BOOTSTRAP)
            .json(&json!({"url": "ftp://erp.example.com/h"}))
            .send()
            .await
            .unwrap(),
        422,
    )
    .await;
    assert_eq!(p["field"], "url");
}

/// Every special-purpose address and host name is refused at registration, in every form
/// a URL can spell it (issue 15, item 12); public hosts are accepted.
#[tokio::test]
async fn special_purpose_targets_are_refused_in_every_form() {
    let s = TestServer::with(|c| c.mode = invex_server::Mode::Production).await;
    let refused = [
        "https://localhost./h",
        "https://foo.localhost/h",
        "https://0.1.2.3/h",
        "https://[::127.0.0.1]/h",
        "https://[::a9fe:a9fe]/h",
        "https://[64:ff9b::a9fe:a9fe]/h",
        "https://[64:ff9b:1::5db8:d70e]/h",
        "https://198.18.0.1/h",
        "https://198.19.255.254/h",
        "https://240.0.0.1/h",
        "https://255.255.255.255/h",
        "https://224.0.0.251/h",
        "https://100.64.0.1/h",
        "https://192.0.0.170/h",
        "https://192.0.2.1/h",
        "https://192.88.99.1/h",
        "https://198.51.100.7/h",
        "https://203.0.113.7/h",
        "https://0x7f.1/h",
        "https://2130706433/h",
        "https://0251.0376.0251.0376/h",
        "https://[::ffff:7f00:1]/h",
        "https://[::]/h",
        "https://[100::1]/h",
        "https://[2001::a9fe:a9fe]/h",
        "https://[2001:db8::1]/h",
        "https://[2002:a9fe:a9fe::1]/h",
        "https://[2002:0a00:0001::1]/h",
        "https://[3fff::1]/h",
        "https://[5f00::1]/h",
        "https://[fc00::1]/h",
        "https://[fd12:3456::1]/h",
        "https://[fe80::1]/h",
        "https://[fec0::1]/h",
        "https://[ff02::1]/h",
        "https://printer.local/h",
        "https://metadata.google.internal/h",
        "https://router.home.arpa/h",
        "https://intranet/h",
        "https://erp.example.com./h",
    ];
    for url in refused {
        let r = create(&s, BOOTSTRAP, url, json!(["invoice.delivered"])).await;
        let p = problem(r, 422).await;
        assert!(
            p["type"]
                .as_str()
                .unwrap()
                .ends_with("#webhook-url-not-allowed"),
            "{url}: {p}"
        );
    }
    let accepted = [
        "https://erp.example.com/h",
        "https://93.184.215.14/h",
        "https://[2606:4700:4700::1111]/h",
        "https://[64:ff9b::5db8:d70e]/h",
        "https://[2002:5db8:d70e::1]/h",
    ];
    for url in accepted {
        let r = create(&s, BOOTSTRAP, url, json!(["invoice.delivered"])).await;
        assert_eq!(r.status(), 201, "{url}: {}", r.text().await.unwrap());
    }
}

/// A DNS server for `zone` answering A and AAAA records (name → addresses); other names
/// in the zone answer NXDOMAIN.
async fn dns_server(zone: &str, records: &[(&str, &[&str])]) -> SocketAddr {
    use hickory_proto::rr::rdata::{A, AAAA, SOA};
    use hickory_proto::rr::{LowerName, Name, RData, Record};
    use hickory_server::authority::{Catalog, ZoneType};
    use hickory_server::store::in_memory::InMemoryAuthority;
    use std::str::FromStr;
    let origin = Name::from_str(&format!("{zone}.")).unwrap();
    let mut authority = InMemoryAuthority::empty(origin.clone(), ZoneType::Primary, false);
    let soa = SOA::new(
        Name::from_str(&format!("ns.{zone}.")).unwrap(),
        Name::from_str(&format!("hostmaster.{zone}.")).unwrap(),
        1,
        3600,
        600,
        86400,
        60,
    );
    assert!(authority.upsert_mut(Record::from_rdata(origin.clone(), 60, RData::SOA(soa)), 1));
    for (name, addresses) in records {
        let name = Name::from_str(&format!("{name}.")).unwrap();
        for address in *addresses {
            let rdata = match address.parse::<std::net::IpAddr>().unwrap() {
                std::net::IpAddr::V4(v4) => RData::A(A(v4)),
                std::net::IpAddr::V6(v6) => RData::AAAA(AAAA(v6)),
            };
            assert!(authority.upsert_mut(Record::from_rdata(name.clone(), 60, rdata), 1));
        }
    }
    let mut catalog = Catalog::new();
    catalog.upsert(LowerName::new(&origin), vec![Arc::new(authority)]);
    // DNS answers on one port over UDP and TCP: a free UDP port may be taken for TCP by
    // another test's listener, so try again with another.
    let mut attempts = 0;
    let (udp, tcp, addr) = loop {
        let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = udp.local_addr().unwrap();
        match tokio::net::TcpListener::bind(addr).await {
            Ok(tcp) => break (udp, tcp, addr),
            Err(e) if attempts < 50 => {
                attempts += 1;
                let _ = e;
            }
            Err(e) => panic!("no port free for both UDP and TCP: {e}"),
        }
    };
    let mut server = hickory_server::ServerFuture::new(catalog);
    server.register_socket(udp);
    server.register_listener(tcp, Duration::from_secs(5));
    tokio::spawn(async move {
        let _ = server.block_until_done().await;
    });
    addr
}

/// A TCP port that counts the connections made to it (and closes each at once).
async fn counting_port() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, count)
}

/// Host names are resolved when a delivery is made, and every address they resolve to is
/// checked: a name that resolves to a loopback or private address (DNS rebinding, an
/// internal name published in public DNS) is refused and logged, and never connected to.
#[tokio::test]
async fn names_resolving_to_internal_addresses_are_refused_at_delivery() {
    let dns = dns_server(
        "example.net",
        &[
            ("inside.example.net", &["127.0.0.1"]),
            ("mixed.example.net", &["93.184.215.14", "127.0.0.1"]),
            ("v6.example.net", &["::1"]),
            ("metadata.example.net", &["169.254.169.254"]),
        ],
    )
    .await;
    let (port, connections) = counting_port().await;
    let s = TestServer::with(|c| {
        fast(c);
        c.mode = invex_server::Mode::Production;
        // The scheme only: where http may go is still checked.
        c.webhooks.allow_http = true;
        c.webhooks.dns_server = Some(dns);
    })
    .await;
    for (host, address) in [
        ("inside.example.net", "127.0.0.1"),
        ("mixed.example.net", "127.0.0.1"),
        ("v6.example.net", "::1"),
        ("metadata.example.net", "169.254.169.254"),
    ] {
        let (id, _) = register(&s, BOOTSTRAP, &format!("http://{host}:{port}/hooks")).await;
        send_test(&s, BOOTSTRAP, &id).await;
        let log = attempts(&s, &id, 8).await;
        assert_eq!(log[0]["delivery_status"], "failed", "{host}");
        for attempt in &log {
            let error = attempt["error"].as_str().unwrap();
            assert!(
                error.starts_with("refused") && error.contains(host) && error.contains(address),
                "{host}: {error}"
            );
            assert!(attempt["http_status"].is_null());
        }
    }
    assert_eq!(
        connections.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no connection was made"
    );
}

/// The same names, with the loopback networks allowed by the operator: the delivery goes
/// through the checked resolver to the resolved address.
#[tokio::test]
async fn names_resolving_to_allowed_networks_are_delivered() {
    let dns = dns_server("example.net", &[("inside.example.net", &["127.0.0.1"])]).await;
    let receiver = Receiver::default();
    let url = receiver.serve().await;
    let port = url.rsplit(':').next().unwrap().trim_end_matches("/hooks");
    let s = TestServer::with(|c| {
        fast(c);
        c.mode = invex_server::Mode::Production;
        c.webhooks.allow_http = true;
        c.webhooks.dns_server = Some(dns);
        c.webhooks.allowed_networks = Some(vec!["127.0.0.0/8".parse().unwrap()]);
    })
    .await;
    let (id, _) = register(
        &s,
        BOOTSTRAP,
        &format!("http://inside.example.net:{port}/hooks"),
    )
    .await;
    send_test(&s, BOOTSTRAP, &id).await;
    let got = receiver.wait_for(1).await;
    assert_eq!(got[0].json()["type"], "webhook.test");
    let log = attempts(&s, &id, 1).await;
    assert_eq!(log[0]["http_status"], 200, "{log:?}");
    // An unknown name is a DNS failure, retried like any connection failure.
    let (id, _) = register(
        &s,
        BOOTSTRAP,
        &format!("http://nowhere.example.net:{port}/hooks"),
    )
    .await;
    send_test(&s, BOOTSTRAP, &id).await;
    let log = attempts(&s, &id, 8).await;
    assert!(log[0]["error"].as_str().unwrap().contains("DNS"), "{log:?}");
}

/// A tenant may register at most `max_endpoints_per_tenant` endpoints; concurrent
/// registrations cannot pass the cap together.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn endpoints_per_tenant_are_capped() {
    let s = TestServer::with(|c| c.webhooks.max_endpoints_per_tenant = 5).await;
    for _ in 0..3 {
        register(&s, BOOTSTRAP, "https://erp.example.com/h").await;
    }
    let barrier = Arc::new(tokio::sync::Barrier::new(6));
    let attempts = (0..6).map(|n| {
        let r = s
            .v1(Method::POST, "/v1/webhooks", BOOTSTRAP)
            .json(&json!({"url": format!("https://erp{n}.example.com/h"), "event_types": ["invoice.failed"]}));
        let barrier = barrier.clone();
        async move {
            barrier.wait().await;
            r.send().await.unwrap()
        }
    });
    let answers = futures_util::future::join_all(attempts).await;
    let created = answers.iter().filter(|r| r.status() == 201).count();
    assert_eq!(
        created,
        2,
        "{:?}",
        answers.iter().map(|r| r.status()).collect::<Vec<_>>()
    );
    for r in answers.into_iter().filter(|r| r.status() != 201) {
        let p = problem(r, 409).await;
        assert!(p["type"]
            .as_str()
            .unwrap()
            .ends_with("#webhook-endpoint-limit"));
        assert_eq!(p["limit"], "max_endpoints_per_tenant");
        assert_eq!(p["limit_value"], 5);
    }
    let list = get_json(&s, BOOTSTRAP, "/v1/webhooks").await;
    assert_eq!(list["webhooks"].as_array().unwrap().len(), 5);
    // Another tenant has its own allowance.
    let other: Value = s
        .v1(Method::POST, "/v1/tenants", BOOTSTRAP)
        .json(&json!({"name": "other"}))
        .value()
        .await;
    let other_admin = other["admin_key"]["key"].as_str().unwrap();
    register(&s, other_admin, "https://erp.example.com/h").await;
}

#[tokio::test]
async fn the_openapi_description_names_the_event_types() {
    let s = TestServer::start().await;
    let doc: Value = s.client.get(s.url("/openapi.json")).value().await;
    let text = doc.to_string();
    for name in [
        "invoice.delivered",
        "invoice.rejected",
        "invoice.attention_needed",
        "invoice.archived",
        "invoice.artifacts_ready",
        "invoice.remediation_required",
        "invoice.failed",
        "webhook.test",
    ] {
        assert!(text.contains(name), "{name}");
    }
    assert_eq!(
        doc["paths"]["/v1/webhooks"]["post"]["x-invex-roles"],
        json!(["admin", "developer"])
    );
}

#[tokio::test]
#[ignore = "needs PostgreSQL: INVEX_TEST_POSTGRES_URL=postgres://... and `-- --ignored` (.ci/run runs it)"]
async fn two_instances_on_postgres_attempt_each_delivery_once() {
    let (url, base) = crate::support::postgres_schema().await;
    let receiver = Receiver::scripted(&[500]);
    let hook = receiver.serve().await;
    let a = TestServer::with(|c| {
        fast(c);
        c.database_url = url.clone();
    })
    .await;
    let b = TestServer::with(|c| {
        fast(c);
        c.database_url = url.clone();
    })
    .await;
    let (id, secret) = register(&a, BOOTSTRAP, &hook).await;
    let mut events = Vec::new();
    for _ in 0..5 {
        events.push(
            send_test(&b, BOOTSTRAP, &id).await["event_id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    // Five events, the first failing once: six requests, whichever instance sends them.
    let got = receiver.wait_for(6).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let got = if receiver.received().len() > got.len() {
        receiver.received()
    } else {
        got
    };
    assert_eq!(got.len(), 6, "each attempt claimed by one worker");
    for hit in &got {
        let (msg, ts) = (hit.header("webhook-id"), hit.header("webhook-timestamp"));
        assert!(events.contains(&msg));
        assert_eq!(
            hit.header("webhook-signature"),
            expected_signature(&secret, &msg, &ts, &hit.body)
        );
    }
    let log = attempts(&a, &id, 6).await;
    assert_eq!(log.len(), 6);
    for mut s in [a, b] {
        s.running.take().unwrap().shutdown().await.unwrap();
    }
    let pool = sqlx::PgPool::connect(&base).await.unwrap();
    let schema = url.rsplit("search_path%3D").next().unwrap();
    sqlx::query(&format!("DROP SCHEMA {schema} CASCADE"))
        .execute(&pool)
        .await
        .unwrap();
}

#[tokio::test]
async fn business_events_go_to_subscribed_endpoints_in_order_and_only_when_committed() {
    let delivered_only = Receiver::default();
    let everything = Receiver::default();
    let s = TestServer::with(fast).await;
    let url_a = delivered_only.serve().await;
    let url_b = everything.serve().await;
    let r = create(&s, BOOTSTRAP, &url_a, json!(["invoice.delivered"])).await;
    assert_eq!(r.status(), 201);
    let r = create(
        &s,
        BOOTSTRAP,
        &url_b,
        json!(["invoice.delivered", "invoice.rejected", "invoice.failed"]),
    )
    .await;
    assert_eq!(r.status(), 201);
    let store = s.running.as_ref().unwrap().state.store.clone();
    let tenant = invex_server::store::OPERATOR_TENANT_ID;

    // Emitted in a transaction that rolls back: nothing is queued.
    let mut tx = store.pool().begin().await.unwrap();
    let emitted = webhooks::emit(
        &mut tx,
        tenant,
        EventType::InvoiceFailed,
        Some("corr-rolled-back"),
        json!({"invoice_id": "inv_gone"}),
    )
    .await
    .unwrap();
    assert_eq!(emitted.delivery_ids.len(), 1);
    tx.rollback().await.unwrap();

    let kinds = [
        EventType::InvoiceDelivered,
        EventType::InvoiceRejected,
        EventType::InvoiceDelivered,
        EventType::InvoiceArchived,
        EventType::InvoiceDelivered,
    ];
    let mut ids = Vec::new();
    for (n, kind) in kinds.into_iter().enumerate() {
        let e = webhooks::emit_now(
            &store,
            tenant,
            kind,
            Some(&format!("corr-{n}")),
            json!({"invoice_id": format!("inv_{n}")}),
        )
        .await
        .unwrap();
        ids.push((kind, e.event_id));
    }
    // Endpoint A: the three deliveries; B: those and the rejection; nobody: the archive.
    let a = delivered_only.wait_for(3).await;
    let b = everything.wait_for(4).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(delivered_only.received().len(), 3);
    assert_eq!(
        everything.received().len(),
        4,
        "{:?}",
        everything
            .received()
            .iter()
            .map(|r| (r.header("webhook-id"), r.json()["type"].clone()))
            .collect::<Vec<_>>()
    );
    let expect = |wanted: &[EventType]| -> Vec<String> {
        ids.iter()
            .filter(|(k, _)| wanted.contains(k))
            .map(|(_, id)| id.clone())
            .collect()
    };
    let order =
        |got: &[Received]| -> Vec<String> { got.iter().map(|r| r.header("webhook-id")).collect() };
    assert_eq!(order(&a), expect(&[EventType::InvoiceDelivered]));
    assert_eq!(
        order(&b),
        expect(&[EventType::InvoiceDelivered, EventType::InvoiceRejected])
    );
    let first = b[0].json();
    assert_eq!(first["type"], "invoice.delivered");
    assert_eq!(first["data"]["invoice_id"], "inv_0");
    assert_eq!(b[0].header("invex-correlation-id"), "corr-0");
    assert!(b
        .iter()
        .all(|r| r.json()["data"]["invoice_id"] != "inv_gone"));
}

#[tokio::test]
async fn the_log_is_pruned_after_the_retention_period_but_pending_deliveries_stay() {
    let receiver = Receiver::default();
    let up = receiver.serve().await;
    let parked = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}/hooks", parked.local_addr().unwrap());
    drop(parked);
    let s = TestServer::with(|c| {
        fast(c);
        c.webhooks.retry_schedule_ms = vec![60_000];
    })
    .await;
    let (a, _) = register(&s, BOOTSTRAP, &up).await;
    let (b, _) = register(&s, BOOTSTRAP, &down).await;
    let done = send_test(&s, BOOTSTRAP, &a).await;
    let waiting = send_test(&s, BOOTSTRAP, &b).await;
    attempts(&s, &a, 1).await;
    // B's first attempt failed; its delivery waits a minute for the retry.
    let start = Instant::now();
    while get_json(&s, BOOTSTRAP, &format!("/v1/webhooks/{b}/deliveries")).await["attempts"]
        .as_array()
        .unwrap()
        .is_empty()
    {
        assert!(start.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let store = s.running.as_ref().unwrap().state.store.clone();
    let tenant = invex_server::store::OPERATOR_TENANT_ID;
    // Nothing is old yet.
    assert_eq!(
        store.prune_webhooks("2000-01-01T00:00:00Z").await.unwrap(),
        0
    );
    // Everything is: both attempts go, the delivered delivery too, the pending one stays.
    assert_eq!(
        store.prune_webhooks("2999-01-01T00:00:00Z").await.unwrap(),
        2
    );
    for id in [&a, &b] {
        let page = get_json(&s, BOOTSTRAP, &format!("/v1/webhooks/{id}/deliveries")).await;
        assert_eq!(page["attempts"], json!([]));
    }
    let delivery = |q: &Value| q["delivery_id"].as_str().unwrap().to_string();
    assert_eq!(
        store
            .webhook_delivery_event(tenant, &a, &delivery(&done))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .webhook_delivery_event(tenant, &b, &delivery(&waiting))
            .await
            .unwrap()
            .as_deref(),
        waiting["event_id"].as_str()
    );
}

#[tokio::test]
async fn queued_events_wake_the_worker_without_waiting_for_the_poll() {
    let receiver = Receiver::default();
    let url = receiver.serve().await;
    let s = TestServer::with(|c| {
        fast(c);
        c.webhooks.poll_interval_ms = 600_000;
    })
    .await;
    let (id, _) = register(&s, BOOTSTRAP, &url).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    send_test(&s, BOOTSTRAP, &id).await;
    receiver.wait_for(1).await;
}

#[tokio::test]
async fn the_sending_pipeline_reports_to_subscribed_endpoints() {
    let s = TestServer::with(fast).await;
    let receiver = Receiver::default();
    let url = receiver.serve().await;
    let types = json!([
        "invoice.delivered",
        "invoice.rejected",
        "invoice.attention_needed",
        "invoice.remediation_required",
        "invoice.failed"
    ]);
    assert_eq!(create(&s, BOOTSTRAP, &url, types).await.status(), 201);
    s.sandbox_connection().await;
    let send = |key: &'static str, scenario: &'static str, xml: Vec<u8>| {
        s.v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
            .header("Content-Type", "application/xml")
            .header("Idempotency-Key", key)
            .header("Invex-Sandbox-Scenario", scenario)
            .body(xml)
            .send()
    };
    let bad = send("wh-bad", "accepted", crate::support::invalid_invoice())
        .await
        .unwrap();
    let bad_id = problem(bad, 422).await["invoice_id"]
        .as_str()
        .unwrap()
        .to_string();
    let rejected = send(
        "wh-rej",
        "rejected",
        crate::support::example("invoice-sk.xml"),
    )
    .await
    .unwrap();
    let rejected_id = rejected.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let got = receiver.wait_for(4).await;
    let events: Vec<(String, String)> = got
        .iter()
        .map(|r| {
            let body = r.json();
            (
                body["type"].as_str().unwrap().to_string(),
                body["data"]["invoice_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            ("invoice.remediation_required".to_string(), bad_id.clone()),
            ("invoice.delivered".to_string(), rejected_id.clone()),
            ("invoice.rejected".to_string(), rejected_id.clone()),
            // A rejection opens the remediation flow, with its reason.
            (
                "invoice.remediation_required".to_string(),
                rejected_id.clone()
            ),
        ]
    );
    // The remediation of a document with fatal findings carries them: rule id, path,
    // message, remediation hint.
    let remediation = got[0].json();
    let finding = &remediation["data"]["findings"][0];
    assert!(finding["rule_id"].is_string(), "{remediation}");
    assert!(
        finding["path"].as_str().unwrap().starts_with('/'),
        "{remediation}"
    );
    assert!(finding["remediation"].is_string(), "{remediation}");
    assert_eq!(finding["severity"], "fatal");
    assert_eq!(remediation["data"]["environment"], "sandbox");
    let rejection = got[2].json();
    assert_eq!(rejection["data"]["code"], "IR:RE");
    assert_eq!(got[2].header("invex-correlation-id"), rejected_id);
    // Links an X-API-Key receiver can follow.
    assert_eq!(
        rejection["data"]["links"]["evidence"],
        format!("/v1/invoices/{rejected_id}/evidence")
    );
    let after = got[3].json();
    assert_eq!(after["data"]["reason"]["code"], "IR:RE", "{after}");
}

#[tokio::test]
async fn delivery_returns_the_final_xml_and_its_pdf_to_the_archive() {
    use sha2::Digest;
    let s = TestServer::with(fast).await;
    let receiver = Receiver::default();
    let url = receiver.serve().await;
    let types = json!(["invoice.artifacts_ready"]);
    assert_eq!(create(&s, BOOTSTRAP, &url, types).await.status(), 201);
    s.sandbox_connection().await;
    let xml = crate::support::example("invoice-sk.xml");
    let sent: Value = s
        .v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .header("Idempotency-Key", "artifacts-1")
        .body(xml.clone())
        .value()
        .await;
    let invoice = sent["id"].as_str().unwrap();
    let got = receiver.wait_for(1).await;
    let event = got[0].json();
    assert_eq!(event["type"], "invoice.artifacts_ready");
    assert_eq!(event["data"]["invoice_id"], invoice);
    let artifacts = event["data"]["artifacts"].as_array().unwrap();
    let kinds: Vec<&str> = artifacts
        .iter()
        .map(|a| a["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["xml", "pdf"]);
    let b64 = STANDARD;
    // The XML is the document exactly as sent.
    assert_eq!(
        b64.decode(artifacts[0]["content_base64"].as_str().unwrap())
            .unwrap(),
        xml
    );
    // The PDF pushed is the PDF downloadable, byte for byte, and its hash is announced.
    let pushed = b64
        .decode(artifacts[1]["content_base64"].as_str().unwrap())
        .unwrap();
    assert!(pushed.starts_with(b"%PDF-"));
    assert_eq!(artifacts[1]["sha256"], hex::encode(Sha256::digest(&pushed)));
    let r = s
        .v1(
            Method::GET,
            artifacts[1]["url"].as_str().unwrap(),
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/pdf");
    assert_eq!(r.bytes().await.unwrap().to_vec(), pushed);
    let r = s
        .v1(
            Method::GET,
            &format!("/v1/invoices/{invoice}/artifacts/docx"),
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap();
    problem(r, 404).await;
}

/// After the delivery (an ACK, not acceptance) a workflow had no webhook to wait for: the
/// buyer's acceptance (IR:AP) sent nothing. It is now `invoice.accepted`.
#[tokio::test]
async fn the_buyers_acceptance_is_a_webhook() {
    let s = TestServer::with(fast).await;
    let receiver = Receiver::default();
    let url = receiver.serve().await;
    let types = json!(["invoice.accepted"]);
    assert_eq!(create(&s, BOOTSTRAP, &url, types).await.status(), 201);
    s.sandbox_connection().await;
    let sent: Value = s
        .v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .header("Idempotency-Key", "accepted-1")
        .body(crate::support::example("invoice-sk.xml"))
        .value()
        .await;
    let invoice = sent["id"].as_str().unwrap();
    let got = receiver.wait_for(1).await;
    let event = got[0].json();
    assert_eq!(event["type"], "invoice.accepted", "{event}");
    assert_eq!(event["data"]["invoice_id"], invoice);
    assert_eq!(event["data"]["code"], "IR:AP");
    assert_eq!(event["data"]["status"], "accepted");
    assert_eq!(event["data"]["environment"], "sandbox");
}
