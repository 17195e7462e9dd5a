//! Hostile conversion uploads against the real server: spreadsheet bombs of a few KB
//! that declare or expand to gigabytes, and a CSV of 90,000 invoices. Each is refused
//! with the limit it breaks, and the server still answers afterwards.

use std::io::{Cursor, Read, Write};

use crate::support::{problem, TestServer, BOOTSTRAP};
use reqwest::multipart::{Form, Part};
use reqwest::Method;
use serde_json::Value;

async fn convert(s: &TestServer, name: &str, bytes: Vec<u8>) -> reqwest::Response {
    s.v1(Method::POST, "/v1/invoice/convert", BOOTSTRAP)
        .multipart(Form::new().part("file", Part::bytes(bytes).file_name(name.to_string())))
        .send()
        .await
        .expect("send")
}

/// The server's own xlsx template, member by member.
async fn template(s: &TestServer) -> Vec<(String, Vec<u8>)> {
    let bytes = s
        .v1(Method::GET, "/v1/invoice/convert/template.xlsx", BOOTSTRAP)
        .send()
        .await
        .expect("send")
        .bytes()
        .await
        .expect("body");
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes.to_vec())).expect("zip");
    (0..zip.len())
        .map(|i| {
            let mut f = zip.by_index(i).expect("member");
            let mut content = Vec::new();
            f.read_to_end(&mut content).expect("read");
            (f.name().expect("an entry name").to_string(), content)
        })
        .collect()
}

fn zip_of(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in members {
        out.start_file(name.as_str(), options).expect("start");
        out.write_all(content).expect("write");
    }
    out.finish().expect("finish").into_inner()
}

/// The template with `change` applied to one member's text.
fn changed(
    members: &[(String, Vec<u8>)],
    member: &str,
    change: impl Fn(&str) -> String,
) -> Vec<u8> {
    let members: Vec<(String, Vec<u8>)> = members
        .iter()
        .map(|(name, content)| {
            if name == member {
                let text = String::from_utf8(content.clone()).expect("utf8");
                (name.clone(), change(&text).into_bytes())
            } else {
                (name.clone(), content.clone())
            }
        })
        .collect();
    zip_of(&members)
}

async fn refused(s: &TestServer, bytes: Vec<u8>, status: u16, limit: &str) -> Value {
    let p = problem(convert(s, "hostile.xlsx", bytes).await, status).await;
    assert_eq!(p["limit"], limit, "{p}");
    assert!(p["limit_value"].as_u64().is_some(), "{p}");
    p
}

async fn healthy(s: &TestServer) {
    let r = s.client.get(s.url("/health")).send().await.expect("send");
    assert_eq!(r.status(), 200);
}

#[tokio::test]
async fn spreadsheet_bombs_are_refused_with_their_limit_and_the_server_survives() {
    let s = TestServer::start().await;
    let members = template(&s).await;

    // The template itself converts: what follows is refused for the bomb, not the data.
    let r = convert(&s, "template.xlsx", zip_of(&members)).await;
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());

    // A declared dimension of the whole grid is only a claim: the cells are read.
    let whole_grid = changed(&members, "xl/worksheets/sheet1.xml", |t| {
        let start = t.find("<dimension ref=\"").expect("dimension") + 16;
        let end = start + t[start..].find('"').expect("end");
        format!("{}A1:XFD1048576{}", &t[..start], &t[end..])
    });
    let r = convert(&s, "grid.xlsx", whole_grid).await;
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());

    // A value in XFD1048576: the used range is the whole grid (0.5 TB as a dense range).
    let far_cell = changed(&members, "xl/worksheets/sheet1.xml", |t| {
        t.replacen(
            "</sheetData>",
            "<row r=\"1048576\"><c r=\"XFD1048576\"><v>1</v></c></row></sheetData>",
            1,
        )
    });
    let p = refused(&s, far_cell, 422, "max_columns").await;
    assert!(p["type"]
        .as_str()
        .unwrap_or("")
        .ends_with("unreadable-spreadsheet"));
    assert_eq!(p["limit_value"], 1000);

    // 10^14 shared strings declared (2.4 PB reserved by a trusting reader).
    let strings = changed(&members, "xl/sharedStrings.xml", |t| {
        let start = t.find("uniqueCount=\"").expect("uniqueCount") + 13;
        let end = start + t[start..].find('"').expect("end");
        format!("{}100000000000000{}", &t[..start], &t[end..])
    });
    refused(&s, strings, 422, "max_shared_strings").await;

    // A deflate bomb: 64 MiB of zeros in ~64 KB.
    let mut bomb = members.clone();
    bomb.push(("xl/media/zeros.bin".into(), vec![0u8; 64 << 20]));
    let bomb = zip_of(&bomb);
    assert!(bomb.len() < 200_000, "{}", bomb.len());
    refused(&s, bomb, 422, "max_compression_ratio").await;

    // 1,001 archive members.
    let mut many = members.clone();
    many.extend((0..1001).map(|i| (format!("xl/media/m{i}.bin"), Vec::new())));
    refused(&s, zip_of(&many), 422, "max_zip_entries").await;

    healthy(&s).await;
}

#[tokio::test]
async fn a_csv_beyond_the_invoice_limit_is_refused_while_reading() {
    let s = TestServer::start().await;
    let mut csv = String::from(
        "Invoice number,Issue date,Seller name,Seller VAT ID,Buyer name,Item name,Quantity,Unit price,VAT rate\n",
    );
    for i in 0..90_000 {
        csv.push_str(&format!(
            "INV-{i},2027-01-15,Dodávateľ s.r.o.,SK2022749619,Odberateľ a.s.,Goods,1,10.00,23\n"
        ));
    }
    let r = convert(&s, "many.csv", csv.into_bytes()).await;
    let p = problem(r, 413).await;
    assert_eq!(p["limit"], "max_invoices", "{p}");
    assert_eq!(p["limit_value"], 500, "{p}");
    assert!(p["detail"]
        .as_str()
        .unwrap_or("")
        .contains("INVEX_CONVERT_MAX_INVOICES"));
    // Nothing of the upload was stored.
    let list: Value = s
        .v1(Method::GET, "/v1/conversions", BOOTSTRAP)
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    assert_eq!(list["conversions"].as_array().map(Vec::len), Some(0));
    healthy(&s).await;
}

#[tokio::test]
async fn legacy_binary_workbooks_are_refused_as_unsupported() {
    let s = TestServer::start().await;
    let mut ole = vec![0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
    ole.extend([0u8; 504]);
    let p = problem(convert(&s, "old.xls", ole).await, 415).await;
    assert!(p["type"]
        .as_str()
        .unwrap_or("")
        .ends_with("unsupported-input"));
    healthy(&s).await;
}
