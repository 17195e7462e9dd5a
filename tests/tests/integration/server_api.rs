//! End to end: the real server on a random port, spoken to over HTTP.

use crate::support::{invalid_invoice, problem, TestServer, BOOTSTRAP};
use reqwest::Method;
use serde_json::{json, Value};

use invex_server::auth::{Access, ALL_ROLES};
use invex_server::routes;

#[tokio::test]
async fn operations_routes_answer_without_a_key() {
    let s = TestServer::start().await;
    let health: Value = s
        .client
        .get(s.url("/health"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["mode"], "sandbox");
    let r = s.client.get(s.url("/ready")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let ready: Value = r.json().await.unwrap();
    assert!(ready["rulepacks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v == "en16931-ubl@1.3.16"));

    // One validation so the counters have something to show.
    assert_eq!(
        s.validate(BOOTSTRAP, crate::support::example("invoice-sk.xml"))
            .await
            .status(),
        200
    );
    let metrics = s
        .client
        .get(s.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("invex_http_requests_total{method=\"POST\",route=\"/v1/invoice/validate\",status=\"200\"} 1"), "{metrics}");
    assert!(metrics.contains(
        "invex_http_request_duration_seconds_bucket{method=\"POST\",route=\"/v1/invoice/validate\""
    ));
    assert!(
        metrics.contains("invex_validations_total{profile=\"peppol-bis3-sk\",verdict=\"valid\"} 1")
    );
    assert!(metrics.contains("invex_rulepack_info{pack=\"sk-national\",version=\"2027.1\"} 1"));

    let doc: Value = s
        .client
        .get(s.url("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(
        doc["paths"]["/v1/keys"]["post"]["x-invex-roles"],
        json!(["admin"])
    );
    assert_eq!(
        doc["paths"]["/api/validate"]["post"]["security"],
        json!([{"bearer": []}])
    );
    assert_eq!(
        doc["paths"]["/v1/invoice/validate"]["post"]["security"],
        json!([{"api_key": []}])
    );
    // /docs loaded its script from a CDN and was blank offline: every asset it names is now
    // served by the server itself.
    let docs = s.client.get(s.url("/docs/")).send().await.unwrap();
    assert_eq!(docs.status(), 200);
    let page = docs.text().await.unwrap();
    let mut assets = 0;
    for attr in ["src=\"", "href=\""] {
        for (i, _) in page.match_indices(attr) {
            let start = i + attr.len();
            let end = start + page[start..].find('"').unwrap();
            let asset = &page[start..end];
            assert!(
                !asset.contains("//"),
                "/docs loads {asset} from another host"
            );
            let url = s.url(&format!("/docs/{}", asset.trim_start_matches("./")));
            let r = s.client.get(url).send().await.unwrap();
            assert_eq!(r.status(), 200, "{asset}");
            assets += 1;
        }
    }
    assert!(assets >= 3, "{page}");
    let init = s
        .client
        .get(s.url("/docs/swagger-initializer.js"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(init.contains("/openapi.json"), "{init}");
}

/// Every label of every metric takes a bounded set of values: 20,000 requests with made-up
/// methods and paths leave /metrics a few kilobytes long, with the methods under `other`
/// and the paths under `unmatched`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bogus_methods_and_paths_do_not_grow_the_metrics() {
    use futures_util::StreamExt;
    let s = TestServer::start().await;
    let metrics = |s: &TestServer| {
        let r = s.client.get(s.url("/metrics"));
        async move { r.send().await.unwrap().text().await.unwrap() }
    };
    let before = metrics(&s).await;
    let statuses: Vec<u16> = futures_util::stream::iter(0..20_000)
        .map(|n| {
            let (method, path) = match n % 3 {
                0 => (format!("M{n:06}X"), "/health".to_string()),
                1 => ("GET".to_string(), format!("/nowhere/{n}")),
                _ => (format!("Q{n:06}"), format!("/v1/keys/{n}")),
            };
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let request = s.client.request(method, s.url(&path));
            async move { request.send().await.unwrap().status().as_u16() }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    assert!(
        statuses.iter().all(|s| *s == 404 || *s == 405),
        "{statuses:?}"
    );
    let after = metrics(&s).await;
    eprintln!(
        "/metrics: {} bytes before, {} after",
        before.len(),
        after.len()
    );
    assert!(
        after.len() < before.len() + 16 * 1024,
        "/metrics grew from {} to {} bytes",
        before.len(),
        after.len()
    );
    let methods: std::collections::BTreeSet<&str> = after
        .lines()
        .filter_map(|l| l.split("method=\"").nth(1))
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert!(methods.contains("other"), "{methods:?}");
    assert!(
        methods
            .iter()
            .all(|m| !m.starts_with('M') && !m.starts_with('Q')),
        "{methods:?}"
    );
    assert!(after.contains("route=\"unmatched\""), "{after}");
    assert!(!after.contains("/nowhere/"), "paths are never labels");
}

#[tokio::test]
async fn valid_and_invalid_invoices_are_validated_stored_and_marked_sandbox() {
    let s = TestServer::start().await;
    let r = s
        .validate(BOOTSTRAP, crate::support::example("invoice-sk.xml"))
        .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["invex-environment"], "sandbox");
    let location = r.headers()["content-location"]
        .to_str()
        .unwrap()
        .to_string();
    let valid: Value = r.json().await.unwrap();
    assert_eq!(valid["verdict"], "valid");
    assert_eq!(valid["environment"], "sandbox");
    assert_eq!(valid["profile"], "peppol-bis3-sk@2027.2");
    assert!(valid["detection"]
        .as_str()
        .unwrap()
        .contains("buyer country (BT-55) SK"));
    assert_eq!(
        location,
        format!("/v1/validations/{}", valid["id"].as_str().unwrap())
    );
    assert_eq!(
        valid["rules_version"],
        json!([
            "ubl-2.1-xsd@2.1",
            "en16931-ubl@1.3.16",
            "peppol-bis3@2026.11",
            "sk-national@2027.2"
        ])
    );

    let r = s.validate(BOOTSTRAP, invalid_invoice()).await;
    assert_eq!(r.status(), 200);
    let invalid: Value = r.json().await.unwrap();
    assert_eq!(invalid["verdict"], "invalid");
    assert!(invalid["counts"]["fatal"].as_u64().unwrap() >= 1);
    let br16 = invalid["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == "BR-16")
        .expect("BR-16 fires without lines");
    assert_eq!(br16["severity"], "fatal");
    assert_eq!(br16["location"]["path"], "/ubl:Invoice");
    assert!(br16["location"]["line"].as_u64().unwrap() >= 1);
    assert!(!br16["remediation"].as_str().unwrap().is_empty());
    assert!(!br16["message"].as_str().unwrap().is_empty());

    // Stored as answered.
    let id = invalid["id"].as_str().unwrap();
    let again: Value = s
        .v1(Method::GET, &format!("/v1/validations/{id}"), BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(again, invalid);
    let list: Value = s
        .v1(Method::GET, "/v1/validations", BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = list["validations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![id, valid["id"].as_str().unwrap()]);

    // A named profile is used as named.
    let r = s
        .v1(
            Method::POST,
            "/v1/invoice/validate?profile=en16931-ubl",
            BOOTSTRAP,
        )
        .header("Content-Type", "text/xml")
        .body(crate::support::example("invoice-sk.xml"))
        .send()
        .await
        .unwrap();
    let named: Value = r.json().await.unwrap();
    assert_eq!(named["profile"], "en16931-ubl@1.3.16");
    assert!(named.get("detection").is_none());
}

#[tokio::test]
async fn svrl_is_answered_on_request_and_for_stored_results() {
    let s = TestServer::start().await;
    let r = s
        .v1(Method::POST, "/v1/invoice/validate", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .header("Accept", "application/svrl+xml")
        .body(invalid_invoice())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/svrl+xml");
    let id = r.headers()["invex-validation-id"]
        .to_str()
        .unwrap()
        .to_string();
    let svrl = r.text().await.unwrap();
    assert!(svrl.contains("schematron-output"), "{svrl}");
    assert!(svrl.contains("failed-assert") && svrl.contains("BR-16"));
    let stored = s
        .v1(Method::GET, &format!("/v1/validations/{id}"), BOOTSTRAP)
        .header("Accept", "application/svrl+xml")
        .send()
        .await
        .unwrap();
    assert_eq!(stored.headers()["content-type"], "application/svrl+xml");
    assert!(stored.text().await.unwrap().contains("BR-16"));
    let r = s
        .v1(Method::GET, &format!("/v1/validations/{id}"), BOOTSTRAP)
        .header("Accept", "text/html")
        .send()
        .await
        .unwrap();
    problem(r, 406).await;
}

fn part(name: &str, bytes: Vec<u8>) -> reqwest::multipart::Part {
    reqwest::multipart::Part::bytes(bytes)
        .file_name(name.to_string())
        .mime_str("application/xml")
        .unwrap()
}

/// `/api/validate` answered a bare result for one file and a batch for several: a client
/// generated from the OpenAPI (which says batch) broke on the single file. One shape now.
#[tokio::test]
async fn api_validate_answers_the_batch_shape_for_one_file_too() {
    let s = TestServer::start().await;
    let form = reqwest::multipart::Form::new().part(
        "files[]",
        part("good.xml", crate::support::example("invoice-sk.xml")),
    );
    let r = s
        .api(Method::POST, "/api/validate", BOOTSTRAP)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["results"].as_array().map(Vec::len), Some(1), "{body}");
    assert_eq!(body["results"][0]["verdict"], "valid", "{body}");
    assert_eq!(body["rejected"], serde_json::json!([]), "{body}");
    // One file that is not XML: the same problem as for a batch, naming the file.
    let form = reqwest::multipart::Form::new().part(
        "files[]",
        part("broken.xml", b"<Invoice>\n<a>\n</Invoice>".to_vec()),
    );
    let r = s
        .api(Method::POST, "/api/validate", BOOTSTRAP)
        .multipart(form)
        .send()
        .await
        .unwrap();
    let p = problem(r, 422).await;
    assert_eq!(p["rejected"][0]["file_name"], "broken.xml", "{p}");
}

#[tokio::test]
async fn api_validate_takes_several_files_and_answers_each() {
    let s = TestServer::start().await;
    let form = reqwest::multipart::Form::new()
        .part(
            "files[]",
            part("good.xml", crate::support::example("invoice-sk.xml")),
        )
        .part(
            "files[]",
            part("broken.xml", b"<Invoice>\n  <a>\n</Invoice>".to_vec()),
        )
        .part("files[]", part("bad.xml", invalid_invoice()));
    let r = s
        .api(Method::POST, "/api/validate", BOOTSTRAP)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["document"]["file_name"], "good.xml");
    assert_eq!(results[0]["verdict"], "valid");
    assert_eq!(results[1]["document"]["file_name"], "bad.xml");
    assert_eq!(results[1]["verdict"], "invalid");
    let rejected = &body["rejected"][0];
    assert_eq!(rejected["index"], 1);
    assert_eq!(rejected["file_name"], "broken.xml");
    assert_eq!(rejected["problem"]["status"], 422);
    assert_eq!(rejected["problem"]["line"], 3);
    // Every result was stored.
    for result in results {
        let id = result["id"].as_str().unwrap();
        let r = s
            .v1(Method::GET, &format!("/v1/validations/{id}"), BOOTSTRAP)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
}

#[tokio::test]
async fn every_auth_failure_is_a_401_problem_that_says_what_to_send() {
    let s = TestServer::start().await;
    let xml = || crate::support::example("invoice-sk.xml");
    // No key.
    let p = problem(
        s.client
            .post(s.url("/v1/invoice/validate"))
            .body(xml())
            .send()
            .await
            .unwrap(),
        401,
    )
    .await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("#missing-credentials"));
    assert!(p["detail"].as_str().unwrap().contains("X-API-Key"));
    let p = problem(
        s.client.post(s.url("/api/validate")).send().await.unwrap(),
        401,
    )
    .await;
    assert!(p["detail"]
        .as_str()
        .unwrap()
        .contains("Authorization: Bearer"));
    // The other family's header.
    let r = s
        .client
        .post(s.url("/v1/invoice/validate"))
        .bearer_auth(BOOTSTRAP)
        .body(xml())
        .send()
        .await
        .unwrap();
    assert!(r.headers().contains_key("www-authenticate"));
    let p = problem(r, 401).await;
    assert!(p["type"].as_str().unwrap().ends_with("#wrong-auth-header"));
    assert!(p["detail"].as_str().unwrap().contains("X-API-Key"));
    let p = problem(
        s.client
            .post(s.url("/api/validate"))
            .header("X-API-Key", BOOTSTRAP)
            .send()
            .await
            .unwrap(),
        401,
    )
    .await;
    assert!(p["type"].as_str().unwrap().ends_with("#wrong-auth-header"));
    assert!(p["detail"].as_str().unwrap().contains("Bearer"));
    // Not a Bearer credential.
    let p = problem(
        s.client
            .post(s.url("/api/validate"))
            .header("Authorization", format!("Basic {BOOTSTRAP}"))
            .send()
            .await
            .unwrap(),
        401,
    )
    .await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("#malformed-authorization"));
    // Unknown key, and a known prefix with a wrong secret.
    let p = problem(s.validate("inx_000000000000_nope", xml()).await, 401).await;
    assert!(p["type"].as_str().unwrap().ends_with("#invalid-key"));
    let (id, key) = s.create_key(BOOTSTRAP, "developer").await;
    let forged = format!("{}x", &key[..key.len() - 1]);
    problem(s.validate(&forged, xml()).await, 401).await;
    // Revoked.
    assert_eq!(s.validate(&key, xml()).await.status(), 200);
    let r = s
        .v1(Method::DELETE, &format!("/v1/keys/{id}"), BOOTSTRAP)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let p = problem(s.validate(&key, xml()).await, 401).await;
    assert!(p["type"].as_str().unwrap().ends_with("#revoked-key"));
    // The sandbox placeholder opens only the VAT route.
    let p = problem(s.validate("sandbox", xml()).await, 401).await;
    assert!(p["detail"].as_str().unwrap().contains("sandbox"));
}

/// A request for `method path` that passes extraction far enough to reach the handler.
fn request(
    s: &TestServer,
    method: &reqwest::Method,
    path: &str,
    key: &str,
) -> reqwest::RequestBuilder {
    let path = path.replace("{id}", "unknown");
    let b = if path.starts_with("/api/") {
        s.api(method.clone(), &path, key)
    } else {
        s.v1(method.clone(), &path, key)
    };
    if method == reqwest::Method::POST {
        b.header("Content-Type", "application/json").body("{}")
    } else {
        b
    }
}

#[tokio::test]
async fn the_role_matrix_holds_for_every_route_and_role() {
    let s = TestServer::start().await;
    let mut keys = Vec::new();
    for role in ALL_ROLES {
        let (_, key) = s.create_key(BOOTSTRAP, role.as_str()).await;
        keys.push((role, key));
    }
    let mut checked = 0;
    for endpoint in routes::table() {
        if matches!(endpoint.access, Access::Public) {
            continue;
        }
        let method = reqwest::Method::from_bytes(endpoint.method.as_str().as_bytes()).unwrap();
        for path in [
            endpoint.path.to_string(),
            endpoint.path.replacen("/v1/", "/v2/", 1),
        ] {
            if !path.starts_with("/v2/") || endpoint.path.starts_with("/v1/") {
                for (role, key) in &keys {
                    let status = request(&s, &method, &path, key)
                        .send()
                        .await
                        .unwrap()
                        .status();
                    let allowed = endpoint.access.roles().contains(role);
                    if allowed {
                        assert!(
                            status != 401 && status != 403,
                            "{role:?} {method} {path}: {status}"
                        );
                    } else {
                        assert_eq!(status, 403, "{role:?} {method} {path}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 4 * 11, "{checked}");
}

#[tokio::test]
async fn tenants_never_see_each_others_data() {
    let s = TestServer::start().await;
    let r = s
        .v1(Method::POST, "/v1/tenants", BOOTSTRAP)
        .json(&json!({"name": "Acme s.r.o."}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let created: Value = r.json().await.unwrap();
    let acme = created["admin_key"]["key"].as_str().unwrap().to_string();
    let acme_tenant = created["tenant"]["id"].as_str().unwrap().to_string();

    let mine: Value = s
        .validate(BOOTSTRAP, crate::support::example("invoice-sk.xml"))
        .await
        .json()
        .await
        .unwrap();
    let theirs: Value = s
        .validate(&acme, crate::support::example("invoice-sk.xml"))
        .await
        .json()
        .await
        .unwrap();
    let (mine, theirs) = (mine["id"].as_str().unwrap(), theirs["id"].as_str().unwrap());
    // Each sees its own result and not the other's.
    for (key, own, other) in [(BOOTSTRAP, mine, theirs), (acme.as_str(), theirs, mine)] {
        assert_eq!(
            s.v1(Method::GET, &format!("/v1/validations/{own}"), key)
                .send()
                .await
                .unwrap()
                .status(),
            200
        );
        problem(
            s.v1(Method::GET, &format!("/v1/validations/{other}"), key)
                .send()
                .await
                .unwrap(),
            404,
        )
        .await;
        let list: Value = s
            .v1(Method::GET, "/v1/validations", key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let ids: Vec<&str> = list["validations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, vec![own]);
    }
    // Keys: listed per tenant; another tenant's key cannot be revoked.
    let acme_keys: Value = s
        .v1(Method::GET, "/v1/keys", &acme)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let acme_keys = acme_keys["keys"].as_array().unwrap();
    assert_eq!(acme_keys.len(), 1);
    assert_eq!(acme_keys[0]["tenant_id"], acme_tenant.as_str());
    assert!(acme_keys[0].get("key").is_none() && acme_keys[0].get("hash").is_none());
    let op_keys: Value = s
        .v1(Method::GET, "/v1/keys", BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let op_key_id = op_keys["keys"][0]["id"].as_str().unwrap().to_string();
    problem(
        s.v1(Method::DELETE, &format!("/v1/keys/{op_key_id}"), &acme)
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    problem(
        s.v1(
            Method::DELETE,
            &format!("/v1/keys/{}", acme_keys[0]["id"].as_str().unwrap()),
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap(),
        404,
    )
    .await;
    // Only the operator manages tenants.
    problem(
        s.v1(Method::GET, "/v1/tenants", &acme)
            .send()
            .await
            .unwrap(),
        403,
    )
    .await;
    let tenants: Value = s
        .v1(Method::GET, "/v1/tenants", BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tenants["tenants"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn keys_are_shown_once_work_and_can_be_revoked_but_not_the_last_admin() {
    let s = TestServer::start().await;
    let r = s
        .v1(Method::POST, "/v1/keys", BOOTSTRAP)
        .json(&json!({"role": "auditor", "name": "audit"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let created: Value = r.json().await.unwrap();
    let key = created["key"].as_str().unwrap();
    assert!(key.starts_with(created["prefix"].as_str().unwrap()));
    let list = s
        .v1(Method::GET, "/v1/keys", BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!list.contains(key), "a listing never shows a key");
    assert_eq!(
        s.v1(Method::GET, "/v1/rulepacks", key)
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    // Bad bodies.
    let p = problem(
        s.v1(Method::POST, "/v1/keys", BOOTSTRAP)
            .json(&json!({"role": "boss", "name": "x"}))
            .send()
            .await
            .unwrap(),
        422,
    )
    .await;
    assert!(p["detail"].as_str().unwrap().contains("boss"), "{p}");
    problem(
        s.v1(Method::POST, "/v1/keys", BOOTSTRAP)
            .json(&json!({"role": "admin", "name": " "}))
            .send()
            .await
            .unwrap(),
        422,
    )
    .await;
    problem(
        s.v1(Method::POST, "/v1/keys", BOOTSTRAP)
            .header("Content-Type", "application/json")
            .body("{")
            .send()
            .await
            .unwrap(),
        400,
    )
    .await;
    // The last admin key stays; revoking twice is a conflict.
    let keys: Value = s
        .v1(Method::GET, "/v1/keys", BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    // Newest first: the bootstrap key is the oldest.
    let bootstrap_id = keys["keys"].as_array().unwrap().last().unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let p = problem(
        s.v1(
            Method::DELETE,
            &format!("/v1/keys/{bootstrap_id}"),
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap(),
        409,
    )
    .await;
    assert!(p["type"].as_str().unwrap().ends_with("#last-admin-key"));
    let audit_id = created["id"].as_str().unwrap();
    assert_eq!(
        s.v1(Method::DELETE, &format!("/v1/keys/{audit_id}"), BOOTSTRAP)
            .send()
            .await
            .unwrap()
            .status(),
        204
    );
    problem(
        s.v1(Method::DELETE, &format!("/v1/keys/{audit_id}"), BOOTSTRAP)
            .send()
            .await
            .unwrap(),
        409,
    )
    .await;
}

/// Admins revoking their keys at the same moment never leave a tenant without an admin key.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_revocations_never_remove_the_last_admin_key() {
    let s = TestServer::start().await;
    crate::support::revoke_admin_keys_at_once(&[&s], 25).await;
}

#[tokio::test]
async fn request_errors_are_problems_with_the_right_status() {
    let s = TestServer::with(|c| {
        c.limits.max_body_bytes = 64 * 1024;
        c.limits.max_files = 2;
    })
    .await;
    let xml = || crate::support::example("invoice-sk.xml");
    // 400 unknown profile
    let p = problem(
        s.v1(Method::POST, "/v1/invoice/validate?profile=nope", BOOTSTRAP)
            .header("Content-Type", "application/xml")
            .body(xml())
            .send()
            .await
            .unwrap(),
        400,
    )
    .await;
    assert!(p["available_profiles"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v == "peppol-bis3-sk"));
    // 404, 405
    problem(
        s.v1(Method::GET, "/v1/nothing-here", BOOTSTRAP)
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    let r = s
        .v1(Method::PUT, "/v1/invoice/validate", BOOTSTRAP)
        .send()
        .await
        .unwrap();
    assert!(r.headers().contains_key("allow"));
    problem(r, 405).await;
    // 413: body and file count, with the limit in the body
    let big = vec![b' '; 70 * 1024];
    let p = problem(s.validate(BOOTSTRAP, big).await, 413).await;
    assert_eq!(p["limit"], "max_body_bytes");
    assert_eq!(p["limit_value"], 64 * 1024);
    let form = (0..3).fold(reqwest::multipart::Form::new(), |f, i| {
        f.part("files[]", part(&format!("{i}.xml"), b"<a/>".to_vec()))
    });
    let p = problem(
        s.api(Method::POST, "/api/validate", BOOTSTRAP)
            .multipart(form)
            .send()
            .await
            .unwrap(),
        413,
    )
    .await;
    assert_eq!(p["limit"], "max_files");
    assert_eq!(p["limit_value"], 2);
    // 415
    let p = problem(
        s.v1(Method::POST, "/v1/invoice/validate", BOOTSTRAP)
            .header("Content-Type", "text/plain")
            .body("{}")
            .send()
            .await
            .unwrap(),
        415,
    )
    .await;
    assert!(p["detail"].as_str().unwrap().contains("application/xml"));
    problem(
        s.api(Method::POST, "/api/validate", BOOTSTRAP)
            .header("Content-Type", "application/xml")
            .body(xml())
            .send()
            .await
            .unwrap(),
        415,
    )
    .await;
    // 422: not well-formed with line and column; DOCTYPE refused
    let p = problem(
        s.validate(BOOTSTRAP, b"<Invoice>\n  <ID>1</Id>\n</Invoice>".to_vec())
            .await,
        422,
    )
    .await;
    assert_eq!(p["line"], 2);
    assert!(p["column"].as_u64().unwrap() > 1);
    assert!(p["type"].as_str().unwrap().ends_with("#not-well-formed"));
    let p = problem(
        s.validate(
            BOOTSTRAP,
            b"<?xml version=\"1.0\"?>\n<!DOCTYPE x [<!ENTITY e \"boom\">]>\n<x>&e;</x>".to_vec(),
        )
        .await,
        422,
    )
    .await;
    assert!(p["type"].as_str().unwrap().ends_with("#doctype-refused"));
    // Nothing rejected was stored.
    let list: Value = s
        .v1(Method::GET, "/v1/validations", BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["validations"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn a_key_over_its_rate_gets_429_with_retry_after() {
    let s = TestServer::with(|c| {
        c.limits.rate_per_second = 1;
        c.limits.rate_burst = 2;
    })
    .await;
    let mut statuses = Vec::new();
    let mut retry = None;
    for _ in 0..4 {
        let r = s
            .v1(Method::GET, "/v1/rulepacks", BOOTSTRAP)
            .send()
            .await
            .unwrap();
        statuses.push(r.status().as_u16());
        if r.status() == 429 {
            retry = r
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_string());
            let p = problem(r, 429).await;
            assert!(p["type"].as_str().unwrap().ends_with("#rate-limited"));
        }
    }
    assert_eq!(&statuses[..2], &[200, 200]);
    assert!(statuses[2..].contains(&429), "{statuses:?}");
    assert!(retry.unwrap().parse::<u64>().unwrap() >= 1);
}

/// A key guessed at random, in the shape of generated keys.
fn guessed_key(n: usize) -> String {
    format!("inx_{n:012x}_{}", "A".repeat(43))
}

/// Key guessing is throttled per client address: 2,000 wrong keys in a row are answered
/// 429 with Retry-After once the address's budget of failures is spent, while a valid key
/// from the same address keeps working.
#[tokio::test]
async fn guessing_keys_is_throttled_but_valid_keys_keep_working() {
    let s = TestServer::start().await;
    let (_, developer) = s.create_key(BOOTSTRAP, "developer").await;
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    let mut first_throttled = None;
    for n in 0..2000 {
        // A client's own X-Forwarded-For is not believed (no trusted proxy is configured).
        let r = s
            .v1(Method::GET, "/v1/rulepacks", &guessed_key(n))
            .header("X-Forwarded-For", format!("10.{}.{}.1", n / 250, n % 250))
            .send()
            .await
            .unwrap();
        *statuses.entry(r.status().as_u16()).or_default() += 1;
        if r.status() == 429 && first_throttled.is_none() {
            let retry: u64 = r.headers()["retry-after"]
                .to_str()
                .unwrap()
                .parse()
                .unwrap();
            assert!(retry >= 1, "{retry}");
            let p = problem(r, 429).await;
            assert!(p["type"]
                .as_str()
                .unwrap()
                .ends_with("#too-many-failed-authentications"));
            assert_eq!(p["scope"], "address");
            first_throttled = Some(n);
        }
        if n % 250 == 0 {
            // The valid keys of this address are not locked out.
            for key in [BOOTSTRAP, developer.as_str()] {
                let r = s
                    .v1(Method::GET, "/v1/rulepacks", key)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 200, "request {n}");
            }
        }
    }
    let throttled = statuses.get(&429).copied().unwrap_or(0);
    assert!(throttled >= 1900, "{statuses:?}");
    assert!(
        first_throttled.is_some_and(|n| n <= 100),
        "{first_throttled:?}"
    );
    let metrics = s
        .client
        .get(s.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains(&format!(
            "invex_auth_throttled_total{{scope=\"address\"}} {throttled}"
        )),
        "{metrics}"
    );
}

/// Behind a trusted proxy each client has its own budget; a key prefix has one too, across
/// addresses, yet guessing at a key's prefix does not lock the key's holder out.
#[tokio::test]
async fn clients_behind_a_trusted_proxy_and_key_prefixes_have_their_own_budgets() {
    let s = TestServer::with(|c| {
        c.limits.auth_failures_per_minute = 5;
        c.trusted_proxies = vec!["127.0.0.1/32".parse().unwrap()];
    })
    .await;
    let (_, developer) = s.create_key(BOOTSTRAP, "developer").await;
    let from = |client: String, key: String| {
        let r = s
            .v1(Method::GET, "/v1/rulepacks", &key)
            .header("X-Forwarded-For", client);
        async move { r.send().await.unwrap() }
    };
    for n in 0..5 {
        let r = from("203.0.113.1".into(), guessed_key(n)).await;
        assert_eq!(r.status(), 401);
    }
    let p = problem(from("203.0.113.1".into(), guessed_key(5)).await, 429).await;
    assert_eq!(p["scope"], "address");
    // Another client behind the same proxy is not held back.
    assert_eq!(
        from("203.0.113.2".into(), guessed_key(6)).await.status(),
        401
    );
    // Guesses at the developer key's prefix, each from another address.
    let prefix = &developer[..developer.rfind('_').unwrap()];
    let wrong = |n: usize| format!("{prefix}_{n:0>43}");
    for n in 0..5 {
        let r = from(format!("198.51.100.{n}"), wrong(n)).await;
        assert_eq!(r.status(), 401);
    }
    let p = problem(from("198.51.100.99".into(), wrong(99)).await, 429).await;
    assert_eq!(p["scope"], "key_prefix");
    // The holder of the key, from a throttled address or not, gets in.
    for client in ["198.51.100.200", "203.0.113.1"] {
        let r = from(client.into(), developer.clone()).await;
        assert_eq!(r.status(), 200, "{client}");
    }
}

#[tokio::test]
async fn storage_failure_is_a_500_problem_and_readiness_fails() {
    let s = TestServer::start().await;
    s.running.as_ref().unwrap().state.store.close().await;
    let p = problem(
        s.validate(BOOTSTRAP, crate::support::example("invoice-sk.xml"))
            .await,
        500,
    )
    .await;
    assert!(
        !p["detail"].as_str().unwrap().contains("sqlite"),
        "no internals: {p}"
    );
    problem(s.client.get(s.url("/ready")).send().await.unwrap(), 503).await;
}

#[tokio::test]
async fn request_ids_are_echoed_or_generated() {
    let s = TestServer::start().await;
    let r = s
        .client
        .get(s.url("/health"))
        .header("X-Request-Id", "client-42")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-request-id"], "client-42");
    let r = s
        .client
        .get(s.url("/v1/keys"))
        .header("X-Request-Id", "client-43")
        .send()
        .await
        .unwrap();
    let p = problem(r, 401).await;
    assert_eq!(p["request_id"], "client-43");
    let r = s.client.get(s.url("/health")).send().await.unwrap();
    assert_eq!(r.headers()["x-request-id"].len(), 36);
    let r = s
        .client
        .get(s.url("/health"))
        .header("X-Request-Id", "has spaces")
        .send()
        .await
        .unwrap();
    assert_ne!(r.headers()["x-request-id"], "has spaces");
}

#[tokio::test]
async fn v2_is_a_sandbox_beta_and_production_refuses_it() {
    let s = TestServer::start().await;
    let r = s
        .v1(Method::GET, "/v2/rulepacks", BOOTSTRAP)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["invex-api-stability"], "beta");

    let prod = TestServer::with(|c| c.mode = invex_server::Mode::Production).await;
    let p = problem(
        prod.v1(Method::GET, "/v2/rulepacks", BOOTSTRAP)
            .send()
            .await
            .unwrap(),
        404,
    )
    .await;
    assert!(p["type"].as_str().unwrap().ends_with("#v2-sandbox-only"));
    let r = prod
        .validate(BOOTSTRAP, crate::support::example("invoice-sk.xml"))
        .await;
    assert!(r.headers().get("invex-environment").is_none());
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["environment"], "production");
    let p = problem(
        prod.validate("sandbox", crate::support::example("invoice-sk.xml"))
            .await,
        401,
    )
    .await;
    assert!(p["detail"]
        .as_str()
        .unwrap()
        .contains("never accepted in production"));
}

#[tokio::test]
async fn shutdown_lets_in_flight_requests_finish() {
    let mut s = TestServer::start().await;
    let big = invex_benches::generate_invoice(300).into_bytes();
    let client = s.client.clone();
    let url = s.url("/v1/invoice/validate");
    let in_flight = tokio::spawn(async move {
        client
            .post(url)
            .header("X-API-Key", BOOTSTRAP)
            .header("Content-Type", "application/xml")
            .body(big)
            .send()
            .await
    });
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    s.running
        .take()
        .unwrap()
        .shutdown()
        .await
        .expect("clean shutdown");
    let r = in_flight
        .await
        .unwrap()
        .expect("the in-flight request was answered");
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["verdict"], "valid");
    assert!(
        s.client.get(s.url("/health")).send().await.is_err(),
        "no longer listening"
    );
}

/// Every page of a list, followed by `next` → `before` until there is none; the ids in
/// the order given.
async fn all_pages(s: &TestServer, path: &str, items: &str, size: usize) -> Vec<String> {
    let mut ids = Vec::new();
    let mut before: Option<String> = None;
    for _ in 0..100 {
        let sep = if path.contains('?') { '&' } else { '?' };
        let url = match &before {
            Some(b) => format!("{path}{sep}limit={size}&before={b}"),
            None => format!("{path}{sep}limit={size}"),
        };
        let r = s.v1(Method::GET, &url, BOOTSTRAP).send().await.unwrap();
        assert_eq!(r.status(), 200, "{url}");
        let page: Value = r.json().await.unwrap();
        let list = page[items].as_array().unwrap_or_else(|| panic!("{page}"));
        assert!(list.len() <= size, "{url}: {} items", list.len());
        assert!(
            !list.is_empty() || before.is_none(),
            "{url}: the previous page's next led to an empty page"
        );
        ids.extend(list.iter().map(|i| i["id"].as_str().unwrap().to_string()));
        match page["next"].as_str() {
            // A `next` always leads somewhere: never to an empty page.
            Some(next) => {
                assert_eq!(list.len(), size, "{url}: a short page with a next");
                before = Some(next.to_string());
            }
            None => return ids,
        }
    }
    panic!("{path}: more than 100 pages");
}

/// Newest first, each item once, and every item there.
fn assert_paged(path: &str, ids: &[String], created: &[String]) {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(ids, sorted.as_slice(), "{path}: not newest first");
    sorted.dedup();
    assert_eq!(sorted.len(), ids.len(), "{path}: an item twice");
    for id in created {
        assert!(ids.contains(id), "{path}: {id} missing from {ids:?}");
    }
}

/// A 201 with a `Location` that answers the created resource.
async fn created_at(s: &TestServer, r: reqwest::Response, expected_prefix: &str) -> String {
    assert_eq!(r.status(), 201);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let body: Value = r.json().await.unwrap();
    // Creations that also hand over a secret wrap the resource.
    let id = ["id", "/tenant/id"]
        .iter()
        .find_map(|p| {
            if p.starts_with('/') {
                body.pointer(p)
            } else {
                body.get(*p)
            }
        })
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{body}"))
        .to_string();
    assert_eq!(location, format!("{expected_prefix}{id}"));
    let r = s
        .v1(Method::GET, &location, BOOTSTRAP)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{location}");
    let found: Value = r.json().await.unwrap();
    assert_eq!(found["id"], id.as_str(), "{location}: {found}");
    id
}

/// The lists share one shape: `?limit=` and `?before=`, `next` only when a next page
/// exists (a full last page used to name a `next` leading to an empty page), newest first;
/// creations answer 201 with a `Location` that leads to the resource.
#[tokio::test]
async fn lists_page_alike_and_creations_say_where_they_are() {
    let s = TestServer::start().await;
    let (mut keys, mut connections, mut webhooks, mut tenants) = (vec![], vec![], vec![], vec![]);
    for i in 0..4 {
        let r = s
            .v1(Method::POST, "/v1/keys", BOOTSTRAP)
            .json(&json!({"role": "auditor", "name": format!("auditor {i}")}))
            .send()
            .await
            .unwrap();
        keys.push(created_at(&s, r, "/v1/keys/").await);
        let r = s
            .v1(Method::POST, "/v1/connections", BOOTSTRAP)
            .json(&json!({"partner": "sandbox", "name": format!("partner {i}")}))
            .send()
            .await
            .unwrap();
        connections.push(created_at(&s, r, "/v1/connections/").await);
        let r = s
            .v1(Method::POST, "/v1/webhooks", BOOTSTRAP)
            .json(&json!({"url": format!("http://127.0.0.1:9/hooks/{i}"), "event_types": ["invoice.delivered"]}))
            .send()
            .await
            .unwrap();
        webhooks.push(created_at(&s, r, "/v1/webhooks/").await);
        let r = s
            .v1(Method::POST, "/v1/tenants", BOOTSTRAP)
            .json(&json!({"name": format!("Tenant {i} s.r.o.")}))
            .send()
            .await
            .unwrap();
        tenants.push(created_at(&s, r, "/v1/tenants/").await);
    }
    let mut validations = Vec::new();
    for _ in 0..4 {
        let r = s.validate(BOOTSTRAP, invalid_invoice()).await;
        let body: Value = r.json().await.unwrap();
        validations.push(body["id"].as_str().unwrap().to_string());
    }
    // Page sizes that end on a full page (4 of 2, 5 of 5 with the bootstrap key) and ones
    // that do not.
    for (path, items, created) in [
        ("/v1/keys", "keys", &keys),
        ("/v1/connections", "connections", &connections),
        ("/v1/webhooks", "webhooks", &webhooks),
        ("/v1/tenants", "tenants", &tenants),
        ("/v1/validations", "validations", &validations),
    ] {
        for size in [1, 2, 3, 5] {
            let ids = all_pages(&s, path, items, size).await;
            assert_paged(path, &ids, created);
        }
    }
    // A page size out of range is refused, the same way on every list.
    for path in [
        "/v1/keys",
        "/v1/conversions",
        "/v1/invoices",
        "/v1/validations",
    ] {
        for limit in ["0", "201"] {
            let p = problem(
                s.v1(Method::GET, &format!("{path}?limit={limit}"), BOOTSTRAP)
                    .send()
                    .await
                    .unwrap(),
                422,
            )
            .await;
            assert_eq!(p["field"], "limit", "{path}: {p}");
        }
    }
}

/// No route grants another site's scripts access: API keys belong on servers, and the
/// console is same-origin only. Neither a preflight nor a request with an `Origin` gets an
/// `Access-Control-Allow-*` answer, on either route family, the console or the operations
/// routes.
#[tokio::test]
async fn no_route_sends_cors_allowances() {
    let s = TestServer::start().await;
    let origin = "https://evil.example";
    let preflights = [
        "/v1/invoice/validate",
        "/api/validate",
        "/v1/rules",
        "/v1/keys",
        "/console/sign-in",
        "/health",
    ];
    for path in preflights {
        let r = s
            .client
            .request(Method::OPTIONS, s.url(path))
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "POST")
            .header("Access-Control-Request-Headers", "x-api-key, content-type")
            .send()
            .await
            .unwrap();
        let allowances: Vec<String> = r
            .headers()
            .keys()
            .map(|k| k.as_str().to_string())
            .filter(|k| k.starts_with("access-control-"))
            .collect();
        assert!(allowances.is_empty(), "OPTIONS {path}: {allowances:?}");
        assert_ne!(
            r.status(),
            204,
            "OPTIONS {path} looks like an accepted preflight"
        );
    }
    let requests = [
        s.v1(Method::GET, "/v1/rules", BOOTSTRAP),
        s.v1(Method::POST, "/v1/invoice/validate", BOOTSTRAP)
            .header("Content-Type", "application/xml")
            .body(crate::support::example("invoice-sk.xml")),
        s.client.get(s.url("/console/sign-in")),
        s.client.get(s.url("/openapi.json")),
    ];
    for request in requests {
        let r = request.header("Origin", origin).send().await.unwrap();
        let url = r.url().to_string();
        assert!(r.status().is_success(), "{url}: {}", r.status());
        let allowances: Vec<&str> = r
            .headers()
            .keys()
            .map(|k| k.as_str())
            .filter(|k| k.starts_with("access-control-"))
            .collect();
        assert!(allowances.is_empty(), "{url}: {allowances:?}");
    }
}
