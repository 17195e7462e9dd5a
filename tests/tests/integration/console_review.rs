//! The review page of a PDF held by the gate, over HTTP: the page drawn from the PDF's text
//! layer beside the values, each value's run marked in the colour of its confidence and
//! linked from its row.

use crate::support::console::Console;
use crate::support::{JsonBody, TestServer, BOOTSTRAP};
use reqwest::multipart::{Form, Part};
use serde_json::Value;

/// A text PDF invoice that converts with values under the gate's threshold.
fn held_pdf() -> Vec<u8> {
    std::fs::read(crate::support::repo().join("server/fuzz/seeds/pdf/invoice-plain.pdf"))
        .expect("the PDF seed")
}

/// The `<rect …>` element with `id`, as the page has it.
fn element<'p>(page: &'p str, id: &str) -> &'p str {
    let at = page
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("{id} on the page"));
    let start = page[..at].rfind('<').unwrap();
    &page[start..at + page[at..].find('>').unwrap()]
}

#[tokio::test]
async fn a_held_pdf_is_shown_as_its_page_with_each_value_marked_by_confidence() {
    let s = TestServer::start().await;
    let c = Console::english(&s);
    let admin = c.first_admin().await;
    let form = Form::new().part(
        "file",
        Part::bytes(held_pdf())
            .file_name("invoice-plain.pdf")
            .mime_str("application/pdf")
            .unwrap(),
    );
    let answer: Value = s
        .v1(reqwest::Method::POST, "/v1/invoice/convert", BOOTSTRAP)
        .multipart(form)
        .value()
        .await;
    let conversion = &answer["conversions"][0];
    assert_eq!(conversion["status"], "needs_review", "{answer}");
    let id = conversion["id"].as_str().unwrap();

    let page = c.page(&format!("/console/review/{id}"), &admin).await;
    // The page, drawn: its box, and its text where it stands.
    assert!(
        page.contains("<svg viewBox=\"0 0 595 842\" role=\"img\" aria-label=\"Page 1\">"),
        "{page}"
    );
    assert!(page.contains("SK3112000000198742637541</text>"), "{page}");
    // The IBAN (read with high confidence) and the total (under the threshold) marked in
    // their colours, each linked from its value's row.
    let iban = element(&page, "src-payment-iban");
    assert!(
        iban.starts_with("<rect") && iban.contains("class=\"cited high\""),
        "{iban}"
    );
    let total = element(&page, "src-totals-tax-inclusive");
    assert!(total.contains("class=\"cited low\""), "{total}");
    assert!(page.contains("href=\"#src-payment-iban\""));
    assert!(page.contains("href=\"#src-number\""));
    // A computed value has no run on the page, and no link.
    assert!(!page.contains("id=\"src-seller-dic\""));
    // The page's text below the drawing.
    assert!(page.contains("<summary>The page's text</summary>"));
}
