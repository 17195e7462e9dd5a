//! Sending end to end: connections, idempotency, validate-first with the remediation flow,
//! asynchronous delivery through the sandbox partner, and the hash-chained timeline.

use std::time::Duration;

use crate::support::{
    example, invalid_invoice, numbered, problem, JsonBody, TestServer, BOOTSTRAP,
};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

async fn send(
    s: &TestServer,
    key: Option<&str>,
    scenario: Option<&str>,
    xml: Vec<u8>,
) -> reqwest::Response {
    let mut req = s
        .v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .body(xml);
    if let Some(k) = key {
        req = req.header("Idempotency-Key", k);
    }
    if let Some(sc) = scenario {
        req = req.header("Invex-Sandbox-Scenario", sc);
    }
    req.send().await.unwrap()
}

async fn timeline(s: &TestServer, id: &str) -> Value {
    s.api(Method::GET, &format!("/api/messages/{id}"), BOOTSTRAP)
        .value()
        .await
}

/// Wait until the invoice's timeline ends with `code`.
async fn until_last(s: &TestServer, id: &str, code: &str) -> Value {
    for _ in 0..100 {
        let t = timeline(s, id).await;
        if t["events"].as_array().unwrap().last().unwrap()["code"] == code {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the timeline of {id} never reached {code}: {}",
        timeline(s, id).await
    );
}

fn codes(t: &Value) -> Vec<String> {
    t["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap().to_string())
        .collect()
}

/// Recompute the chain: each hash is SHA-256 over the previous hash and the entry's fields,
/// newline-terminated.
fn assert_chain(t: &Value) {
    let mut prev = "0".repeat(64);
    for e in t["events"].as_array().unwrap() {
        assert_eq!(e["prev_hash"], prev.as_str());
        let mut h = Sha256::new();
        let field = |v: &Value| v.as_str().map(str::to_string).unwrap_or_default();
        for part in [
            prev.clone(),
            e["seq"].as_i64().unwrap().to_string(),
            field(&e["at"]),
            field(&e["source"]),
            field(&e["code"]),
            field(&e["status"]),
            field(&e["meaning"]),
            field(&e["correlation_id"]),
            field(&e["detail"]),
        ] {
            h.update(part.as_bytes());
            h.update(b"\n");
        }
        let hash = hex::encode(h.finalize());
        assert_eq!(e["hash"], hash.as_str(), "entry {e}");
        prev = hash;
    }
    assert_eq!(t["chain_head"], prev.as_str());
}

#[tokio::test]
async fn sending_needs_a_key_and_an_active_connection() {
    let s = TestServer::start().await;
    let p = problem(send(&s, None, None, example("invoice-sk.xml")).await, 400).await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("#idempotency-key-missing"));
    let p = problem(
        send(&s, Some("k-1"), None, example("invoice-sk.xml")).await,
        409,
    )
    .await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("#no-active-connection"));
    // A pending connection is not enough.
    let r = s
        .v1(Method::POST, "/v1/connections", BOOTSTRAP)
        .json(&json!({"partner": "sandbox"}))
        .send()
        .await
        .unwrap();
    let pending: Value = r.json().await.unwrap();
    problem(
        send(&s, Some("k-1"), None, example("invoice-sk.xml")).await,
        409,
    )
    .await;
    let id = pending["id"].as_str().unwrap();
    let activate = || {
        s.v1(
            Method::POST,
            &format!("/v1/connections/{id}/activate"),
            BOOTSTRAP,
        )
        .send()
    };
    let active: Value = activate().await.unwrap().json().await.unwrap();
    assert_eq!(active["status"], "active");
    problem(activate().await.unwrap(), 409).await;
    // The refused requests did not use the key up.
    assert_eq!(
        send(&s, Some("k-1"), None, example("invoice-sk.xml"))
            .await
            .status(),
        202
    );
    // Unknown partners and scenarios are refused.
    let r = s
        .v1(Method::POST, "/v1/connections", BOOTSTRAP)
        .json(&json!({"partner": "nonexistent"}))
        .send()
        .await
        .unwrap();
    problem(r, 422).await;
    problem(
        send(
            &s,
            Some("k-2"),
            Some("eaten-by-dog"),
            example("invoice-sk.xml"),
        )
        .await,
        422,
    )
    .await;
}

#[tokio::test]
async fn an_invoice_with_fatal_findings_enters_remediation_and_is_not_sent() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let p = problem(send(&s, Some("bad-1"), None, invalid_invoice()).await, 422).await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("#remediation-required"));
    assert_eq!(p["status"], 422);
    let findings = p["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    assert!(findings.iter().all(|f| f["severity"] == "fatal"), "{p}");
    let id = p["invoice_id"].as_str().unwrap().to_string();
    let inv: Value = s
        .v1(Method::GET, &format!("/v1/invoices/{id}"), BOOTSTRAP)
        .value()
        .await;
    assert_eq!(inv["status"], "remediation_required");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = timeline(&s, &id).await;
    assert_eq!(
        codes(&t),
        ["received", "remediation_required"],
        "never queued or sent"
    );
    assert_chain(&t);
    // The corrected document references the rejected one.
    let r = s
        .v1(
            Method::POST,
            &format!("/v1/invoice/send?resubmission_of={id}"),
            BOOTSTRAP,
        )
        .header("Content-Type", "application/xml")
        .header("Idempotency-Key", "good-1")
        .body(example("invoice-sk.xml"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let accepted: Value = r.json().await.unwrap();
    let fixed: Value = s
        .v1(
            Method::GET,
            accepted["links"]["self"].as_str().unwrap(),
            BOOTSTRAP,
        )
        .value()
        .await;
    assert_eq!(fixed["resubmission_of"], id.as_str());
}

#[tokio::test]
async fn an_accepted_invoice_is_delivered_and_its_timeline_tells_the_story() {
    let s = TestServer::start().await;
    let connection = s.sandbox_connection().await;
    let r = send(&s, Some("happy-1"), None, example("invoice-sk.xml")).await;
    assert_eq!(r.status(), 202);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["status"], "queued");
    assert_eq!(body["connection_id"], connection.as_str());
    assert_eq!(body["validation"]["verdict"], "valid");
    let id = body["id"].as_str().unwrap().to_string();
    let t = until_last(&s, &id, "IR:AP").await;
    assert_eq!(
        codes(&t),
        [
            "received",
            "validated",
            "queued",
            "sending",
            "transmitted",
            "MLS:AB",
            "MLS:AP",
            "IR:AB",
            "IR:AP"
        ]
    );
    assert_eq!(t["status"], "accepted");
    let ab = &t["events"][5];
    assert_eq!(ab["status"], "delivered");
    assert!(ab["meaning"]
        .as_str()
        .unwrap()
        .contains("not business acceptance"));
    assert_eq!(ab["correlation_id"], t["transmission_id"]);
    assert_chain(&t);
    // The /api family needs its own header; other tenants see nothing.
    let r = s
        .v1(Method::GET, &format!("/api/messages/{id}"), BOOTSTRAP)
        .send()
        .await
        .unwrap();
    problem(r, 401).await;
}

#[tokio::test]
async fn sandbox_scenarios_end_in_their_statuses() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    for (scenario, last, status) in [
        ("rejected", "IR:RE", "rejected"),
        ("under_query", "IR:UQ", "under_query"),
        ("conditionally_accepted", "IR:CA", "conditionally_accepted"),
        ("transport_rejection", "MLS:RE", "rejected"),
        ("delivery_failure", "MLS:RE", "failed"),
        ("no_response", "MLS:AB", "delivered"),
    ] {
        let r = send(
            &s,
            Some(scenario),
            Some(scenario),
            numbered(example("invoice-sk.xml"), scenario),
        )
        .await;
        assert_eq!(r.status(), 202, "{scenario}");
        let id = r.json::<Value>().await.unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string();
        let t = until_last(&s, &id, last).await;
        assert_eq!(t["status"], status, "{scenario}: {t}");
    }
}

#[tokio::test]
async fn one_idempotency_key_sends_once_however_often_it_is_used() {
    // The per-key rate limit would answer most of the burst with 429 before idempotency.
    let s = TestServer::with(|c| {
        c.limits.rate_per_second = 100_000;
        c.limits.rate_burst = 100_000;
    })
    .await;
    s.sandbox_connection().await;
    let first = send(&s, Some("same"), None, example("invoice-sk.xml")).await;
    assert_eq!(first.status(), 202);
    // `Location` names the queued invoice, in the caller's family, on a replay too.
    let location = first.headers()["location"].to_str().unwrap().to_string();
    let first: Value = first.json().await.unwrap();
    assert_eq!(
        location,
        format!("/v1/invoices/{}", first["id"].as_str().unwrap())
    );
    let found: Value = s
        .v1(Method::GET, &location, BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(found["id"], first["id"]);
    let again = send(&s, Some("same"), None, example("invoice-sk.xml")).await;
    assert_eq!(again.status(), 202);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(again.headers()["location"], location.as_str());
    assert_eq!(again.json::<Value>().await.unwrap(), first);
    let p = problem(send(&s, Some("same"), None, invalid_invoice()).await, 422).await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("#idempotency-key-reused"));

    // 1,000 concurrent requests with one new key: one invoice, one delivery.
    let burst = numbered(example("invoice-sk.xml"), "BURST-1");
    let requests = (0..1000).map(|_| send(&s, Some("burst"), None, burst.clone()));
    let answers = futures_util::future::join_all(requests).await;
    let mut ids = Vec::new();
    for r in answers {
        match r.status().as_u16() {
            202 => ids.push(
                r.json::<Value>().await.unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            ),
            409 => {
                let p = problem(r, 409).await;
                assert!(p["type"]
                    .as_str()
                    .unwrap()
                    .ends_with("#idempotency-request-in-progress"));
            }
            other => panic!("unexpected status {other}"),
        }
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 1, "{ids:?}");
    let store = &s.running.as_ref().unwrap().state.store;
    assert_eq!(store.invoice_count("ten_operator").await.unwrap(), 2);
    let t = until_last(&s, &ids[0], "IR:AP").await;
    assert_eq!(codes(&t).iter().filter(|c| *c == "transmitted").count(), 1);
}

#[tokio::test]
async fn the_api_route_takes_a_multipart_xml_file() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let form = reqwest::multipart::Form::new().part(
        "xml_file",
        reqwest::multipart::Part::bytes(example("invoice-sk.xml")).file_name("invoice-sk.xml"),
    );
    let r = s
        .api(Method::POST, "/api/send", BOOTSTRAP)
        .header("Idempotency-Key", "api-1")
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let body: Value = r.json().await.unwrap();
    assert!(body["document_id"].is_string());
    // The `/api` family's view of an invoice is its timeline.
    assert_eq!(
        location,
        format!("/api/messages/{}", body["id"].as_str().unwrap())
    );
    let r = s
        .api(Method::GET, &location, BOOTSTRAP)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let form = reqwest::multipart::Form::new().text("profile", "peppol-bis3-sk");
    let r = s
        .api(Method::POST, "/api/send", BOOTSTRAP)
        .header("Idempotency-Key", "api-2")
        .multipart(form)
        .send()
        .await
        .unwrap();
    problem(r, 400).await;
}

#[tokio::test]
async fn queued_invoices_survive_a_restart_and_are_delivered_exactly_once() {
    // An instance without a worker accepts invoices; it stops before any is delivered.
    let mut s = TestServer::with(|c| c.sending.worker = false).await;
    s.sandbox_connection().await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let r = send(
            &s,
            Some(&format!("restart-{n}")),
            None,
            numbered(example("invoice-sk.xml"), &format!("RESTART-{n}")),
        )
        .await;
        assert_eq!(r.status(), 202);
        ids.push(
            r.json::<Value>().await.unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
    }
    // A worker that claimed one entry and died: its lease has run out.
    let store = s.running.as_ref().unwrap().state.store.clone();
    let past = "2000-01-01T00:00:00.000000Z";
    let claimed = store
        .claim_outbox("9999-01-01T00:00:00Z", past)
        .await
        .unwrap();
    assert!(claimed.is_some());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(timeline(&s, &ids[0]).await["status"], "queued");
    // Metrics had nothing on sending: now the outbox depth and age and invoices by status.
    let metrics = s
        .client
        .get(s.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for line in [
        "invex_outbox_pending 3",
        "invex_invoices{status=\"queued\"} 3",
        "invex_invoices{status=\"accepted\"} 0",
        "invex_conversions{status=\"needs_review\"} 0",
        "invex_webhook_deliveries_pending 0",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "no `{line}` in:\n{metrics}"
        );
    }
    assert!(
        metrics.contains("invex_outbox_oldest_age_seconds "),
        "{metrics}"
    );
    s.running.take().unwrap().shutdown().await.unwrap();

    // The next start (with its worker) delivers every one of them, once.
    let dir = std::mem::replace(&mut s.dir, tempfile::tempdir().unwrap());
    let s = TestServer::launch(
        crate::support::config(dir.path()),
        Some(crate::support::shipped()),
        dir,
    )
    .await;
    for id in &ids {
        let t = until_last(&s, id, "IR:AP").await;
        assert_eq!(
            codes(&t).iter().filter(|c| *c == "transmitted").count(),
            1,
            "{t}"
        );
        assert_chain(&t);
    }
}

#[tokio::test]
async fn the_evidence_package_holds_everything_and_verifies_offline() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let r = send(
        &s,
        Some("ev-1"),
        Some("under_query"),
        example("invoice-sk.xml"),
    )
    .await;
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let t = until_last(&s, &id, "IR:UQ").await;
    let path = format!("/api/evidence/{id}");
    let package: Value = s.api(Method::GET, &path, BOOTSTRAP).value().await;
    assert_eq!(package["format"], "invex-evidence/1");
    assert_eq!(
        package["document"]["payload"].as_str().unwrap().as_bytes(),
        example("invoice-sk.xml").as_slice()
    );
    assert_eq!(package["chain_head"], t["chain_head"]);
    assert_eq!(package["timeline"], t["events"]);
    let responses: Vec<&str> = package["response_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap())
        .collect();
    assert_eq!(responses, ["transmitted", "MLS:AB", "IR:UQ"]);
    assert_eq!(
        package["rules_version"]["packs"].as_array().unwrap().len(),
        4
    );
    // Why this profile version: detected from the document, the version in force today.
    let why = package["rules_version"]["chosen_because"].as_str().unwrap();
    assert!(why.contains("peppol-bis3-sk"), "{why}");
    let detection = package["validation"]["detection"].as_str().unwrap();
    assert!(why.starts_with(detection), "{why}");
    assert_eq!(package["validation"]["verdict"], "valid");
    assert!(package["transmission_id"].is_string());

    let zip = s
        .api(Method::GET, &path, BOOTSTRAP)
        .header("Accept", "application/zip")
        .send()
        .await
        .unwrap();
    assert_eq!(zip.headers()["content-type"], "application/zip");
    let mut bytes = zip.bytes().await.unwrap().to_vec();
    let verified = invex_server::sending::evidence::verify_zip(&bytes).unwrap();
    assert_eq!(verified.invoice_id, id);
    assert_eq!(verified.chain_head, package["chain_head"].as_str().unwrap());
    // Any changed byte is noticed.
    let middle = bytes.len() / 3;
    bytes[middle] ^= 0x55;
    assert!(invex_server::sending::evidence::verify_zip(&bytes).is_err());

    // Auditors may read evidence; developers may not.
    let (_, auditor) = s.create_key(BOOTSTRAP, "auditor").await;
    let (_, developer) = s.create_key(BOOTSTRAP, "developer").await;
    assert_eq!(
        s.api(Method::GET, &path, &auditor)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    problem(
        s.api(Method::GET, &path, &developer).send().await.unwrap(),
        403,
    )
    .await;
}

#[tokio::test]
async fn a_delivery_without_any_further_response_times_out_once() {
    let s = TestServer::with(|c| {
        c.sending.response_timeout_secs = 1;
        c.sending.poll_ms = 100;
    })
    .await;
    s.sandbox_connection().await;
    let r = send(
        &s,
        Some("quiet"),
        Some("no_response"),
        example("invoice-sk.xml"),
    )
    .await;
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let t = until_last(&s, &id, "response_timeout").await;
    assert_eq!(t["status"], "delivered", "a timeout changes no status");
    let last = t["events"].as_array().unwrap().last().unwrap().clone();
    assert!(last["status"].is_null());
    assert!(last["meaning"].as_str().unwrap().contains("not accepted"));
    assert_chain(&t);
    // An accepted invoice never times out, and the timeout is reported once.
    let r = send(
        &s,
        Some("answered"),
        None,
        numbered(example("invoice-sk.xml"), "ANSWERED-1"),
    )
    .await;
    let answered = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    until_last(&s, &answered, "IR:AP").await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let t = timeline(&s, &id).await;
    assert_eq!(
        codes(&t)
            .iter()
            .filter(|c| *c == "response_timeout")
            .count(),
        1
    );
    assert!(!codes(&timeline(&s, &answered).await).contains(&"response_timeout".to_string()));
}

#[tokio::test]
async fn finished_invoices_can_be_archived_and_those_in_flight_cannot() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let archive = |id: String| {
        s.v1(
            Method::POST,
            &format!("/v1/invoices/{id}/archive"),
            BOOTSTRAP,
        )
        .send()
    };
    let r = send(&s, Some("arch-1"), None, example("invoice-sk.xml")).await;
    let done = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    until_last(&s, &done, "IR:AP").await;
    let r = archive(done.clone()).await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["status"], "archived");
    let t = timeline(&s, &done).await;
    assert_eq!(codes(&t).last().unwrap(), "archived");
    assert_chain(&t);
    // Twice is once too often; an invoice still waiting for the buyer cannot be archived.
    let p = problem(archive(done).await.unwrap(), 409).await;
    assert!(p["type"].as_str().unwrap().ends_with("#illegal-transition"));
    let r = send(
        &s,
        Some("arch-2"),
        Some("no_response"),
        numbered(example("invoice-sk.xml"), "ARCH-2"),
    )
    .await;
    let waiting = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    until_last(&s, &waiting, "MLS:AB").await;
    let p = problem(archive(waiting).await.unwrap(), 409).await;
    assert_eq!(p["invoice_status"], "delivered");
    problem(archive("inv_nope".into()).await.unwrap(), 404).await;
}

/// A send refused for its identifiers used to store nothing and send no webhook, while a
/// send refused for fatal findings was stored and did: two failure paths. Both are now the
/// stored remediation flow, answered 422, with the invoice, its timeline and its reasons.
#[tokio::test]
async fn identifiers_are_checked_before_a_document_is_accepted() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let text = String::from_utf8(example("invoice-sk.xml")).unwrap();
    let bad = text.replace("SK3112000000198742637541", "SK3112000000198742637542");
    let r = send(&s, Some("ids-1"), None, bad.clone().into_bytes()).await;
    let p = problem(r, 422).await;
    assert!(p["type"].as_str().unwrap().ends_with("invalid-identifiers"));
    assert_eq!(p["identifiers"][0]["business_term"], "BT-84");
    assert_eq!(p["identifiers"][0]["value"], "SK3112000000198742637542");
    assert_eq!(p["invoice_status"], "remediation_required", "{p}");
    // Stored in the remediation flow, as a document with fatal findings is.
    let refused = p["invoice_id"].as_str().expect("invoice_id").to_string();
    let invoice = s
        .v1(Method::GET, &format!("/v1/invoices/{refused}"), BOOTSTRAP)
        .value()
        .await;
    assert_eq!(invoice["status"], "remediation_required", "{invoice}");
    assert_eq!(
        invoice["validation"]["identifiers"][0]["business_term"], "BT-84",
        "{invoice}"
    );
    let t = timeline(&s, &refused).await;
    assert_eq!(codes(&t).last().unwrap(), "remediation_required");
    // A retry with the same key replays the answer; it never stores a second invoice.
    let again = send(&s, Some("ids-1"), None, bad.into_bytes()).await;
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    problem(again, 422).await;
    // The corrected document names the refused one, and both link to each other.
    let r = s
        .v1(
            Method::POST,
            &format!("/v1/invoice/send?resubmission_of={refused}"),
            BOOTSTRAP,
        )
        .header("Content-Type", "application/xml")
        .header("Idempotency-Key", "ids-2")
        .body(example("invoice-sk.xml"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let corrected = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let invoice = s
        .v1(Method::GET, &format!("/v1/invoices/{refused}"), BOOTSTRAP)
        .value()
        .await;
    assert_eq!(invoice["resubmitted_as"], serde_json::json!([corrected]));
    let invoice = s
        .v1(Method::GET, &format!("/v1/invoices/{corrected}"), BOOTSTRAP)
        .value()
        .await;
    assert_eq!(invoice["resubmission_of"], refused.as_str());
}

#[tokio::test]
async fn the_sandbox_buyer_answers_some_time_after_delivery() {
    let s = TestServer::with(|c| {
        c.sending.sandbox_response_delay_ms = 1500;
        c.sending.poll_ms = 50;
    })
    .await;
    s.sandbox_connection().await;
    let r = send(
        &s,
        Some("later-1"),
        Some("rejected"),
        example("invoice-sk.xml"),
    )
    .await;
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Delivered (MLS AB) first: the buyer has not answered yet.
    let t = until_last(&s, &id, "MLS:AB").await;
    assert_eq!(t["status"], "delivered");
    let delivered_at = std::time::Instant::now();
    let t = until_last(&s, &id, "IR:RE").await;
    assert!(delivered_at.elapsed() >= Duration::from_millis(1000));
    assert_eq!(t["status"], "rejected");
    let re = t["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(re["source"], "sandbox-partner");
    assert_eq!(re["correlation_id"], t["transmission_id"]);
    assert_chain(&t);
    // Applied once: nothing follows.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(codes(&timeline(&s, &id).await).last().unwrap(), "IR:RE");
}

#[tokio::test]
async fn a_sandbox_buyer_address_chooses_the_scenario() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let text = String::from_utf8(example("invoice-sk.xml")).unwrap();
    let buyer = r#"<cbc:EndpointID schemeID="9950">SK2120345678</cbc:EndpointID>"#;
    assert!(text.contains(buyer));
    let xml = text.replace(
        buyer,
        r#"<cbc:EndpointID schemeID="0245">9999000002</cbc:EndpointID>"#,
    );
    let r = send(&s, Some("buyer-uq"), None, xml.into_bytes()).await;
    assert_eq!(r.status(), 202, "{}", r.text().await.unwrap());
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let t = until_last(&s, &id, "IR:UQ").await;
    assert_eq!(t["status"], "under_query");
}

/// A send takes one document (XML, or a JSON invoice) under a printable Idempotency-Key;
/// anything else is a clear 4xx, never a silent choice.
#[tokio::test]
async fn sends_refuse_wrong_content_types_several_documents_and_unprintable_keys() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let r = s
        .v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
        .header("Content-Type", "image/png")
        .header("Idempotency-Key", "png")
        .body(example("invoice-sk.xml"))
        .send()
        .await
        .unwrap();
    let p = problem(r, 415).await;
    assert_eq!(
        p["accepted"],
        json!([
            "application/xml",
            "text/xml",
            "application/vnd.invex.invoice+json",
            "application/json"
        ])
    );

    let part =
        || reqwest::multipart::Part::bytes(example("invoice-sk.xml")).file_name("invoice-sk.xml");
    let form = reqwest::multipart::Form::new()
        .part("xml_file", part())
        .part("xml_file", part());
    let r = s
        .api(Method::POST, "/api/send", BOOTSTRAP)
        .header("Idempotency-Key", "two-files")
        .multipart(form)
        .send()
        .await
        .unwrap();
    let p = problem(r, 400).await;
    assert_eq!(p["field"], "xml_file");

    let key = reqwest::header::HeaderValue::from_bytes("kľúč-1".as_bytes()).unwrap();
    let r = s
        .v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .header("Idempotency-Key", key)
        .body(example("invoice-sk.xml"))
        .send()
        .await
        .unwrap();
    let p = problem(r, 422).await;
    assert!(
        p["type"].as_str().unwrap().ends_with("#invalid-field"),
        "{p}"
    );
    assert!(
        p["detail"].as_str().unwrap().contains("printable ASCII"),
        "{p}"
    );
    let store = &s.running.as_ref().unwrap().state.store;
    assert_eq!(store.invoice_count("ten_operator").await.unwrap(), 0);
}

/// `/v1/invoice/send` answered `links.messages` under `/api` (Bearer), which a `/v1` key sent
/// as X-API-Key could not follow, and `/v1` had no invoice list to find invoices whose
/// webhooks were missed. Links now point into the caller's family, and `/v1` has the
/// invoices, their timelines and evidence.
#[tokio::test]
async fn v1_callers_follow_their_links_and_list_their_invoices() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let mut ids = Vec::new();
    for n in 0..3 {
        let r = send(
            &s,
            Some(&format!("list-{n}")),
            None,
            numbered(example("invoice-sk.xml"), &format!("LIST-{n}")),
        )
        .await;
        assert_eq!(r.status(), 202);
        let body: Value = r.json().await.unwrap();
        for link in ["self", "messages", "evidence"] {
            let href = body["links"][link].as_str().unwrap();
            assert!(href.starts_with("/v1/"), "{link}: {href}");
            let r = s.v1(Method::GET, href, BOOTSTRAP).send().await.unwrap();
            assert_eq!(r.status(), 200, "{href}");
        }
        ids.push(body["id"].as_str().unwrap().to_string());
    }
    // Both families read the same timeline: compared once it has stopped moving (the
    // sandbox buyer answers a little after delivery).
    let settled = until_last(&s, &ids[0], "IR:AP").await;
    let timeline_v1 = s
        .v1(
            Method::GET,
            &format!("/v1/invoices/{}/messages", ids[0]),
            BOOTSTRAP,
        )
        .value()
        .await;
    assert_eq!(timeline_v1["events"], settled["events"]);
    // /api callers get /api links.
    let form = reqwest::multipart::Form::new().part(
        "xml_file",
        reqwest::multipart::Part::bytes(numbered(example("invoice-sk.xml"), "LIST-API"))
            .file_name("i.xml"),
    );
    let r = s
        .api(Method::POST, "/api/send", BOOTSTRAP)
        .header("Idempotency-Key", "list-api")
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let body: Value = r.json().await.unwrap();
    assert!(body["links"]["messages"]
        .as_str()
        .unwrap()
        .starts_with("/api/messages/"));
    assert!(body["links"]["evidence"]
        .as_str()
        .unwrap()
        .starts_with("/api/evidence/"));

    // The list: newest first, a cursor, filters.
    let page = s
        .v1(Method::GET, "/v1/invoices?limit=2", BOOTSTRAP)
        .value()
        .await;
    let listed: Vec<&str> = page["invoices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert_eq!(listed.len(), 2, "{page}");
    let next = page["next"].as_str().unwrap();
    let rest = s
        .v1(
            Method::GET,
            &format!("/v1/invoices?limit=2&before={next}"),
            BOOTSTRAP,
        )
        .value()
        .await;
    assert_eq!(rest["invoices"].as_array().unwrap().len(), 2, "{rest}");
    assert!(rest["next"].is_null(), "{rest}");
    let one = s
        .v1(Method::GET, "/v1/invoices?document_id=LIST-1", BOOTSTRAP)
        .value()
        .await;
    assert_eq!(one["invoices"].as_array().unwrap().len(), 1, "{one}");
    assert_eq!(one["invoices"][0]["id"], ids[1].as_str());
    assert_eq!(
        one["invoices"][0]["links"]["messages"],
        format!("/v1/invoices/{}/messages", ids[1])
    );
    let none = s
        .v1(
            Method::GET,
            "/v1/invoices?status=paid&issued_from=2026-01-01",
            BOOTSTRAP,
        )
        .value()
        .await;
    assert_eq!(none["invoices"], serde_json::json!([]), "{none}");
    let p = problem(
        s.v1(Method::GET, "/v1/invoices?status=lost", BOOTSTRAP)
            .send()
            .await
            .unwrap(),
        422,
    )
    .await;
    assert_eq!(p["field"], "status");
}

/// The same invoice number sent again with a new Idempotency-Key silently became a second
/// invoice. It is now refused (409 `duplicate-document`, naming the first) unless the
/// caller asks for it; a correction of a rejected invoice names it and goes out.
#[tokio::test]
async fn a_second_send_of_the_same_document_is_refused_unless_deliberate() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let first = send(&s, Some("dup-1"), None, example("invoice-sk.xml")).await;
    assert_eq!(first.status(), 202);
    let first: Value = first.json().await.unwrap();
    let p = problem(
        send(&s, Some("dup-2"), None, example("invoice-sk.xml")).await,
        409,
    )
    .await;
    assert!(
        p["type"].as_str().unwrap().ends_with("#duplicate-document"),
        "{p}"
    );
    assert_eq!(p["invoice_id"], first["id"]);
    // The key was not used up: the same key with allow_duplicate is a new request.
    let r = s
        .v1(
            Method::POST,
            "/v1/invoice/send?allow_duplicate=true",
            BOOTSTRAP,
        )
        .header("Content-Type", "application/xml")
        .header("Idempotency-Key", "dup-3")
        .body(example("invoice-sk.xml"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let again: Value = r.json().await.unwrap();
    assert_eq!(again["warnings"][0]["code"], "duplicate-document");

    // A rejected invoice is corrected by a resubmission naming it.
    let doc = numbered(example("invoice-sk.xml"), "REJ-1");
    let r = send(&s, Some("rej-1"), Some("rejected"), doc.clone()).await;
    let rejected = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    until_last(&s, &rejected, "IR:RE").await;
    let r = s
        .v1(
            Method::POST,
            &format!("/v1/invoice/send?resubmission_of={rejected}"),
            BOOTSTRAP,
        )
        .header("Content-Type", "application/xml")
        .header("Idempotency-Key", "rej-2")
        .body(doc)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
}
