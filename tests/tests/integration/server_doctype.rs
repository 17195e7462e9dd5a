//! Documents that are not invoices of a type a profile takes: HTML, a bare element and a
//! CII invoice are invalid (`INVEX-DOCTYPE`), in JSON, SVRL and stored results, and
//! sending them ends in 422 without anything being queued or delivered.

use std::time::Duration;

use crate::support::{problem, JsonBody, TestServer, BOOTSTRAP};
use reqwest::Method;
use serde_json::Value;

const CII_NS: &str = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100";
const UBL_INVOICE: &str = "{urn:oasis:names:specification:ubl:schema:xsd:Invoice-2}Invoice";

fn cii() -> String {
    format!(
        "<rsm:CrossIndustryInvoice xmlns:rsm='{CII_NS}' \
         xmlns:ram='urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100'>\
         <rsm:ExchangedDocument><ram:ID>INV-1</ram:ID></rsm:ExchangedDocument>\
         </rsm:CrossIndustryInvoice>"
    )
}

/// (document, the document element as the finding names it).
fn documents() -> Vec<(String, String)> {
    vec![
        (
            "<html><body>hello</body></html>".to_string(),
            "html (no namespace)".to_string(),
        ),
        ("<a/>".to_string(), "a (no namespace)".to_string()),
        (cii(), format!("{{{CII_NS}}}CrossIndustryInvoice")),
    ]
}

async fn validate(s: &TestServer, query: &str, xml: &str, accept: &str) -> reqwest::Response {
    s.v1(
        Method::POST,
        &format!("/v1/invoice/validate{query}"),
        BOOTSTRAP,
    )
    .header("Content-Type", "application/xml")
    .header("Accept", accept)
    .body(xml.to_string())
    .send()
    .await
    .unwrap()
}

/// The one finding of `report`, which must be INVEX-DOCTYPE naming `root`.
fn the_doctype_finding<'a>(report: &'a Value, root: &str) -> &'a Value {
    assert_eq!(report["verdict"], "invalid", "{report}");
    let findings = report["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{report}");
    let f = &findings[0];
    assert_eq!(f["rule_id"], "INVEX-DOCTYPE");
    assert_eq!(f["severity"], "fatal");
    assert_eq!(f["location"]["path"], "/");
    let message = f["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("The document element {root}")),
        "{message}"
    );
    assert!(!f["remediation"].as_str().unwrap().is_empty());
    f
}

#[tokio::test]
async fn documents_no_profile_takes_are_invalid_with_invex_doctype() {
    let s = TestServer::start().await;
    for (xml, root) in documents() {
        // Detection: no installed profile takes the document.
        let r = validate(&s, "", &xml, "application/json").await;
        assert_eq!(r.status(), 200);
        let report: Value = r.json().await.unwrap();
        let f = the_doctype_finding(&report, &root);
        let message = f["message"].as_str().unwrap();
        assert!(message.contains("any installed profile"), "{message}");
        assert!(message.contains(UBL_INVOICE), "{message}");
        assert_eq!(report["profile"], "none");
        assert!(
            report["detection"]
                .as_str()
                .unwrap()
                .contains("no installed profile takes the document element"),
            "{report}"
        );
        if root.contains("CrossIndustryInvoice") {
            assert!(
                message.contains("CII is recognised but not supported yet"),
                "{message}"
            );
            assert!(message.contains("UBL 2.1"), "{message}");
        }
        // Stored as answered.
        let stored: Value = s
            .v1(
                Method::GET,
                &format!("/v1/validations/{}", report["id"].as_str().unwrap()),
                BOOTSTRAP,
            )
            .value()
            .await;
        assert_eq!(stored["findings"], report["findings"]);
        assert_eq!(stored["verdict"], "invalid");

        // A named profile refuses it as well, naming what it takes.
        let r = validate(&s, "?profile=peppol-bis3", &xml, "application/json").await;
        assert_eq!(r.status(), 200);
        let report: Value = r.json().await.unwrap();
        let f = the_doctype_finding(&report, &root);
        let message = f["message"].as_str().unwrap();
        assert!(
            message.contains("profile peppol-bis3@2026.11 validates"),
            "{message}"
        );
        assert!(message.contains(UBL_INVOICE), "{message}");
        assert_eq!(report["profile"], "peppol-bis3@2026.11");

        // SVRL carries the same finding.
        let r = validate(&s, "", &xml, "application/svrl+xml").await;
        assert_eq!(r.status(), 200);
        let svrl = r.text().await.unwrap();
        assert!(
            svrl.contains(r#"<svrl:failed-assert id="INVEX-DOCTYPE" flag="fatal" location="/""#),
            "{svrl}"
        );
    }
}

#[tokio::test]
async fn invoices_still_validate_as_before() {
    let s = TestServer::start().await;
    let xml = String::from_utf8(crate::support::example("invoice-sk.xml")).unwrap();
    let r = validate(&s, "", &xml, "application/json").await;
    let report: Value = r.json().await.unwrap();
    assert_eq!(report["verdict"], "valid", "{report}");
    assert_eq!(report["profile"], "peppol-bis3-sk@2027.2");
}

#[tokio::test]
async fn sending_documents_no_profile_takes_is_refused_and_nothing_is_delivered() {
    let s = TestServer::start().await;
    s.sandbox_connection().await;

    let mut invoices = Vec::new();
    for (n, (xml, root)) in documents().into_iter().enumerate() {
        let r = s
            .v1(Method::POST, "/v1/invoice/send", BOOTSTRAP)
            .header("Content-Type", "application/xml")
            .header("Idempotency-Key", format!("doctype-{n}"))
            .body(xml)
            .send()
            .await
            .unwrap();
        let p = problem(r, 422).await;
        assert!(
            p["type"]
                .as_str()
                .unwrap()
                .ends_with("#remediation-required"),
            "{p}"
        );
        let findings = p["findings"].as_array().unwrap();
        assert_eq!(findings.len(), 1, "{p}");
        assert_eq!(findings[0]["rule_id"], "INVEX-DOCTYPE");
        assert!(
            findings[0]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("The document element {root}")),
            "{p}"
        );
        invoices.push(p["invoice_id"].as_str().unwrap().to_string());
    }
    // Give the delivery worker and the sandbox partner time to act, were anything queued.
    tokio::time::sleep(Duration::from_millis(700)).await;
    for id in invoices {
        let inv: Value = s
            .v1(Method::GET, &format!("/v1/invoices/{id}"), BOOTSTRAP)
            .value()
            .await;
        assert_eq!(inv["status"], "remediation_required", "{inv}");
        let t: Value = s
            .api(Method::GET, &format!("/api/messages/{id}"), BOOTSTRAP)
            .value()
            .await;
        let codes: Vec<&str> = t["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes, ["received", "remediation_required"], "never queued");
    }
}
