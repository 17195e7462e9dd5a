//! Conversion over HTTP: CSV and Excel uploads (templates, encodings), the review gate
//! holding uncertain invoices, corrections, approval, and sending refusing what is not
//! approved — against the real server.

use crate::support::{problem, JsonBody, TestServer, BOOTSTRAP};
use reqwest::multipart::{Form, Part};
use reqwest::Method;
use serde_json::{json, Value};

const HEADER: &[&str] = &[
    "Invoice number",
    "Issue date",
    "Due date",
    "Currency",
    "Buyer reference",
    "Seller name",
    "Seller IČO",
    "Seller VAT ID",
    "Seller street",
    "Seller city",
    "Seller postcode",
    "Seller country",
    "Buyer name",
    "Buyer VAT ID",
    "Buyer street",
    "Buyer city",
    "Buyer postcode",
    "Buyer country",
    "Payment means",
    "IBAN",
    "Item name",
    "Quantity",
    "Unit",
    "Unit price",
    "VAT rate",
];

/// One line of an invoice; `number` groups rows, `iban` and `price` vary per test.
fn row(number: &str, item: &str, quantity: &str, price: &str, iban: &str) -> Vec<String> {
    [
        number,
        "15.01.2027",
        "2027-01-29",
        "EUR",
        "PO-4711",
        "Dodávateľ s.r.o.",
        "31322832",
        "SK2022749619",
        "Hlavná 1",
        "Žilina",
        "010 01",
        "SK",
        "Odberateľ a.s.",
        "SK2020317068",
        "Ľubovnianska 5",
        "Bratislava",
        "851 01",
        "SK",
        "30",
        iban,
        item,
        quantity,
        "ks",
        price,
        "23",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

const IBAN: &str = "SK3112000000198742637541";

fn csv(rows: &[Vec<String>], delimiter: &str) -> String {
    let mut out = HEADER.join(delimiter);
    out.push_str("\r\n");
    for r in rows {
        out.push_str(&r.join(delimiter));
        out.push_str("\r\n");
    }
    out
}

fn upload(name: &str, bytes: Vec<u8>) -> Form {
    Form::new().part("file", Part::bytes(bytes).file_name(name.to_string()))
}

async fn convert(s: &TestServer, key: &str, form: Form) -> reqwest::Response {
    s.v1(Method::POST, "/v1/invoice/convert", key)
        .multipart(form)
        .send()
        .await
        .unwrap()
}

/// A conversion that answers 201; its `Location` leads to what was created: the conversion
/// itself, or for several invoices the list of the upload's batch.
async fn converted(s: &TestServer, form: Form) -> Value {
    let r = convert(s, BOOTSTRAP, form).await;
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
    let location = r
        .headers()
        .get("location")
        .expect("201 names the created resource")
        .to_str()
        .unwrap()
        .to_string();
    let result: Value = r.json().await.unwrap();
    let mut created: Vec<&str> = result["conversions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    let found = s.v1(Method::GET, &location, BOOTSTRAP).value().await;
    let mut listed: Vec<&str> = match found["conversions"].as_array() {
        Some(list) => list.iter().map(|c| c["id"].as_str().unwrap()).collect(),
        None => vec![found["id"].as_str().unwrap()],
    };
    created.sort_unstable();
    listed.sort_unstable();
    assert_eq!(listed, created, "{location}");
    result
}

async fn send_conversion(s: &TestServer, id: &str, key: &str) -> reqwest::Response {
    s.v1(
        Method::POST,
        &format!("/v1/invoice/send?conversion_id={id}"),
        BOOTSTRAP,
    )
    .header("Idempotency-Key", key)
    .send()
    .await
    .unwrap()
}

fn field<'a>(conversion: &'a Value, path: &str) -> &'a Value {
    conversion["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("no field {path} in {conversion}"))
}

#[tokio::test]
async fn a_clean_csv_converts_to_valid_ubl_ready_to_send() {
    let s = TestServer::start().await;
    let body = csv(
        &[
            row("FV-1", "Konzultácie", "10", "45,50", IBAN),
            row("FV-1", "Kniha", "3", "12.99", IBAN),
            row("FV-2", "Školenie", "1", "1 200,00", IBAN),
        ],
        ";",
    );
    let result = converted(&s, upload("faktury.csv", body.into_bytes())).await;
    assert_eq!(result["environment"], "sandbox");
    let conversions = result["conversions"].as_array().unwrap();
    assert_eq!(conversions.len(), 2, "{result}");
    assert_eq!(result["ready"], 2, "{result}");
    let first = &conversions[0];
    assert_eq!(first["status"], "ready", "{first}");
    assert_eq!(first["document_id"], "FV-1");
    assert_eq!(first["validation"]["counts"]["fatal"], 0);
    assert_eq!(field(first, "lines[0].unit_price")["value"], "45.50");
    assert_eq!(field(first, "lines[0].unit")["value"], "H87");
    let source = &field(first, "seller.vat_id")["source"];
    assert_eq!(source["kind"], "cell");
    assert_eq!(source["row"], 2);
    assert_eq!(source["column"], "Seller VAT ID");
    // The generated XML is valid under peppol-bis3 when validated on its own.
    let xml = first["xml"].as_str().unwrap().to_string();
    assert!(xml.contains("<cbc:PayableAmount currencyID=\"EUR\">607.58</cbc:PayableAmount>"));
    let r = s
        .v1(
            Method::POST,
            "/v1/invoice/validate?profile=peppol-bis3",
            BOOTSTRAP,
        )
        .header("Content-Type", "application/xml")
        .body(xml)
        .send()
        .await
        .unwrap();
    let report: Value = r.json().await.unwrap();
    assert_eq!(report["verdict"], "valid", "{report}");
    assert_eq!(conversions[1]["document_id"], "FV-2");
    assert!(conversions[1]["xml"]
        .as_str()
        .unwrap()
        .contains("<cbc:PriceAmount currencyID=\"EUR\">1200</cbc:PriceAmount>"));
}

#[tokio::test]
async fn windows_1250_and_the_excel_template_convert_like_utf8() {
    let s = TestServer::start().await;
    let text = csv(&[row("FV-9", "Čistenie kobercov", "2", "30", IBAN)], ";");
    let (bytes, _, lossy) = encoding_rs::WINDOWS_1250.encode(&text);
    assert!(!lossy);
    let result = converted(&s, upload("export.csv", bytes.into_owned())).await;
    let c = &result["conversions"][0];
    assert_eq!(c["status"], "ready", "{c}");
    assert_eq!(field(c, "lines[0].name")["value"], "Čistenie kobercov");
    assert_eq!(field(c, "buyer.address.street")["value"], "Ľubovnianska 5");

    // The downloadable templates are themselves convertible invoices.
    for (path, name) in [
        ("/v1/invoice/convert/template.csv", "template.csv"),
        ("/v1/invoice/convert/template.xlsx", "template.xlsx"),
    ] {
        let r = s.v1(Method::GET, path, BOOTSTRAP).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let template = r.bytes().await.unwrap().to_vec();
        let result = converted(&s, upload(name, template)).await;
        let c = &result["conversions"][0];
        assert_eq!(c["input_format"], &name[9..], "{c}");
        assert_eq!(c["validation"]["counts"]["fatal"], 0, "{name}: {c}");
    }
    let mappings = s
        .v1(Method::GET, "/v1/invoice/convert/mappings", BOOTSTRAP)
        .value()
        .await;
    let ids: Vec<&str> = mappings["mappings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"generic") && ids.contains(&"sk-accounting"),
        "{ids:?}"
    );
}

#[tokio::test]
async fn an_invalid_iban_holds_the_invoice_until_corrected_approved_and_only_then_sent() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let bad_iban = "SK3112000000198742637542";
    let result = converted(
        &s,
        upload(
            "in.csv",
            csv(&[row("FV-7", "Servis", "1", "100", bad_iban)], ",").into_bytes(),
        ),
    )
    .await;
    let c = &result["conversions"][0];
    assert_eq!(c["status"], "needs_review", "{c}");
    let id = c["id"].as_str().unwrap().to_string();
    let reasons = c["reasons"].as_array().unwrap();
    let iban = reasons
        .iter()
        .find(|r| r["field"] == "payment.iban" && r["kind"] == "invalid_identifier")
        .unwrap_or_else(|| panic!("{reasons:?}"));
    assert_eq!(iban["location"], "row 2, column \"IBAN\"");

    // The review queue lists it.
    let queue = s
        .v1(
            Method::GET,
            "/v1/conversions?status=needs_review",
            BOOTSTRAP,
        )
        .value()
        .await;
    assert_eq!(queue["conversions"][0]["id"], id.as_str());

    // Neither by id nor as uploaded XML does it go out.
    let p = problem(send_conversion(&s, &id, "k1").await, 409).await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("conversion-not-approved"));
    assert_eq!(p["conversion_id"], id.as_str());
    let r = s
        .v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
        .header("Idempotency-Key", "k2")
        .header("Content-Type", "application/xml")
        .body(c["xml"].as_str().unwrap().to_string())
        .send()
        .await
        .unwrap();
    problem(r, 409).await;

    // An accountant corrects; a developer may not review.
    let (_, accountant) = s.create_key(BOOTSTRAP, "accountant").await;
    let (_, developer) = s.create_key(BOOTSTRAP, "developer").await;
    let fix = json!({"corrections": [{"path": "payment.iban", "value": IBAN}]});
    let r = s
        .v1(Method::PATCH, &format!("/v1/conversions/{id}"), &developer)
        .json(&fix)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let bad = json!({"corrections": [{"path": "issue_date", "value": "yesterday"}]});
    let r = s
        .v1(Method::PATCH, &format!("/v1/conversions/{id}"), &accountant)
        .json(&bad)
        .send()
        .await
        .unwrap();
    problem(r, 422).await;
    let corrected = s
        .v1(Method::PATCH, &format!("/v1/conversions/{id}"), &accountant)
        .json(&fix)
        .value()
        .await;
    assert_eq!(corrected["status"], "needs_review");
    assert_eq!(corrected["reasons"], json!([]));
    assert_eq!(field(&corrected, "payment.iban")["confidence"], 1.0);
    assert_eq!(corrected["changes"][0]["old"], bad_iban);
    problem(send_conversion(&s, &id, "k3").await, 409).await;

    let approved = s
        .v1(
            Method::POST,
            &format!("/v1/conversions/{id}/approve"),
            &accountant,
        )
        .json(&json!({"note": "IBAN checked against the contract"}))
        .value()
        .await;
    assert_eq!(approved["status"], "approved");
    assert!(approved["approved_by"]
        .as_str()
        .unwrap()
        .starts_with("key_"));

    let r = send_conversion(&s, &id, "k4").await;
    assert_eq!(r.status(), 202, "{}", r.text().await.unwrap());
    let sent: Value = r.json().await.unwrap();
    let invoice = sent["id"].as_str().unwrap();
    let after = s
        .v1(Method::GET, &format!("/v1/conversions/{id}"), BOOTSTRAP)
        .value()
        .await;
    assert_eq!(after["status"], "sent");
    assert_eq!(after["invoice_id"], invoice);

    // The evidence package carries the approval and the correction.
    let evidence = s
        .api(Method::GET, &format!("/api/evidence/{invoice}"), BOOTSTRAP)
        .value()
        .await;
    let approval = &evidence["approvals"][0];
    assert_eq!(approval["approved_by"], approved["approved_by"]);
    let what = approval["what"].as_str().unwrap();
    assert!(
        what.contains("payment.iban") && what.contains(bad_iban),
        "{what}"
    );
}

#[tokio::test]
async fn fatal_findings_block_approval_and_a_rejection_is_final() {
    let s = TestServer::start().await;
    let mut r = row("FV-8", "Servis", "1", "100", IBAN);
    r[12] = String::new(); // no buyer name: BR-07
    let result = converted(&s, upload("in.csv", csv(&[r], ",").into_bytes())).await;
    let c = &result["conversions"][0];
    assert_eq!(c["status"], "needs_review");
    assert!(c["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["kind"] == "fatal_finding" && r["location"] == "BR-07"));
    let id = c["id"].as_str().unwrap();
    let p = problem(
        s.v1(
            Method::POST,
            &format!("/v1/conversions/{id}/approve"),
            BOOTSTRAP,
        )
        .send()
        .await
        .unwrap(),
        409,
    )
    .await;
    assert!(p["type"]
        .as_str()
        .unwrap()
        .ends_with("conversion-has-fatal-findings"));
    let rejected = s
        .v1(
            Method::POST,
            &format!("/v1/conversions/{id}/reject"),
            BOOTSTRAP,
        )
        .json(&json!({"reason": "duplicate"}))
        .value()
        .await;
    assert_eq!(rejected["status"], "rejected");
    let r = s
        .v1(Method::PATCH, &format!("/v1/conversions/{id}"), BOOTSTRAP)
        .json(&json!({"corrections": [{"path": "buyer.name", "value": "X"}]}))
        .send()
        .await
        .unwrap();
    problem(r, 409).await;
    // Another tenant does not see it.
    let other = s
        .v1(Method::POST, "/v1/tenants", BOOTSTRAP)
        .json(&json!({"name": "other"}))
        .value()
        .await;
    let other_key = other["admin_key"]["key"].as_str().unwrap();
    let r = s
        .v1(Method::GET, &format!("/v1/conversions/{id}"), other_key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn the_legacy_route_answers_a_zip_when_ready_and_a_report_otherwise() {
    let s = TestServer::start().await;
    let ready = csv(
        &[
            row("FV-1", "A", "1", "10", IBAN),
            row("FV-2", "B", "2", "20", IBAN),
        ],
        ",",
    );
    let r = s
        .api(Method::POST, "/api/convert", BOOTSTRAP)
        .multipart(upload("a.csv", ready.clone().into_bytes()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/zip");
    let bytes = r.bytes().await.unwrap();
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).unwrap();
    let mut names: Vec<String> = zip
        .file_names()
        .map(|n| n.expect("an entry name").to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["FV-1.xml", "FV-2.xml"]);
    let mut xml = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("FV-2.xml").unwrap(), &mut xml).unwrap();
    assert!(xml.contains("<cbc:ID>FV-2</cbc:ID>"));

    // Accept: application/json always gives the report.
    let report = s
        .api(Method::POST, "/api/convert", BOOTSTRAP)
        .header("Accept", "application/json")
        .multipart(upload("a.csv", ready.into_bytes()))
        .send()
        .await
        .unwrap();
    assert_eq!(report.status(), 201);
    let report: Value = report.json().await.unwrap();
    assert_eq!(report["ready"], 2);

    let held = csv(
        &[
            row("FV-3", "A", "1", "10", IBAN),
            row("FV-4", "B", "1", "10", "SK00"),
        ],
        ",",
    );
    let r = s
        .api(Method::POST, "/api/convert", BOOTSTRAP)
        .multipart(upload("b.csv", held.clone().into_bytes()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let report: Value = r.json().await.unwrap();
    assert_eq!(report["needs_review"], 1, "{report}");
    assert_eq!(report["conversions"][1]["status"], "needs_review");
    assert!(report["conversions"][1]["links"]["review"]
        .as_str()
        .unwrap()
        .starts_with("/v1/conversions/conv_"));
    let r = s
        .api(Method::POST, "/api/convert", BOOTSTRAP)
        .header("Accept", "application/zip")
        .multipart(upload("b.csv", held.into_bytes()))
        .send()
        .await
        .unwrap();
    let p = problem(r, 422).await;
    assert_eq!(p["batch"]["needs_review"], 1);
}

#[tokio::test]
async fn unusable_uploads_are_clear_problems() {
    let s = TestServer::start().await;
    let r = convert(&s, BOOTSTRAP, upload("x.xml", b"<Invoice/>".to_vec())).await;
    let p = problem(r, 415).await;
    assert!(p["type"].as_str().unwrap().ends_with("unsupported-input"));
    let r = convert(
        &s,
        BOOTSTRAP,
        upload("x.csv", b"Name,Colour\r\nA,blue\r\n".to_vec()),
    )
    .await;
    let p = problem(r, 422).await;
    assert!(
        p["type"]
            .as_str()
            .unwrap()
            .ends_with("unreadable-spreadsheet"),
        "{p}"
    );
    let r = convert(
        &s,
        BOOTSTRAP,
        upload(
            "x.csv",
            csv(&[row("1", "A", "1", "1", IBAN)], ",").into_bytes(),
        )
        .text("mapping", "no-such-mapping"),
    )
    .await;
    let p = problem(r, 422).await;
    assert!(
        p["type"].as_str().unwrap().ends_with("invalid-mapping"),
        "{p}"
    );
    let r = s
        .v1(Method::POST, "/v1/invoice/convert", BOOTSTRAP)
        .multipart(Form::new().text("profile", "peppol-bis3"))
        .send()
        .await
        .unwrap();
    problem(r, 400).await;
}

/// The review gate holds a document by its business identity, not only by its bytes: an
/// edited copy of a held conversion (a newline appended, a comment added) is refused like the
/// conversion itself until a reviewer approves it. A later send of the same number is
/// accepted with a warning.
#[tokio::test]
async fn an_edited_copy_of_a_held_conversion_is_held_until_approved() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;
    let mut ambiguous = row("FV-9", "Servis", "1", "100", IBAN);
    ambiguous[1] = "03/04/2027".to_string();
    let result = converted(&s, upload("in.csv", csv(&[ambiguous], ",").into_bytes())).await;
    let c = &result["conversions"][0];
    assert_eq!(c["status"], "needs_review", "{c}");
    let id = c["id"].as_str().unwrap().to_string();
    let xml = c["xml"].as_str().unwrap().to_string();
    let (_, developer) = s.create_key(BOOTSTRAP, "developer").await;
    let send_xml = |body: String, key: &'static str| {
        s.v1(Method::POST, "/v1/invoice/send", &developer)
            .header("Idempotency-Key", key)
            .header("Content-Type", "application/xml")
            .body(body)
            .send()
    };
    let edited = [
        format!("{xml}\n"),
        xml.replacen("<cbc:IssueDate>", "<!-- checked --><cbc:IssueDate>", 1),
    ];
    for (copy, key) in edited.iter().zip(["e1", "e2"]) {
        let p = problem(send_xml(copy.clone(), key).await.unwrap(), 409).await;
        assert!(
            p["type"]
                .as_str()
                .unwrap()
                .ends_with("conversion-not-approved"),
            "{p}"
        );
        assert_eq!(p["conversion_id"], id.as_str());
    }
    let invoices = s
        .running
        .as_ref()
        .unwrap()
        .state
        .store
        .invoice_count("ten_operator");
    assert_eq!(invoices.await.unwrap(), 0, "nothing was stored for sending");

    let (_, accountant) = s.create_key(BOOTSTRAP, "accountant").await;
    let approved = s
        .v1(
            Method::POST,
            &format!("/v1/conversions/{id}/approve"),
            &accountant,
        )
        .json(&json!({"note": "the date is 3 April"}))
        .value()
        .await;
    assert_eq!(approved["status"], "approved");
    let r = send_xml(edited[0].clone(), "e3").await.unwrap();
    assert_eq!(r.status(), 202, "{}", r.text().await.unwrap());
    let first: Value = r.json().await.unwrap();
    assert!(first.get("warnings").is_none(), "{first}");
    let after = s
        .v1(Method::GET, &format!("/v1/conversions/{id}"), BOOTSTRAP)
        .value()
        .await;
    assert_eq!(after["status"], "sent");
    assert_eq!(after["invoice_id"], first["id"]);

    // The same seller, number and date again: a duplicate of the invoice sent, refused
    // with 409 naming it; sent only when the caller says it is deliberate, with a warning.
    let p = problem(send_xml(edited[1].clone(), "e4").await.unwrap(), 409).await;
    assert!(
        p["type"].as_str().unwrap().ends_with("duplicate-document"),
        "{p}"
    );
    assert_eq!(p["invoice_id"], first["id"], "{p}");
    let r = s
        .v1(
            Method::POST,
            "/v1/invoice/send?allow_duplicate=true",
            &developer,
        )
        .header("Idempotency-Key", "e5")
        .header("Content-Type", "application/xml")
        .body(edited[1].clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202, "{}", r.text().await.unwrap());
    let second: Value = r.json().await.unwrap();
    assert_eq!(
        second["warnings"][0]["code"], "duplicate-document",
        "{second}"
    );
    assert_eq!(second["warnings"][0]["invoices"], json!([first["id"]]));
}

/// An ISDOC export (detected by its content, whatever its name) converts with every value
/// read as written, the derived Peppol addresses marked so, and what UBL cannot carry
/// named in the conversion's notes; a clean one is ready to send.
#[tokio::test]
async fn an_isdoc_export_converts_exactly_and_is_ready() {
    let s = TestServer::start().await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/tests/data/isdoc");
    let isdoc = std::fs::read_to_string(dir.join("test001.isdoc"))
        .unwrap()
        .replace(
            "<IdentificationCode>CZ</IdentificationCode>",
            "<IdentificationCode>SK</IdentificationCode>",
        )
        .replace(
            "<CompanyID>CZ12345678</CompanyID>",
            "<CompanyID>SK2022749619</CompanyID>",
        )
        .replace(
            "<CompanyID>CZ11122233</CompanyID>",
            "<CompanyID>SK2020317068</CompanyID>",
        )
        // Slovak IČOs and an IBAN that pass their checks (the sample's are Czech dummies).
        .replace("<ID>12345678</ID>", "<ID>31322832</ID>")
        .replace("<ID>11122233</ID>", "<ID>36421928</ID>")
        .replace("<IBAN></IBAN>", "<IBAN>SK3112000000198742637541</IBAN>")
        .replace(
            "<DeliveryNoteReferences>",
            "<OrderReferences><OrderReference id=\"o\"><ExternalOrderID>PO-1</ExternalOrderID>\
             </OrderReference></OrderReferences><DeliveryNoteReferences>",
        );
    let result = converted(&s, upload("FV-1.xml", isdoc.into_bytes())).await;
    let c = &result["conversions"][0];
    assert_eq!(c["input_format"], "isdoc", "{c}");
    assert_eq!(c["status"], "ready", "{}", c["reasons"]);
    assert_eq!(c["document_id"], "FV-1/2021");
    let number = field(c, "number");
    assert_eq!(number["source"]["kind"], "structured");
    assert!(number["confidence"].as_f64().unwrap() >= 0.98);
    let endpoint = field(c, "seller.endpoint");
    assert_eq!(endpoint["value"], "0245:2022749619");
    assert_eq!(endpoint["source"]["kind"], "computed");
    let notes: Vec<&str> = c["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains("derived from its DIČ")),
        "{notes:?}"
    );
    let xml = c["xml"].as_str().unwrap();
    assert!(
        xml.contains("<cbc:PayableAmount currencyID=\"CZK\">6655</cbc:PayableAmount>"),
        "{xml}"
    );
    assert!(
        xml.contains("<cbc:PaymentID>10111</cbc:PaymentID>"),
        "{xml}"
    );

    // An ISDOC document type that has no EN 16931 counterpart is refused, saying why.
    let simplified = std::fs::read_to_string(dir.join("test001.isdoc"))
        .unwrap()
        .replace(
            "<DocumentType>1</DocumentType>",
            "<DocumentType>7</DocumentType>",
        );
    let r = convert(&s, BOOTSTRAP, upload("x.isdoc", simplified.into_bytes())).await;
    let p = crate::support::problem(r, 415).await;
    assert!(
        p["detail"]
            .as_str()
            .unwrap()
            .contains("simplified tax document"),
        "{p}"
    );
}

/// A POHODA export in Windows-1250 with several invoices: each issued one becomes a
/// conversion, read as written, ready when its UBL is valid; the received one is left out.
#[tokio::test]
async fn a_pohoda_data_pack_converts_each_issued_invoice() {
    let s = TestServer::start().await;
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../server/tests/data/pohoda/sk-2025.xml");
    let result = converted(&s, upload("export.xml", std::fs::read(file).unwrap())).await;
    let conversions = result["conversions"].as_array().unwrap();
    let seen: Vec<(&str, &str)> = conversions
        .iter()
        .map(|c| {
            (
                c["document_id"].as_str().unwrap(),
                c["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("FV2025001", "ready"),
            ("FV2025002", "ready"),
            ("DB2025001", "ready"),
            ("FV2025003", "ready"),
            ("VB2025001", "ready"),
            ("ZF2025001", "ready"),
            ("OD2025001", "ready"),
        ],
        "{}",
        conversions[0]["reasons"]
    );
    let first = &conversions[0];
    assert_eq!(first["input_format"], "pohoda");
    assert_eq!(field(first, "seller.name")["value"], "Dodávateľ s.r.o.");
    assert_eq!(field(first, "seller.name")["source"]["kind"], "structured");
    let xml = conversions[2]["xml"].as_str().unwrap();
    assert!(xml.contains("<CreditNote "), "{xml}");
    assert!(
        xml.contains("<cbc:PayableAmount currencyID=\"EUR\">111.93</cbc:PayableAmount>"),
        "{xml}"
    );
}
