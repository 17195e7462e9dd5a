//! Batches over HTTP: a ZIP of documents taken at once (202), split and validated in the
//! background, progress and outcomes page by page, every result as NDJSON, the webhook
//! events (one per document to correct, one at the end), idempotency, and the refusals.

use std::time::{Duration, Instant};

use crate::support::receiver::Receiver;
use crate::support::{example, invalid_invoice, numbered, zip_of, JsonBody, TestServer, BOOTSTRAP};
use reqwest::Method;
use serde_json::{json, Value};

/// 30 valid invoices, 5 invalid ones and one file that is no XML.
fn mixed() -> Vec<(String, Vec<u8>)> {
    let mut m: Vec<(String, Vec<u8>)> = (1..=30)
        .map(|i| {
            (
                format!("invoices/FV-{i:03}.xml"),
                numbered(example("invoice-sk.xml"), &format!("FV-{i:03}")),
            )
        })
        .collect();
    for i in 1..=5 {
        m.push((format!("invoices/bad-{i}.xml"), invalid_invoice()));
    }
    m.push(("readme.txt".into(), b"not an invoice".to_vec()));
    m
}

async fn submit(s: &TestServer, zip: Vec<u8>, key: Option<&str>) -> reqwest::Response {
    let mut r = s
        .v1(Method::POST, "/v1/batches?mode=validate", BOOTSTRAP)
        .header("Content-Type", "application/zip")
        .body(zip);
    if let Some(k) = key {
        r = r.header("Idempotency-Key", k);
    }
    r.send().await.unwrap()
}

/// A batch whose upload is still arriving (as a server stopped under it leaves it).
fn uploading(id: &str, key: Option<&str>, created_at: String) -> invex_server::store::BatchRecord {
    invex_server::store::BatchRecord {
        id: id.into(),
        tenant_id: invex_server::store::OPERATOR_TENANT_ID.into(),
        environment: "sandbox".into(),
        mode: "validate".into(),
        profile: None,
        rules_at: "2027-01-15".into(),
        input_sha256: String::new(),
        input_bytes: 0,
        status: "uploading".into(),
        documents: 0,
        done: 0,
        error: None,
        idempotency_key: key.map(str::to_string),
        created_at,
        started_at: None,
        finished_at: None,
        input_name: None,
        input_kind: None,
        keep_input: false,
    }
}

/// A receiver subscribed (with the bootstrap key) to the batch events.
async fn batch_events(s: &TestServer) -> Receiver {
    let receiver = Receiver::scripted(&[]);
    let hook = receiver.serve().await;
    let r = s
        .v1(Method::POST, "/v1/webhooks", BOOTSTRAP)
        .json(
            &json!({"url": hook, "event_types": ["batch.completed", "batch.remediation_required"]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
    receiver
}

/// The names of the documents of batch `id` with `outcome`, in upload order.
async fn names_with(s: &TestServer, id: &str, outcome: &str) -> Vec<String> {
    let page: Value = s
        .v1(
            Method::GET,
            &format!("/v1/batches/{id}/documents?outcome={outcome}"),
            BOOTSTRAP,
        )
        .value()
        .await;
    page["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_string())
        .collect()
}

fn fast(c: &mut invex_server::config::Config) {
    c.batches.poll_ms = 20;
    c.batches.claim = 8;
    c.webhooks.poll_interval_ms = 20;
}

#[tokio::test]
async fn a_zip_of_invoices_is_validated_in_the_background_with_its_outcomes_and_events() {
    let s = TestServer::with(fast).await;
    let receiver = batch_events(&s).await;

    let r = submit(&s, zip_of(&mixed()), Some("nightly-2027-01-15")).await;
    assert_eq!(r.status(), 202);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let accepted: Value = r.json().await.unwrap();
    let id = accepted["id"].as_str().unwrap().to_string();
    assert_eq!(location, format!("/v1/batches/{id}"));
    assert!(["received", "processing"].contains(&accepted["status"].as_str().unwrap()));
    assert_eq!(accepted["environment"], "sandbox");

    let b = s.batch_finished(&id).await;
    assert_eq!(b["status"], "completed", "{b}");
    assert_eq!(b["documents"], 36);
    assert_eq!(b["done"], 36);
    assert_eq!(b["counts"], json!({"valid": 30, "invalid": 5, "failed": 1}));
    assert!(b["rate_per_second"].as_f64().unwrap() > 0.0);
    assert!(b["finished_at"].is_string());

    // The same upload with the same key: the batch it made, not a second one.
    let again = submit(&s, zip_of(&mixed()), Some("nightly-2027-01-15")).await;
    assert_eq!(again.status(), 200);
    assert_eq!(again.json::<Value>().await.unwrap()["id"], id.as_str());

    // Outcomes page by page in upload order, filtered, and one document whole.
    let page: Value = s
        .v1(
            Method::GET,
            &format!("/v1/batches/{id}/documents?limit=10"),
            BOOTSTRAP,
        )
        .value()
        .await;
    let seqs: Vec<i64> = page["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=10).collect::<Vec<_>>());
    assert_eq!(page["documents"][0]["name"], "invoices/FV-001.xml");
    assert_eq!(page["next_after"], 10);
    assert!(
        page["documents"][0].get("result").is_none(),
        "pages carry no reports"
    );
    let next: Value = s
        .v1(
            Method::GET,
            &format!("/v1/batches/{id}/documents?limit=10&after=10"),
            BOOTSTRAP,
        )
        .value()
        .await;
    assert_eq!(next["documents"][0]["seq"], 11);
    let names = names_with(&s, &id, "invalid").await;
    assert_eq!(
        names,
        [
            "invoices/bad-1.xml",
            "invoices/bad-2.xml",
            "invoices/bad-3.xml",
            "invoices/bad-4.xml",
            "invoices/bad-5.xml"
        ]
    );
    let one: Value = s
        .v1(
            Method::GET,
            &format!("/v1/batches/{id}/documents/31"),
            BOOTSTRAP,
        )
        .value()
        .await;
    assert_eq!(one["outcome"], "invalid");
    assert_eq!(one["result"]["verdict"], "invalid");
    assert!(one["result"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["severity"] == "fatal"));
    let txt: Value = s
        .v1(
            Method::GET,
            &format!("/v1/batches/{id}/documents/36"),
            BOOTSTRAP,
        )
        .value()
        .await;
    assert_eq!(txt["outcome"], "failed");
    assert!(txt["result"]["problem"]["detail"].is_string(), "{txt}");

    // Every result as NDJSON.
    let r = s
        .v1(Method::GET, &format!("/v1/batches/{id}/results"), BOOTSTRAP)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/x-ndjson");
    let text = r.text().await.unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 36);
    assert_eq!(lines[0]["seq"], 1);
    assert_eq!(lines[0]["result"]["verdict"], "valid");

    // The same as a ZIP: a report or the errors per document, and the batch.
    let r = s
        .v1(Method::GET, &format!("/v1/batches/{id}/results"), BOOTSTRAP)
        .header("Accept", "application/zip")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/zip");
    let bytes = r.bytes().await.unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    assert_eq!(zip.len(), 37);
    let names: Vec<String> = (0..zip.len())
        .map(|i| zip.by_index(i).unwrap().name().unwrap().to_string())
        .collect();
    assert_eq!(names[0], "batch.json");
    assert_eq!(names[1], "000001_invoices_FV-001.xml.report.json");
    assert_eq!(names[31], "000031_invoices_bad-1.xml.errors.json");
    assert_eq!(names[36], "000036_readme.txt.errors.json");
    let mut errors = String::new();
    std::io::Read::read_to_string(&mut zip.by_index(31).unwrap(), &mut errors).unwrap();
    let errors: Value = serde_json::from_str(&errors).unwrap();
    assert_eq!(errors["outcome"], "invalid");
    assert!(!errors["result"]["findings"].as_array().unwrap().is_empty());
    let mut summary = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("batch.json").unwrap(), &mut summary).unwrap();
    let summary: Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(
        summary["counts"],
        json!({"valid": 30, "invalid": 5, "failed": 1})
    );

    // The events: one per document to correct, one at the end (after them all).
    let got = receiver.wait_for(7).await;
    let types: Vec<String> = got
        .iter()
        .map(|r| r.json()["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        types
            .iter()
            .filter(|t| *t == "batch.remediation_required")
            .count(),
        6,
        "{types:?}"
    );
    let done: Vec<Value> = got
        .iter()
        .map(|r| r.json())
        .filter(|e| e["type"] == "batch.completed")
        .collect();
    assert_eq!(done.len(), 1);
    assert_eq!(
        done[0]["data"]["counts"],
        json!({"valid": 30, "invalid": 5, "failed": 1})
    );
    assert_eq!(
        done[0]["data"]["links"]["results"],
        format!("/v1/batches/{id}/results")
    );
    let bad = got
        .iter()
        .map(|r| r.json())
        .find(|e| e["data"]["document"]["name"] == "invoices/bad-1.xml")
        .expect("an event for bad-1.xml");
    assert_eq!(bad["data"]["document"]["seq"], 31);
    assert!(!bad["data"]["findings"].as_array().unwrap().is_empty());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.received().len(), 7, "no event twice");
}

#[tokio::test]
async fn unreadable_uploads_fail_whole_and_the_limits_and_tenants_hold() {
    let s = TestServer::with(|c| {
        fast(c);
        c.batches.max_bytes = 64 * 1024;
        c.batches.max_documents = 3;
    })
    .await;
    // Not a ZIP: taken (it is only read in the background), then failed with the reason.
    let r = submit(&s, b"PK not really".to_vec(), None).await;
    assert_eq!(r.status(), 202);
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let b = s.batch_finished(&id).await;
    assert_eq!(b["status"], "failed");
    assert!(
        b["error"].as_str().unwrap().contains("not a readable ZIP"),
        "{b}"
    );
    // More documents than allowed: failed, none of them processed.
    let four: Vec<(String, Vec<u8>)> = (1..=4)
        .map(|i| (format!("{i}.xml"), example("invoice-sk.xml")))
        .collect();
    let r = submit(&s, zip_of(&four), None).await;
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let b = s.batch_finished(&id).await;
    assert_eq!(b["status"], "failed");
    assert!(
        b["error"]
            .as_str()
            .unwrap()
            .contains("more than 3 documents"),
        "{b}"
    );
    assert_eq!(b["done"], 0);

    // Refused before anything is stored: the content type, the size, an empty body, a bad
    // profile.
    let r = s
        .v1(Method::POST, "/v1/batches", BOOTSTRAP)
        .header("Content-Type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 415);
    let r = submit(&s, vec![b'x'; 70 * 1024], None).await;
    assert_eq!(r.status(), 413);
    let r = submit(&s, Vec::new(), None).await;
    assert_eq!(r.status(), 400);
    let r = s
        .v1(Method::POST, "/v1/batches?profile=nonesuch", BOOTSTRAP)
        .header("Content-Type", "application/zip")
        .body(zip_of(&four[..1]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400, "{}", r.text().await.unwrap());

    // Another tenant sees nothing of it; the /api family answers the same batch.
    let tenant: Value = s
        .v1(Method::POST, "/v1/tenants", BOOTSTRAP)
        .json(&json!({"name": "Iná firma"}))
        .value()
        .await;
    let other = tenant["admin_key"]["key"]
        .as_str()
        .expect("the new tenant's key");
    for path in [
        format!("/v1/batches/{id}"),
        format!("/v1/batches/{id}/results"),
    ] {
        let r = s.v1(Method::GET, &path, other).send().await.unwrap();
        assert_eq!(r.status(), 404, "{path}");
    }
    let r = s
        .api(Method::GET, &format!("/api/batches/{id}"), BOOTSTRAP)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn a_retry_takes_the_place_of_an_upload_that_never_arrived_whole() {
    let s = TestServer::with(fast).await;
    // The server stopped under an upload: its batch is still `uploading`.
    let store = &s.running.as_ref().unwrap().state.store;
    let stale = uploading("batch_stale", Some("export-42"), invex_server::clock::now());
    store.insert_batch(&stale).await.unwrap();
    store
        .insert_batch_chunk("batch_stale", 0, "cGFydA==")
        .await
        .unwrap();
    // The client retries with its key: a new upload, processed whole.
    let one = vec![("one.xml".to_string(), example("invoice-sk.xml"))];
    let r = submit(&s, zip_of(&one), Some("export-42")).await;
    assert_eq!(r.status(), 202);
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(id, "batch_stale");
    let b = s.batch_finished(&id).await;
    assert_eq!(b["counts"], json!({"valid": 1}));
    let gone = s
        .v1(Method::GET, "/v1/batches/batch_stale", BOOTSTRAP)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    // And the key answers that batch from now on.
    let again = submit(&s, zip_of(&one), Some("export-42")).await;
    assert_eq!(again.status(), 200);
    assert_eq!(again.json::<Value>().await.unwrap()["id"], id.as_str());
}

#[tokio::test]
async fn an_upload_abandoned_for_longer_than_its_limit_is_deleted_with_its_pieces() {
    let s = TestServer::with(|c| {
        fast(c);
        c.batches.abandoned_upload_secs = 1;
    })
    .await;
    let store = &s.running.as_ref().unwrap().state.store;
    let old = invex_server::clock::format(chrono::Utc::now() - chrono::Duration::hours(2));
    store
        .insert_batch(&uploading("batch_abandoned", None, old))
        .await
        .unwrap();
    store
        .insert_batch_chunk("batch_abandoned", 0, "cGFydA==")
        .await
        .unwrap();
    // A finished batch of the same age stays.
    let one = vec![("one.xml".to_string(), example("invoice-sk.xml"))];
    let r = submit(&s, zip_of(&one), None).await;
    let kept = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    s.batch_finished(&kept).await;
    let start = Instant::now();
    while store
        .batch(invex_server::store::OPERATOR_TENANT_ID, "batch_abandoned")
        .await
        .unwrap()
        .is_some()
    {
        assert!(start.elapsed() < Duration::from_secs(30), "still there");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(store
        .batch_chunks("batch_abandoned", 0, 8)
        .await
        .unwrap()
        .is_empty());
    let b: Value = s
        .v1(Method::GET, &format!("/v1/batches/{kept}"), BOOTSTRAP)
        .value()
        .await;
    assert_eq!(b["status"], "completed");
}

#[tokio::test]
async fn a_convert_batch_makes_conversions_through_the_review_gate() {
    let s = TestServer::with(fast).await;
    let invoice: Value = s
        .v1(Method::POST, "/v1/invoice/json", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .body(example("invoice-sk.xml"))
        .value()
        .await;
    let mut held = invoice.clone();
    // An IBAN that fails its check digits: the gate holds the conversion.
    held["number"] = json!("FV-HELD");
    held["payment_means"][0]["account_id"] = json!("SK3112000000198742637542");
    let members = vec![
        ("ready.json".to_string(), invoice.to_string().into_bytes()),
        ("held.json".to_string(), held.to_string().into_bytes()),
        ("broken.csv".to_string(), b"\x00\x01not a table".to_vec()),
    ];
    let b = s
        .run_batch("mode=convert", "application/zip", zip_of(&members))
        .await;
    let id = b["id"].as_str().unwrap().to_string();
    assert_eq!(b["mode"], "convert");
    assert_eq!(
        b["counts"],
        json!({"ready": 1, "needs_review": 1, "failed": 1}),
        "{b}"
    );
    let ready: Value = s
        .v1(
            Method::GET,
            &format!("/v1/batches/{id}/documents/1"),
            BOOTSTRAP,
        )
        .value()
        .await;
    let conversion = ready["result"]["conversions"][0]["id"].as_str().unwrap();
    let c: Value = s
        .v1(
            Method::GET,
            &format!("/v1/conversions/{conversion}"),
            BOOTSTRAP,
        )
        .value()
        .await;
    assert_eq!(c["status"], "ready", "{c}");
    let listed: Value = s
        .v1(
            Method::GET,
            &format!("/v1/conversions?batch_id={id}"),
            BOOTSTRAP,
        )
        .value()
        .await;
    let statuses: Vec<&str> = listed["conversions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.len(), 2, "{listed}");
    assert!(statuses.contains(&"needs_review"));

    // The results ZIP carries each conversion's UBL beside the document's result.
    let r = s
        .v1(Method::GET, &format!("/v1/batches/{id}/results"), BOOTSTRAP)
        .header("Accept", "application/zip")
        .send()
        .await
        .unwrap();
    let bytes = r.bytes().await.unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    let names: Vec<String> = (0..zip.len())
        .map(|i| zip.by_index(i).unwrap().name().unwrap().to_string())
        .collect();
    let ubl = format!("000001_ready.json.{conversion}.xml");
    assert!(
        names.contains(&"000001_ready.json.report.json".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"000002_held.json.errors.json".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"000003_broken.csv.errors.json".to_string()),
        "{names:?}"
    );
    let mut xml = String::new();
    std::io::Read::read_to_string(&mut zip.by_name(&ubl).unwrap(), &mut xml).unwrap();
    assert!(xml.contains("<cbc:CustomizationID>"), "{xml}");
    assert_eq!(names.len(), 1 + 3 + 2, "{names:?}");
}

/// `n` invoices of the example, numbered `{prefix}-001`…, as ZIP members.
fn invoices(prefix: &str, n: usize) -> Vec<(String, Vec<u8>)> {
    (1..=n)
        .map(|i| {
            let number = format!("{prefix}-{i:03}");
            (
                format!("{number}.xml"),
                numbered(example("invoice-sk.xml"), &number),
            )
        })
        .collect()
}

/// The sent invoices of the bootstrap tenant, newest first.
async fn invoices_sent(s: &TestServer) -> Vec<Value> {
    let list: Value = s
        .v1(Method::GET, "/v1/invoices?limit=100", BOOTSTRAP)
        .value()
        .await;
    list["invoices"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_send_batch_checks_every_identifier_before_anything_is_sent() {
    let s = TestServer::with(fast).await;
    let body = zip_of(&invoices("NC", 2));
    // Sending needs an activated connection: refused before the upload is read.
    let r = s
        .v1(Method::POST, "/v1/batches?mode=send", BOOTSTRAP)
        .header("Content-Type", "application/zip")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    let p: Value = r.json().await.unwrap();
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("no-active-connection"));
    s.sandbox_connection().await;
    let receiver = batch_events(&s).await;

    // Ten good invoices and two whose identifiers fail: a wrong IBAN check digit, and a
    // seller electronic address (a Slovak VAT id) whose number fails its check.
    let mut members = invoices("FV-B", 10);
    let text = |n: &str| String::from_utf8(numbered(example("invoice-sk.xml"), n)).unwrap();
    members.push((
        "iban.xml".into(),
        text("FV-B-IBAN")
            .replace("SK3112000000198742637541", "SK3112000000198742637542")
            .into_bytes(),
    ));
    members.push((
        "endpoint.xml".into(),
        text("FV-B-EP")
            .replacen(
                ">SK2022749619</cbc:EndpointID>",
                ">SK2022749618</cbc:EndpointID>",
                1,
            )
            .into_bytes(),
    ));
    let b = s
        .run_batch("mode=send", "application/zip", zip_of(&members))
        .await;
    let id = b["id"].as_str().unwrap().to_string();
    assert_eq!(b["status"], "refused", "{b}");
    assert_eq!(b["counts"], json!({"refused": 2, "withheld": 10}), "{b}");
    assert!(
        b["error"].as_str().unwrap().starts_with("2 document(s)"),
        "{b}"
    );
    assert!(
        invoices_sent(&s).await.is_empty(),
        "nothing of a refused batch is sent"
    );
    // The answer lists each failure by document.
    let names = names_with(&s, &id, "refused").await;
    assert_eq!(names, ["iban.xml", "endpoint.xml"]);
    let doc: Value = s
        .v1(
            Method::GET,
            &format!("/v1/batches/{id}/documents/11"),
            BOOTSTRAP,
        )
        .value()
        .await;
    assert_eq!(
        doc["result"]["identifiers"][0]["business_term"], "BT-84",
        "{doc}"
    );
    let events = receiver.wait_for(3).await;
    let completed: Vec<Value> = events
        .iter()
        .map(|e| e.json())
        .filter(|e| e["type"] == "batch.completed")
        .collect();
    assert_eq!(completed.len(), 1);
    assert_eq!(completed[0]["data"]["status"], "refused");
    assert_eq!(completed[0]["data"]["failures"][1]["name"], "endpoint.xml");
    assert_eq!(
        completed[0]["data"]["failures"][1]["identifiers"][0]["business_term"],
        "BT-34"
    );

    // Corrected and submitted again: every document is sent once, the one with fatal
    // findings kept in the remediation flow; the same key answers the same batch.
    let mut members = invoices("FV-B", 12);
    members.push(("bad.xml".into(), invalid_invoice()));
    let submit_send = |key: &'static str| {
        s.v1(Method::POST, "/v1/batches?mode=send", BOOTSTRAP)
            .header("Content-Type", "application/zip")
            .header("Idempotency-Key", key)
            .body(zip_of(&members))
            .send()
    };
    let r = submit_send("corrected").await.unwrap();
    assert_eq!(r.status(), 202);
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let b = s.batch_finished(&id).await;
    assert_eq!(b["status"], "completed", "{b}");
    assert_eq!(
        b["counts"],
        json!({"queued": 12, "remediation_required": 1}),
        "{b}"
    );
    let sent = invoices_sent(&s).await;
    assert_eq!(sent.len(), 13);
    let doc: Value = s
        .v1(
            Method::GET,
            &format!("/v1/batches/{id}/documents/1"),
            BOOTSTRAP,
        )
        .value()
        .await;
    let invoice = doc["result"]["id"].as_str().unwrap();
    assert!(sent.iter().any(|i| i["id"] == invoice), "{doc}");
    assert_eq!(doc["result"]["document_id"], "FV-B-001");
    // The results ZIP carries the UBL of each invoice a document made.
    let r = s
        .v1(Method::GET, &format!("/v1/batches/{id}/results"), BOOTSTRAP)
        .header("Accept", "application/zip")
        .send()
        .await
        .unwrap();
    let bytes = r.bytes().await.unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    let mut xml = String::new();
    std::io::Read::read_to_string(
        &mut zip
            .by_name(&format!("000001_FV-B-001.xml.{invoice}.xml"))
            .unwrap(),
        &mut xml,
    )
    .unwrap();
    assert!(xml.contains("<cbc:ID>FV-B-001</cbc:ID>"), "{xml}");
    assert!(zip.by_name("000013_bad.xml.errors.json").is_ok());
    assert_eq!(zip.len(), 1 + 13 + 13);
    let again = submit_send("corrected").await.unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(again.json::<Value>().await.unwrap()["id"], id.as_str());

    // The same invoices in a new batch: already sent, so not sent again.
    let b = s
        .run_batch("mode=send", "application/zip", zip_of(&invoices("FV-B", 3)))
        .await;
    assert_eq!(b["counts"], json!({"failed": 3}), "{b}");
    let doc: Value = s
        .v1(
            Method::GET,
            &format!("/v1/batches/{}/documents/1", b["id"].as_str().unwrap()),
            BOOTSTRAP,
        )
        .value()
        .await;
    assert!(doc["result"]["problem"]["type"]
        .as_str()
        .unwrap()
        .ends_with("duplicate-document"));
    assert_eq!(invoices_sent(&s).await.len(), 13);
}
