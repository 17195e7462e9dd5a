//! The schema layer over HTTP (issue 17): an invoice whose Schematron rules all pass but
//! whose structure the UBL 2.1 schema refuses is invalid, in JSON, SVRL and the stored
//! result, and sending it ends in 422 with the schema finding, nothing queued.

use crate::support::{problem, JsonBody, TestServer, BOOTSTRAP};
use reqwest::Method;
use serde_json::Value;

/// The example invoice with cbc:DueDate moved after cbc:InvoiceTypeCode: every business
/// rule still holds (they do not look at the order), the schema does not.
fn misordered() -> Vec<u8> {
    let text = String::from_utf8(crate::support::example("invoice-sk.xml")).expect("utf8");
    let due = "  <cbc:DueDate>2026-11-16</cbc:DueDate>\n";
    let code = "  <cbc:InvoiceTypeCode>380</cbc:InvoiceTypeCode>\n";
    assert!(
        text.contains(&format!("{due}{code}")),
        "the example changed"
    );
    text.replace(&format!("{due}{code}"), &format!("{code}{due}"))
        .into_bytes()
}

const EXPECTED: &str =
    "cbc:DueDate is not expected after cbc:InvoiceTypeCode: expected cbc:Note | cbc:TaxPointDate";

#[tokio::test]
async fn a_misordered_invoice_is_invalid_with_the_schema_finding() {
    let s = TestServer::start().await;
    let r = s.validate(BOOTSTRAP, misordered()).await;
    assert_eq!(r.status(), 200);
    let id = r.headers()["invex-validation-id"]
        .to_str()
        .unwrap()
        .to_string();
    let report: Value = r.json().await.unwrap();
    assert_eq!(report["verdict"], "invalid", "{report}");
    assert_eq!(report["profile"], "peppol-bis3-sk@2027.2");
    assert_eq!(report["rules_version"][0], "ubl-2.1-xsd@2.1");
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "only the schema sees it: {report}");
    let f = &findings[0];
    assert_eq!(f["rule_id"], "UBL-XSD-UNEXPECTED");
    assert_eq!(f["layer"], "schema");
    assert_eq!(f["severity"], "fatal");
    assert_eq!(f["pack"], "ubl-2.1-xsd@2.1");
    assert_eq!(f["location"]["path"], "/ubl:Invoice/cbc:DueDate");
    assert_eq!(f["location"]["line"], 10);
    let message = f["message"].as_str().unwrap();
    assert!(message.starts_with(EXPECTED), "{message}");
    assert!(!f["remediation"].as_str().unwrap().is_empty());

    // The stored result, as SVRL.
    let svrl = s
        .v1(Method::GET, &format!("/v1/validations/{id}"), BOOTSTRAP)
        .header("Accept", "application/svrl+xml")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        svrl.contains(
            r#"<svrl:failed-assert id="UBL-XSD-UNEXPECTED" flag="fatal" location="/ubl:Invoice/cbc:DueDate""#
        ),
        "{svrl}"
    );

    // The example itself is schema-valid.
    let report: Value = s
        .validate(BOOTSTRAP, crate::support::example("invoice-sk.xml"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(report["verdict"], "valid", "{report}");
}

#[tokio::test]
async fn sending_a_schema_invalid_invoice_is_refused() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;

    let r = s
        .v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
        .header("Content-Type", "application/xml")
        .header("Idempotency-Key", "schema-invalid-1")
        .body(misordered())
        .send()
        .await
        .unwrap();
    let p = problem(r, 422).await;
    let findings = p["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{p}");
    assert_eq!(findings[0]["rule_id"], "UBL-XSD-UNEXPECTED");
    let invoice = p["invoice_id"].as_str().unwrap();
    let inv: Value = s
        .v1(Method::GET, &format!("/v1/invoices/{invoice}"), BOOTSTRAP)
        .value()
        .await;
    assert_eq!(inv["status"], "remediation_required", "{inv}");
}
