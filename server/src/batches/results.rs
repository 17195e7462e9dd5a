//! A batch's results as one ZIP: for each document with an outcome, `NAME.report.json`
//! (valid, ready, queued) or `NAME.errors.json` (invalid, held, or not readable: findings with
//! remediation, or the problem), as the document endpoint answers it, the UBL of each of its
//! conversions as it stands now (`NAME.CONVERSION-ID.xml`, mode `convert`) or of the invoice
//! its send made (`NAME.INVOICE-ID.xml`, mode `send`: a JSON invoice as the UBL sent), plus
//! `batch.json`. Written page by page
//! into a temporary file by a blocking task (the store is read on the runtime, the archive
//! is written off it), so a batch of 100,000 documents costs a page of memory.

use std::io::{Seek, Write};

use tokio::sync::mpsc;
use zip::write::SimpleFileOptions;

use super::BatchDocument;
use crate::store::{Store, StoreError};

/// Documents read per page.
const PAGE: i64 = 200;

#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("writing the results archive: {0}")]
    Write(String),
}

/// The name of a document's result in the archive: its place first (names repeat in a ZIP
/// and a feed), then its name with every folder and `..` flattened, so the archive unpacks
/// into one folder and nowhere else.
pub fn member_name(seq: i64, name: &str, outcome: &str) -> String {
    format!("{}.{}.json", member_stem(seq, name), suffix(outcome))
}

/// `report` for a document that went well (valid, ready, queued), `errors` for one to
/// correct.
pub fn suffix(outcome: &str) -> &'static str {
    if matches!(outcome, "valid" | "ready" | "queued") {
        "report"
    } else {
        "errors"
    }
}

/// `NNNNNN_NAME` with every folder and `..` flattened (see [`member_name`]).
fn member_stem(seq: i64, name: &str) -> String {
    let flat: String = name
        .split(['/', '\\'])
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .collect::<Vec<_>>()
        .join("_")
        .chars()
        .map(|c| if c.is_control() || c == ':' { '_' } else { c })
        .take(150)
        .collect();
    format!("{seq:06}_{flat}")
}

/// The conversion ids a document's result names (mode `convert`).
fn conversion_ids(d: &BatchDocument) -> Vec<String> {
    d.result
        .as_ref()
        .and_then(|r| r["conversions"].as_array())
        .map(|list| {
            list.iter()
                .filter_map(|c| c["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The invoice a document's send made (mode `send`): queued, or kept for remediation.
fn invoice_id(d: &BatchDocument) -> Option<String> {
    let r = d.result.as_ref()?;
    let id = match d.outcome.as_deref()? {
        "queued" => &r["id"],
        "remediation_required" => &r["problem"]["invoice_id"],
        _ => return None,
    };
    id.as_str().map(str::to_string)
}

/// The UBL a document made (id, XML): its conversions' as they stand now (mode `convert`),
/// or its invoice's as sent (mode `send`).
pub async fn ubl_of(
    store: &Store,
    tenant_id: &str,
    d: &BatchDocument,
) -> Result<Vec<(String, String)>, StoreError> {
    let mut xmls = Vec::new();
    for id in conversion_ids(d) {
        if let Some(c) = store.conversion(tenant_id, &id).await? {
            xmls.push((id, c.xml));
        }
    }
    if let Some(id) = invoice_id(d) {
        if let Some(i) = store.invoice(tenant_id, &id).await? {
            xmls.push((id, i.payload));
        }
    }
    Ok(xmls)
}

/// A document with the UBL it made (id, XML).
type Entry = (BatchDocument, Vec<(String, String)>);

/// The archive of the results of `batch_id` (of `tenant_id`), `summary` as `batch.json`, in a
/// rewound temporary file.
pub async fn archive(
    store: &Store,
    tenant_id: &str,
    batch_id: &str,
    summary: serde_json::Value,
) -> Result<std::fs::File, ResultsError> {
    let (tx, mut rx) = mpsc::channel::<Vec<Entry>>(2);
    let writer = tokio::task::spawn_blocking(move || {
        let write = |e: &dyn std::fmt::Display| ResultsError::Write(e.to_string());
        let file = tempfile::tempfile().map_err(|e| write(&e))?;
        let mut zip = zip::ZipWriter::new(file);
        let options = SimpleFileOptions::default();
        zip.start_file("batch.json", options)
            .map_err(|e| write(&e))?;
        let text = serde_json::to_vec_pretty(&summary).unwrap_or_default();
        zip.write_all(&text).map_err(|e| write(&e))?;
        while let Some(page) = rx.blocking_recv() {
            for (d, xmls) in page {
                let outcome = d.outcome.clone().unwrap_or_default();
                zip.start_file(member_name(d.seq, &d.name, &outcome), options)
                    .map_err(|e| write(&e))?;
                let text = serde_json::to_vec_pretty(&d).unwrap_or_default();
                zip.write_all(&text).map_err(|e| write(&e))?;
                for (id, xml) in xmls {
                    let name = format!("{}.{id}.xml", member_stem(d.seq, &d.name));
                    zip.start_file(name, options).map_err(|e| write(&e))?;
                    zip.write_all(xml.as_bytes()).map_err(|e| write(&e))?;
                }
            }
        }
        let mut file = zip.finish().map_err(|e| write(&e))?;
        file.rewind().map_err(|e| write(&e))?;
        Ok::<_, ResultsError>(file)
    });
    let mut after = 0;
    loop {
        let rows = store
            .batch_documents(batch_id, after, PAGE, None, true)
            .await?;
        let Some(last) = rows.last().map(|r| r.seq) else {
            break;
        };
        after = last;
        let mut page: Vec<Entry> = Vec::with_capacity(rows.len());
        for d in rows
            .into_iter()
            .filter(|r| r.outcome.is_some())
            .map(BatchDocument::from)
        {
            let xmls = ubl_of(store, tenant_id, &d).await?;
            page.push((d, xmls));
        }
        if tx.send(page).await.is_err() {
            break;
        }
    }
    drop(tx);
    writer
        .await
        .map_err(|e| ResultsError::Write(e.to_string()))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_names_stay_inside_one_folder() {
        assert_eq!(
            member_name(7, "invoices/FV-1.xml", "valid"),
            "000007_invoices_FV-1.xml.report.json"
        );
        assert_eq!(
            member_name(8, "../../etc/passwd", "invalid"),
            "000008_etc_passwd.errors.json"
        );
        assert_eq!(
            member_name(9, "line 4", "failed"),
            "000009_line 4.errors.json"
        );
        assert_eq!(
            member_name(10, "C:\\x\\y.xml", "valid"),
            "000010_C__x_y.xml.report.json"
        );
    }
}
