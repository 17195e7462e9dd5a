//! `GET /v1/vat/verify`: the sandbox register without a key, and the real VIES client in
//! production against a local server speaking the VIES REST wire format.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::support::{problem, JsonBody, TestServer, BOOTSTRAP};
use axum::routing::post;
use axum::{Json, Router};
use reqwest::Method;
use serde_json::{json, Value};

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
        .value()
        .await;
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
    vies_stub_switchable(calls, Arc::new(AtomicBool::new(false))).await
}

/// A local VIES that answers MS_UNAVAILABLE for every number while `down` is set.
async fn vies_stub_switchable(calls: Arc<AtomicUsize>, down: Arc<AtomicBool>) -> String {
    let app = Router::new().route("/check-vat-number", post(move |Json(body): Json<Value>| {
        let calls = calls.clone();
        let down = down.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            let number = body["vatNumber"].as_str().unwrap_or("").to_string();
            let country = body["countryCode"].as_str().unwrap_or("").to_string();
            if down.load(Ordering::SeqCst) {
                return Json(json!({"actionSucceed": false, "errorWrappers": [{"error": "MS_UNAVAILABLE"}]}));
            }
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
    crate::support::serve_stub(app).await
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

async fn get_vat(s: &TestServer, vat: &str) -> reqwest::Response {
    s.v1(Method::GET, &format!("/v1/vat/verify?vat={vat}"), BOOTSTRAP)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn answers_are_cached_and_served_stale_when_vies_is_down() {
    let calls = Arc::new(AtomicUsize::new(0));
    let down = Arc::new(AtomicBool::new(false));
    let vies = vies_stub_switchable(calls.clone(), down.clone()).await;
    // Valid answers stay fresh for an hour; invalid ones must be asked again at once.
    let s = TestServer::with(|c| {
        c.mode = invex_server::Mode::Production;
        c.vies_url = vies.clone();
        c.register_timeout_ms = 500;
        c.vat.cache_valid_secs = 3600;
        c.vat.cache_invalid_secs = 0;
        c.vat.breaker_failures = 100;
    })
    .await;

    let first: Value = get_vat(&s, "SK2022749619").await.json().await.unwrap();
    assert_eq!(
        (first["valid"].clone(), first["cached"].clone()),
        (json!(true), json!(false))
    );
    let second: Value = get_vat(&s, "SK 2022 749 619").await.json().await.unwrap();
    assert_eq!(second["cached"], true);
    assert_eq!(second["stale"], false);
    assert_eq!(
        second["checked_at"], first["checked_at"],
        "a cached answer keeps its time"
    );
    assert!(second["cache_age_seconds"].is_u64());
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the second answer came from the cache"
    );

    // An invalid answer (age 0) is asked again while VIES is up ...
    let invalid: Value = get_vat(&s, "SK7241379376").await.json().await.unwrap();
    assert_eq!(invalid["status"], "invalid");
    let again: Value = get_vat(&s, "SK7241379376").await.json().await.unwrap();
    assert_eq!(again["cached"], false);
    assert_eq!(calls.load(Ordering::SeqCst), 3);

    // ... and served stale, marked, when VIES goes down: still "invalid", never "unavailable".
    down.store(true, Ordering::SeqCst);
    let r = get_vat(&s, "SK7241379376").await;
    assert_eq!(r.status(), 200);
    let stale: Value = r.json().await.unwrap();
    assert_eq!(stale["status"], "invalid");
    assert_eq!(stale["stale"], true);
    assert_eq!(stale["cached"], true);
    assert!(
        stale["warnings"][0]
            .as_str()
            .unwrap()
            .contains("MS_UNAVAILABLE"),
        "{stale}"
    );
    // The fresh valid answer is still served from the cache without asking.
    let before = calls.load(Ordering::SeqCst);
    let cached: Value = get_vat(&s, "SK2022749619").await.json().await.unwrap();
    assert_eq!(
        (cached["valid"].clone(), cached["stale"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(calls.load(Ordering::SeqCst), before);
    // A number never seen before: unavailable, 503.
    problem(get_vat(&s, "SK9979544025").await, 503).await;
}

#[tokio::test]
async fn a_member_state_whose_register_keeps_failing_is_not_asked_for_a_while() {
    let calls = Arc::new(AtomicUsize::new(0));
    let vies = vies_stub(calls.clone()).await;
    let s = TestServer::with(|c| {
        c.mode = invex_server::Mode::Production;
        c.vies_url = vies.clone();
        c.register_timeout_ms = 500;
        c.vat.breaker_failures = 2;
        c.vat.breaker_open_secs = 60;
    })
    .await;
    // SK2020317068 answers MS_UNAVAILABLE: two outages open the SK circuit.
    for _ in 0..2 {
        problem(get_vat(&s, "SK2020317068").await, 503).await;
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // Now SK numbers are answered at once, without asking VIES ...
    let r = get_vat(&s, "SK2022749619").await;
    let retry: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    let p = problem(r, 503).await;
    assert!(p["detail"].as_str().unwrap().contains("SK numbers"), "{p}");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // ... while other member states are still asked.
    let de: Value = get_vat(&s, "DE129273398").await.json().await.unwrap();
    assert_eq!(de["valid"], true);
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn sandbox_knows_the_vies_test_numbers_and_caches_answers() {
    let s = TestServer::start().await;
    let body: Value = get_vat(&s, "SK100").await.json().await.unwrap();
    assert_eq!(
        (body["valid"].clone(), body["source"].clone()),
        (json!(true), json!("sandbox"))
    );
    let body: Value = get_vat(&s, "DE200").await.json().await.unwrap();
    assert_eq!(body["status"], "invalid");
    let body: Value = get_vat(&s, "SK201").await.json().await.unwrap();
    assert_eq!(body["status"], "invalid_format");
    assert!(body["reason"].as_str().unwrap().contains("INVALID_INPUT"));
    let p = problem(get_vat(&s, "SK301").await, 503).await;
    assert!(p["detail"].as_str().unwrap().contains("MS_UNAVAILABLE"));
    let r = get_vat(&s, "SK600").await;
    assert_eq!(r.headers()["retry-after"], "1");
    problem(r, 503).await;
    // Outages of test numbers do not open the SK circuit for real numbers.
    for _ in 0..10 {
        problem(get_vat(&s, "SK302").await, 503).await;
    }
    let body: Value = get_vat(&s, "SK5739655724").await.json().await.unwrap();
    assert_eq!(body["valid"], true);
    assert_eq!(body["cached"], false);
    let body: Value = get_vat(&s, "SK5739655724").await.json().await.unwrap();
    assert_eq!(body["cached"], true);
}

#[tokio::test]
async fn batches_answer_each_number_in_order_and_refuse_more_than_a_hundred() {
    let calls = Arc::new(AtomicUsize::new(0));
    let vies = vies_stub(calls.clone()).await;
    let s = TestServer::with(|c| {
        c.mode = invex_server::Mode::Production;
        c.vies_url = vies.clone();
        c.register_timeout_ms = 500;
    })
    .await;
    let batch = |body: Value| {
        s.v1(Method::POST, "/v1/vat/verify", BOOTSTRAP)
            .json(&body)
            .send()
    };
    let numbers = [
        "SK2022749619",
        "SK2020123456",
        "SK2020317068",
        "DE129273398",
        "FR00000000000",
    ];
    let r = batch(json!(numbers)).await.unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    let statuses: Vec<&str> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        [
            "valid",
            "invalid_format",
            "unavailable",
            "valid",
            "invalid_format"
        ]
    );
    let inputs: Vec<&str> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["input"].as_str().unwrap())
        .collect();
    assert_eq!(inputs, numbers);
    assert_eq!(
        body["results"][2]["unavailable"]["retry_after_seconds"],
        300
    );
    assert!(body["results"][2]["result"].is_null());
    assert_eq!(body["results"][0]["result"]["name"], "FIRMA s.r.o.");
    assert_eq!(body["summary"]["unavailable"], 1);
    assert_eq!(body["count"], 5);
    // The object form.
    let body: Value = batch(json!({"vat": ["DE129273398"]}))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["results"][0]["status"], "valid");

    let many: Vec<String> = (0..101).map(|_| "SK2022749619".to_string()).collect();
    let p = problem(batch(json!(many)).await.unwrap(), 413).await;
    assert_eq!(p["limit"], "vat_batch_size");
    assert_eq!(p["limit_value"], 100);
    problem(batch(json!([])).await.unwrap(), 422).await;
    let r = batch(json!([1, 2])).await.unwrap();
    assert!(r.status().is_client_error());
    assert_eq!(r.headers()["content-type"], "application/problem+json");
}

#[tokio::test]
async fn usage_counts_each_number_answered_per_tenant_and_survives_a_restart() {
    let mut s = TestServer::start().await;
    let r = s
        .v1(Method::POST, "/v1/tenants", BOOTSTRAP)
        .json(&json!({"name": "Metered s.r.o."}))
        .send()
        .await
        .unwrap();
    let created: Value = r.json().await.unwrap();
    let acme = created["admin_key"]["key"].as_str().unwrap().to_string();
    let acme_tenant = created["tenant"]["id"].as_str().unwrap().to_string();
    let usage =
        |key: &str, query: &str| s.v1(Method::GET, &format!("/v1/usage{query}"), key).send();
    let fresh: Value = usage(&acme, "").await.unwrap().json().await.unwrap();
    assert_eq!(fresh["vat_verification"]["calls"], 0);
    assert_eq!(fresh["vat_verification"]["free_remaining"], 1000);

    // 11 batches of 100 and 3 single calls (one locally invalid, one unavailable).
    let hundred: Vec<&str> = (0..100).map(|_| "SK2022749619").collect();
    for _ in 0..11 {
        let r = s
            .v1(Method::POST, "/v1/vat/verify", &acme)
            .json(&json!(hundred))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    for vat in ["SK2022749619", "SK2020123456"] {
        assert_eq!(get_with(&s, &acme, vat).await.status(), 200);
    }
    assert_eq!(get_with(&s, &acme, "SK301").await.status(), 503);

    let u: Value = usage(&acme, "").await.unwrap().json().await.unwrap();
    assert_eq!(u["tenant_id"], acme_tenant.as_str());
    let v = &u["vat_verification"];
    assert_eq!(v["calls"], 1102, "{u}");
    assert_eq!(v["free_remaining"], 0);
    assert_eq!(v["billable_calls"], 102);
    assert_eq!(v["amount_eur"], "0.408");
    assert_eq!(v["unit_price_eur"], "0.004");
    // The operator's own usage is separate; it may read the customer's.
    let own: Value = usage(BOOTSTRAP, "").await.unwrap().json().await.unwrap();
    assert_eq!(own["vat_verification"]["calls"], 0);
    let theirs: Value = usage(BOOTSTRAP, &format!("?tenant={acme_tenant}"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(theirs["vat_verification"]["calls"], 1102);
    problem(usage(&acme, "?tenant=ten_operator").await.unwrap(), 403).await;
    problem(usage(&acme, "?period=2026-13").await.unwrap(), 422).await;
    let past: Value = usage(&acme, "?period=2020-01")
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(past["vat_verification"]["calls"], 0);

    // Counts are written on shutdown and read back by the next start on the same database.
    let running = s.running.take().unwrap();
    running.shutdown().await.unwrap();
    let dir = std::mem::replace(&mut s.dir, tempfile::tempdir().unwrap());
    let s = TestServer::launch(
        crate::support::config(dir.path()),
        Some(crate::support::shipped()),
        dir,
    )
    .await;
    let u: Value = s.v1(Method::GET, "/v1/usage", &acme).value().await;
    assert_eq!(u["vat_verification"]["calls"], 1102);
}

async fn get_with(s: &TestServer, key: &str, vat: &str) -> reqwest::Response {
    s.v1(Method::GET, &format!("/v1/vat/verify?vat={vat}"), key)
        .send()
        .await
        .unwrap()
}

/// A local FS open-data API: `ds_dphz` lists SK2022749619 (grounds for cancellation),
/// `ds_dphs` lists SK2020317068 (a VAT payer); the `key` header is required.
async fn fs_stub(calls: Arc<AtomicUsize>) -> String {
    use axum::extract::{Path, Query};
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::get;
    use std::collections::HashMap;
    let app = Router::new().route(
        "/data/{dataset}/search",
        get(
            move |Path(dataset): Path<String>,
                  Query(q): Query<HashMap<String, String>>,
                  headers: HeaderMap| {
                let calls = calls.clone();
                async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    if headers.get("key").and_then(|v| v.to_str().ok()) != Some("fs-key") {
                        return (StatusCode::UNAUTHORIZED, "bad key".to_string());
                    }
                    assert_eq!(q.get("column").map(String::as_str), Some("ic_dph"));
                    let search = q.get("search").cloned().unwrap_or_default();
                    let listed = match dataset.as_str() {
                        "ds_dphz" => search == "SK2022749619",
                        "ds_dphs" => search == "SK2020317068",
                        _ => return (StatusCode::NOT_FOUND, "List not found".to_string()),
                    };
                    if !listed {
                        return (StatusCode::NOT_FOUND, "Search not found".to_string());
                    }
                    let row = json!({"ic_dph": search, "ico": "31322832", "nazov_ds": "FS FIRMA a.s.",
                        "ulica_cislo": "Mlynská 12", "psc": "04001", "obec": "Košice"});
                    (StatusCode::OK, json!({"page": 1, "pages": 1, "itemsCount": 1, "itemsPerPage": 50, "data": [row]}).to_string())
                }
            },
        ),
    );
    crate::support::serve_stub(app).await
}

#[tokio::test]
async fn slovak_numbers_consult_the_fs_lists() {
    let vies_calls = Arc::new(AtomicUsize::new(0));
    let fs_calls = Arc::new(AtomicUsize::new(0));
    let vies = vies_stub(vies_calls.clone()).await;
    let fs = fs_stub(fs_calls.clone()).await;
    let s = TestServer::with(|c| {
        c.mode = invex_server::Mode::Production;
        c.vies_url = vies.clone();
        c.register_timeout_ms = 500;
        c.company.fs_url = fs.clone();
        c.company.fs_api_key = Some("fs-key".into());
    })
    .await;
    // Valid in VIES, but the FS lists grounds for cancelling the registration.
    let body: Value = get_vat(&s, "SK2022749619").await.json().await.unwrap();
    assert_eq!(body["valid"], true);
    assert_eq!(body["source"], "VIES");
    assert_eq!(body["sk_cancellation_grounds"], true);
    assert!(
        body["warnings"][0].as_str().unwrap().contains("ds_dphz"),
        "{body}"
    );
    // A foreign number does not ask the FS.
    let before = fs_calls.load(Ordering::SeqCst);
    let body: Value = get_vat(&s, "DE129273398").await.json().await.unwrap();
    assert!(body["sk_cancellation_grounds"].is_null());
    assert_eq!(fs_calls.load(Ordering::SeqCst), before);
    // VIES cannot answer for this SK number: the FS VAT payer list answers instead.
    let r = get_vat(&s, "SK2020317068").await;
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["valid"], true);
    assert_eq!(body["source"], "FS open data (ds_dphs)");
    assert_eq!(body["name"], "FS FIRMA a.s.");
    assert_eq!(body["sk_cancellation_grounds"], false);
    assert!(
        body["warnings"][0]
            .as_str()
            .unwrap()
            .contains("MS_UNAVAILABLE"),
        "{body}"
    );
}

#[tokio::test]
async fn the_sandbox_lists_grounds_for_cancellation_for_one_company() {
    let s = TestServer::start().await;
    let body: Value = get_vat(&s, "SK7296376791").await.json().await.unwrap();
    assert_eq!(body["valid"], true);
    assert_eq!(body["sk_cancellation_grounds"], true);
    assert_eq!(body["warnings"].as_array().unwrap().len(), 1);
    let body: Value = get_vat(&s, "SK2022749619").await.json().await.unwrap();
    assert_eq!(body["sk_cancellation_grounds"], false);
    assert!(body["warnings"].as_array().unwrap().is_empty());
}
