//! The JSON invoice over HTTP: UBL read as JSON, the JSON validated, sent and batched as the
//! UBL it stands for, its JSON Schema served, and JSON that cannot be read refused with
//! where and why.

use crate::support::{example, numbered, problem, zip_of, JsonBody, TestServer, BOOTSTRAP};
use reqwest::Method;
use serde_json::{json, Value};

const JSON_TYPE: &str = "application/vnd.invex.invoice+json";

async fn as_json(s: &TestServer, xml: Vec<u8>) -> Value {
    let r = s
        .v1(Method::POST, "/v1/invoice/json", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .body(xml)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], JSON_TYPE);
    r.json().await.unwrap()
}

async fn validate_json(s: &TestServer, content_type: &str, body: String) -> reqwest::Response {
    s.v1(Method::POST, "/v1/invoice/validate", BOOTSTRAP)
        .header("Content-Type", content_type)
        .body(body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn ubl_read_as_json_validates_and_reads_back_to_the_same_terms() {
    let s = TestServer::start().await;
    let invoice = as_json(&s, example("invoice-sk.xml")).await;
    assert_eq!(invoice["kind"], "invoice");
    assert!(invoice["number"].is_string());
    assert!(invoice["seller"]["vat_id"]
        .as_str()
        .unwrap()
        .starts_with("SK"));
    assert!(!invoice["lines"].as_array().unwrap().is_empty());
    // Amounts are decimal strings, never floats.
    assert!(invoice["totals"]["payable"].is_string());

    for content_type in [JSON_TYPE, "application/json"] {
        let r = validate_json(&s, content_type, invoice.to_string()).await;
        assert_eq!(r.status(), 200);
        let result: Value = r.json().await.unwrap();
        assert_eq!(result["verdict"], "valid", "{result}");
        assert_eq!(result["document"]["size_bytes"], invoice.to_string().len());
    }

    // A form part is a JSON invoice when it says so (its type, or a `.json` name); a part
    // that says nothing is XML.
    let part = |name: Option<&str>, mime: Option<&str>| {
        let mut p = reqwest::multipart::Part::bytes(invoice.to_string().into_bytes());
        if let Some(n) = name {
            p = p.file_name(n.to_string());
        }
        if let Some(m) = mime {
            p = p.mime_str(m).unwrap();
        }
        p
    };
    let form = reqwest::multipart::Form::new()
        .part("files[]", part(Some("invoice.json"), None))
        .part("files[]", part(None, Some(JSON_TYPE)))
        .part("files[]", part(Some("invoice.xml"), None));
    let r = s
        .api(Method::POST, "/api/validate", BOOTSTRAP)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let batch: Value = r.json().await.unwrap();
    assert_eq!(batch["results"].as_array().unwrap().len(), 2, "{batch}");
    assert_eq!(batch["results"][0]["verdict"], "valid");
    assert_eq!(batch["rejected"][0]["index"], 2);
    assert!(batch["rejected"][0]["problem"]["type"]
        .as_str()
        .unwrap()
        .ends_with("not-well-formed"));

    let credit_note = std::fs::read(
        crate::support::repo().join("server/src/artifacts/testdata/creditnote-sk.xml"),
    )
    .unwrap();
    let credit = as_json(&s, credit_note).await;
    assert_eq!(credit["kind"], "credit_note");
    let r = validate_json(&s, JSON_TYPE, credit.to_string()).await;
    let result: Value = r.json().await.unwrap();
    assert_eq!(result["verdict"], "valid", "{result}");
}

#[tokio::test]
async fn json_that_cannot_be_read_is_refused_with_where_and_why() {
    let s = TestServer::start().await;
    let r = validate_json(
        &s,
        JSON_TYPE,
        r#"{"number": "1", "lines": [{"quantity": 2}]}"#.into(),
    )
    .await;
    let p = problem(r, 422).await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("invalid-invoice-json"));
    assert_eq!(p["path"], "lines[0].quantity");
    assert_eq!(p["line"], 1);

    let r = validate_json(&s, "application/json", r#"{"numbr": "1"}"#.into()).await;
    let p = problem(r, 422).await;
    assert!(p["detail"]
        .as_str()
        .unwrap()
        .contains("unknown field `numbr`"));

    // An invoice with gaps is not refused: the rules say what is missing.
    let r = validate_json(&s, JSON_TYPE, r#"{"number": "1"}"#.into()).await;
    assert_eq!(r.status(), 200);
    let result: Value = r.json().await.unwrap();
    assert_eq!(result["verdict"], "invalid");
    assert!(result["findings"].as_array().unwrap().len() > 3);

    // What is not XML is not read as an invoice.
    let r = s
        .v1(Method::POST, "/v1/invoice/json", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .body("<Order><ID>1</ID></Order>")
        .send()
        .await
        .unwrap();
    let p = problem(r, 422).await;
    assert!(p["type"].as_str().unwrap().ends_with("not-an-invoice"));
    let r = s
        .v1(Method::POST, "/v1/invoice/json", BOOTSTRAP)
        .header("Content-Type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    problem(r, 415).await;
}

#[tokio::test]
async fn the_json_schema_is_served_without_a_key() {
    let s = TestServer::start().await;
    let r = s
        .client
        .get(s.url("/v1/schemas/invoice.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/schema+json");
    let schema: Value = r.json().await.unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["$ref"], "#/$defs/JsonInvoice");
    assert!(schema["$defs"]["JsonInvoice"]["properties"]["seller"].is_object());
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(crate::support::repo().join("docs/invoice.schema.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(schema["$defs"], committed["$defs"]);
}

#[tokio::test]
async fn a_json_invoice_is_sent_as_its_ubl_once_per_key() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let mut invoice = as_json(&s, example("invoice-sk.xml")).await;
    invoice["number"] = json!("JSON-0001");
    let send = || async {
        s.v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
            .header("Content-Type", JSON_TYPE)
            .header("Idempotency-Key", "json-send-1")
            .body(invoice.to_string())
            .send()
            .await
            .unwrap()
    };
    let r = send().await;
    assert_eq!(r.status(), 202, "{}", r.text().await.unwrap());
    let first: Value = r.json().await.unwrap();
    let again: Value = send().await.json().await.unwrap();
    assert_eq!(again["id"], first["id"]);

    // What was stored and sent is UBL with the JSON's terms.
    let id = first["id"].as_str().unwrap();
    let stored: Value = s
        .v1(Method::GET, &format!("/v1/invoices/{id}"), BOOTSTRAP)
        .value()
        .await;
    assert_eq!(stored["document_id"], "JSON-0001", "{stored}");
}

#[tokio::test]
async fn a_batch_takes_json_invoices_beside_ubl() {
    let s = TestServer::with(|c| {
        c.batches.poll_ms = 20;
    })
    .await;
    let invoice = as_json(&s, example("invoice-sk.xml")).await;
    let members = vec![
        ("one.json".to_string(), invoice.to_string().into_bytes()),
        (
            "two.xml".to_string(),
            numbered(example("invoice-sk.xml"), "FV-2"),
        ),
        ("three.json".to_string(), b"{\"lines\": 5}".to_vec()),
    ];
    let b = s
        .run_batch("mode=validate", "application/zip", zip_of(&members))
        .await;
    let id = b["id"].as_str().unwrap().to_string();
    assert_eq!(b["status"], "completed", "{b}");
    assert_eq!(b["counts"], json!({"valid": 2, "failed": 1}), "{b}");
    let third: Value = s
        .v1(
            Method::GET,
            &format!("/v1/batches/{id}/documents/3"),
            BOOTSTRAP,
        )
        .value()
        .await;
    assert!(
        third.to_string().contains("invalid-invoice-json"),
        "{third}"
    );
}

#[tokio::test]
async fn a_json_feed_is_a_batch_of_its_lines() {
    let s = TestServer::with(|c| {
        c.batches.poll_ms = 20;
    })
    .await;
    let invoice = as_json(&s, example("invoice-sk.xml")).await;
    let mut feed = String::new();
    for i in 1..=3 {
        let mut one = invoice.clone();
        one["number"] = json!(format!("FEED-{i}"));
        feed.push_str(&one.to_string());
        feed.push('\n');
    }
    feed.push_str("{\"number\": 7}\n\n");
    let r = s
        .v1(Method::POST, "/v1/batches", BOOTSTRAP)
        .header("Content-Type", "application/x-ndjson")
        .header("Idempotency-Key", "feed-2027-01-15")
        .body(feed.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let b = s.batch_finished(&id).await;
    assert_eq!(b["status"], "completed", "{b}");
    assert_eq!(b["documents"], 4);
    assert_eq!(b["counts"], json!({"valid": 3, "failed": 1}), "{b}");
    let page: Value = s
        .v1(
            Method::GET,
            &format!("/v1/batches/{id}/documents"),
            BOOTSTRAP,
        )
        .value()
        .await;
    let names: Vec<&str> = page["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["line 1", "line 2", "line 3", "line 4"]);
    let results = s
        .v1(Method::GET, &format!("/v1/batches/{id}/results"), BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let last: Value = serde_json::from_str(results.lines().last().unwrap()).unwrap();
    assert_eq!(last["outcome"], "failed");
    assert!(last.to_string().contains("lines") || last.to_string().contains("number"));

    // A feed is refused whole when a line is over the document limit.
    let s = TestServer::with(|c| {
        c.batches.poll_ms = 20;
        c.batches.max_document_bytes = 64;
    })
    .await;
    let b = s
        .run_batch("", "application/x-ndjson", feed.into_bytes())
        .await;
    assert_eq!(b["status"], "failed", "{b}");
    let error = b["error"].as_str().unwrap();
    assert!(error.contains("line 1 is longer than 64 bytes"), "{b}");
}

#[tokio::test]
async fn a_json_invoice_converts_to_its_ubl_ready_to_send() {
    let s = TestServer::start().await;
    let mut invoice = as_json(&s, example("invoice-sk.xml")).await;
    invoice["number"] = json!("JSON-CONV-1");
    let convert = |part: reqwest::multipart::Part| async {
        s.v1(Method::POST, "/v1/invoice/convert", BOOTSTRAP)
            .multipart(reqwest::multipart::Form::new().part("file", part))
            .send()
            .await
            .unwrap()
    };
    let part =
        reqwest::multipart::Part::bytes(invoice.to_string().into_bytes()).file_name("export.json");
    let r = convert(part).await;
    assert_eq!(r.status(), 201);
    let result: Value = r.json().await.unwrap();
    let conversion = &result["conversions"][0];
    assert_eq!(conversion["status"], "ready", "{conversion}");
    assert_eq!(conversion["input_format"], "json");
    let id = conversion["id"].as_str().unwrap();
    let xml = s
        .v1(Method::GET, &format!("/v1/conversions/{id}/xml"), BOOTSTRAP)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(xml.contains("<cbc:ID>JSON-CONV-1</cbc:ID>"));
    // The generated UBL reads back as the JSON it came from.
    let back = as_json(&s, xml.into_bytes()).await;
    assert_eq!(back, invoice);

    // JSON that does not say it is JSON is not guessed at.
    let part = reqwest::multipart::Part::bytes(invoice.to_string().into_bytes());
    problem(convert(part).await, 415).await;
    let part = reqwest::multipart::Part::bytes(b"{\"number\": 1}".to_vec())
        .mime_str(JSON_TYPE)
        .unwrap();
    let p = problem(convert(part).await, 422).await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("invalid-invoice-json"));
}
