//! What an account sees: `inbox/` (files being delivered in this session), `outbox/` (the
//! outcome of each delivered file, once processed) and `archive/` (each delivered file, as
//! it was received). Outbox and archive are read from the database, never from local disk:
//! every instance shows the same folders, and what a crash did not commit was never shown.
//!
//! Names: a file delivered under a name it had before keeps that name for its newest
//! delivery; the older ones get `.1`, `.2`, ... in the order they came. Results are named
//! after the file: `NAME.report.json` (valid, ready, queued), `NAME.errors.json` (invalid,
//! held, refused, or not readable, with the findings and their remediation) and `NAME.ID.xml`
//! for each UBL the file made (a conversion's, or the invoice's a send made) for a single
//! document; `NAME.results.ndjson` (one line per document, as `GET
//! /v1/batches/{id}/results`) and `NAME.results.zip` (as that route's ZIP, the UBL
//! included) for a ZIP or a feed.

use std::collections::HashMap;
use std::io::{Seek, Write};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

use crate::batches::{results, BatchDocument};
use crate::store::{SftpAccountRecord, SftpFileRow, Store, StoreError};

/// A file in `outbox/` or `archive/`.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub name: String,
    /// Known for archived files and single results; 0 until read for `.results.ndjson`.
    pub size: u64,
    /// Seconds since the epoch.
    pub mtime: u32,
    pub content: Content,
}

/// Where a file's bytes come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    /// Made already (a single result).
    Bytes(Vec<u8>),
    /// Every document's result of a batch, one line each.
    Results { batch_id: String },
    /// The batch's results archive (as `GET /v1/batches/{id}/results` in ZIP).
    ResultsZip { tenant_id: String, batch_id: String },
    /// The delivered file itself, from the batch's kept pieces.
    Input { batch_id: String },
}

/// Each delivered file with its shown name (see the module's naming rule), oldest first.
fn named(rows: Vec<SftpFileRow>) -> Vec<(String, SftpFileRow)> {
    let mut total: HashMap<String, usize> = HashMap::new();
    for r in &rows {
        *total.entry(r.name.clone()).or_default() += 1;
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    rows.into_iter()
        .map(|r| {
            let n = seen.entry(r.name.clone()).or_default();
            *n += 1;
            let shown = if *n == total[&r.name] {
                r.name.clone()
            } else {
                format!("{}.{n}", r.name)
            };
            (shown, r)
        })
        .collect()
}

fn mtime(at: &str) -> u32 {
    chrono::DateTime::parse_from_rfc3339(at)
        .map(|t| u32::try_from(t.timestamp()).unwrap_or(0))
        .unwrap_or(0)
}

/// `archive/`: every delivered file.
pub async fn archive(
    store: &Store,
    account_id: &str,
    limit: i64,
) -> Result<Vec<Entry>, StoreError> {
    let rows = store.sftp_files(account_id, limit, false).await?;
    Ok(named(rows)
        .into_iter()
        .map(|(name, r)| Entry {
            name,
            size: u64::try_from(r.size_bytes).unwrap_or(0),
            mtime: mtime(&r.received_at),
            content: Content::Input {
                batch_id: r.batch_id,
            },
        })
        .collect())
}

/// `outbox/`: the outcome of every delivered file that has one.
pub async fn outbox(
    store: &Store,
    account: &SftpAccountRecord,
    limit: i64,
) -> Result<Vec<Entry>, StoreError> {
    let rows = store.sftp_files(&account.id, limit, true).await?;
    let mut out = Vec::new();
    for (name, r) in named(rows) {
        let at = mtime(&r.received_at);
        match r.status.as_str() {
            "failed" => {
                let body = serde_json::json!({
                    "file": r.name,
                    "batch_id": r.batch_id,
                    "outcome": "failed",
                    "error": r.error,
                });
                out.push(bytes_entry(format!("{name}.errors.json"), at, &body));
            }
            // A batch refused (mode `send`) has every document's outcome, as a completed one.
            "completed" | "refused" if r.input_kind.as_deref() == Some("document") => {
                let Some(doc) = r.document else {
                    continue;
                };
                let suffix = results::suffix(doc.outcome.as_deref().unwrap_or(""));
                let body = BatchDocument::from(doc);
                for (id, xml) in results::ubl_of(store, &account.tenant_id, &body).await? {
                    out.push(Entry {
                        name: format!("{name}.{id}.xml"),
                        size: xml.len() as u64,
                        mtime: at,
                        content: Content::Bytes(xml.into_bytes()),
                    });
                }
                out.push(bytes_entry(format!("{name}.{suffix}.json"), at, &body));
            }
            "completed" | "refused" => {
                out.push(Entry {
                    name: format!("{name}.results.ndjson"),
                    size: 0,
                    mtime: at,
                    content: Content::Results {
                        batch_id: r.batch_id.clone(),
                    },
                });
                out.push(Entry {
                    name: format!("{name}.results.zip"),
                    size: 0,
                    mtime: at,
                    content: Content::ResultsZip {
                        tenant_id: account.tenant_id.clone(),
                        batch_id: r.batch_id,
                    },
                });
            }
            // Still being processed: nothing to show yet.
            _ => {}
        }
    }
    Ok(out)
}

fn bytes_entry(name: String, mtime: u32, body: &impl serde::Serialize) -> Entry {
    let mut bytes = serde_json::to_vec_pretty(body).unwrap_or_default();
    bytes.push(b'\n');
    Entry {
        name,
        size: bytes.len() as u64,
        mtime,
        content: Content::Bytes(bytes),
    }
}

/// The bytes of `content` in a temporary file (never all in memory), rewound.
pub async fn spool(store: &Store, content: &Content) -> Result<std::fs::File, SpoolError> {
    let mut file = tempfile::tempfile()?;
    match content {
        Content::Bytes(b) => file.write_all(b)?,
        Content::Results { batch_id } => {
            let mut after = 0;
            loop {
                let rows = store
                    .batch_documents(batch_id, after, 200, None, true)
                    .await?;
                let Some(last) = rows.last().map(|r| r.seq) else {
                    break;
                };
                for r in rows.into_iter().filter(|r| r.outcome.is_some()) {
                    let line = serde_json::to_vec(&BatchDocument::from(r)).unwrap_or_default();
                    file.write_all(&line)?;
                    file.write_all(b"\n")?;
                }
                after = last;
            }
        }
        Content::ResultsZip {
            tenant_id,
            batch_id,
        } => {
            let summary = match store.batch(tenant_id, batch_id).await? {
                Some(b) => serde_json::json!({
                    "id": b.id,
                    "status": b.status,
                    "mode": b.mode,
                    "documents": b.documents,
                    "counts": store.batch_outcomes(batch_id).await?.into_iter().collect::<std::collections::BTreeMap<_, _>>(),
                    "error": b.error,
                }),
                None => serde_json::Value::Null,
            };
            return results::archive(store, tenant_id, batch_id, summary)
                .await
                .map_err(|e| match e {
                    results::ResultsError::Store(e) => SpoolError::Store(e),
                    results::ResultsError::Write(w) => SpoolError::Io(std::io::Error::other(w)),
                });
        }
        Content::Input { batch_id } => {
            let mut from = 0;
            loop {
                let pieces = store.batch_chunks(batch_id, from, 8).await?;
                if pieces.is_empty() {
                    break;
                }
                for (n, data) in &pieces {
                    let bytes = STANDARD
                        .decode(data)
                        .map_err(|e| SpoolError::Damaged(format!("piece {n}: {e}")))?;
                    file.write_all(&bytes)?;
                    from = n + 1;
                }
            }
        }
    }
    file.rewind()?;
    Ok(file)
}

#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("temporary file: {0}")]
    Io(#[from] std::io::Error),
    #[error("the stored file is damaged: {0}")]
    Damaged(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, at: &str) -> SftpFileRow {
        SftpFileRow {
            name: name.into(),
            sha256: at.into(),
            size_bytes: 1,
            batch_id: format!("batch_{at}"),
            received_at: at.into(),
            status: "completed".into(),
            input_kind: Some("document".into()),
            error: None,
            document: None,
        }
    }

    #[test]
    fn the_newest_delivery_of_a_name_keeps_it_older_ones_are_numbered() {
        let rows = vec![
            row("a.xml", "1"),
            row("b.xml", "2"),
            row("a.xml", "3"),
            row("a.xml", "4"),
        ];
        let names: Vec<String> = named(rows).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["a.xml.1", "b.xml", "a.xml.2", "a.xml"]);
    }
}
