//! A received upload into its documents: the pieces are joined in a temporary file, read
//! there (never whole in memory) as what its first bytes say it is, and each document
//! becomes a row keyed by its place in the upload, in groups, while the split's lease is
//! renewed. A split that dies half-way is done again by the next worker: rows stored before
//! are kept as they are.
//!
//! Two kinds of upload: a ZIP (each member a document: UBL, or a JSON invoice), and a JSON
//! feed, NDJSON (each non-blank line a JSON invoice, named `line N`).
//!
//! Bounded as a hostile upload must be: documents (`max_documents`), one document
//! (`max_document_bytes`: a member unpacked, a line), all of them (`max_unpacked_bytes`);
//! reading stops at the first byte over a limit, whatever the archive declares.

use std::io::{BufRead, BufReader, Read, Seek, Write};
use std::time::Duration;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use super::{BatchesConfig, InputKind};
use crate::store::{BatchRecord, NewBatchDocument, Notice, Store, StoreError};

/// Documents stored per transaction.
const GROUP: usize = 128;

#[derive(Debug, thiserror::Error)]
pub enum SplitError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The temporary file, or a stored piece that cannot be decoded.
    #[error("spooling the upload: {0}")]
    Spool(String),
}

/// How a split ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Split {
    /// The documents are stored; the batch is `processing` (or `checking`, mode `send`).
    Started(i64),
    /// The upload cannot be split; the batch `failed` with this reason.
    Failed(String),
    /// The claim passed to another worker (this one was too slow); nothing more was done.
    Lost,
}

/// Split `batch`, which `worker` holds.
pub async fn split(
    store: &Store,
    config: &BatchesConfig,
    batch: &BatchRecord,
    worker: &str,
    failed: impl Fn(&BatchRecord, &str) -> Notice,
) -> Result<Split, SplitError> {
    let lease = Duration::from_secs(config.lease_secs.max(5));
    let renew = || async move {
        let until = crate::clock::format(chrono::Utc::now() + lease);
        store.renew_batch_claim(&batch.id, worker, &until).await
    };
    let spool = |e: std::io::Error| SplitError::Spool(e.to_string());
    let mut file = tempfile::tempfile().map_err(spool)?;
    let mut from = 0;
    loop {
        let pieces = store.batch_chunks(&batch.id, from, 8).await?;
        if pieces.is_empty() {
            break;
        }
        for (n, data) in &pieces {
            let bytes = STANDARD.decode(data).map_err(|e| {
                SplitError::Spool(format!("piece {n} of {} is damaged: {e}", batch.id))
            })?;
            file.write_all(&bytes).map_err(spool)?;
            from = n + 1;
        }
        if !renew().await? {
            return Ok(Split::Lost);
        }
    }
    file.rewind().map_err(spool)?;
    let (tx, mut rx) = mpsc::channel::<Vec<NewBatchDocument>>(2);
    let limits = config.clone();
    let kind = batch.input_kind.as_deref().and_then(InputKind::parse);
    let name = batch
        .input_name
        .clone()
        .unwrap_or_else(|| "document".into());
    let reading = tokio::task::spawn_blocking(move || match kind {
        Some(InputKind::Document) => read_document(file, &name, &limits, &tx),
        Some(InputKind::Zip) => read_zip(file, &limits, &tx),
        Some(InputKind::Ndjson) => read_ndjson(file, &limits, &tx),
        None => read_upload(file, &limits, &tx),
    });
    while let Some(group) = rx.recv().await {
        store.insert_batch_documents(&batch.id, &group).await?;
        if !renew().await? {
            // The reader stops at its next send (the receiver is gone).
            return Ok(Split::Lost);
        }
    }
    let read = reading
        .await
        .map_err(|e| SplitError::Spool(format!("the upload reader failed: {e}")))?;
    let now = crate::clock::now();
    match read {
        Ok(0) => {
            let why = "the upload holds no document".to_string();
            fail(store, batch, worker, &why, &now, &failed).await
        }
        Ok(n) => {
            // A batch that sends has every document's identifiers checked first.
            let status = if batch.mode == super::Mode::Send.as_str() {
                "checking"
            } else {
                "processing"
            };
            if store
                .start_batch(&batch.id, worker, n, &now, status)
                .await?
            {
                Ok(Split::Started(n))
            } else {
                Ok(Split::Lost)
            }
        }
        Err(why) => fail(store, batch, worker, &why, &now, &failed).await,
    }
}

async fn fail(
    store: &Store,
    batch: &BatchRecord,
    worker: &str,
    why: &str,
    now: &str,
    failed: &impl Fn(&BatchRecord, &str) -> Notice,
) -> Result<Split, SplitError> {
    let notice = failed(batch, why);
    if store.fail_batch(batch, worker, why, now, &notice).await? {
        Ok(Split::Failed(why.to_string()))
    } else {
        Ok(Split::Lost)
    }
}

/// Read the upload in `file` as a ZIP or an NDJSON feed, by its first bytes.
fn read_upload<R: Read + Seek>(
    mut file: R,
    limits: &BatchesConfig,
    tx: &mpsc::Sender<Vec<NewBatchDocument>>,
) -> Result<i64, String> {
    let mut head = [0u8; 512];
    let n =
        read_head(&mut file, &mut head).map_err(|e| format!("the upload cannot be read: {e}"))?;
    file.rewind()
        .map_err(|e| format!("the upload cannot be read: {e}"))?;
    if crate::invoice::json::is_json(&head[..n]) {
        read_ndjson(file, limits, tx)
    } else {
        read_zip(file, limits, tx)
    }
}

/// The whole upload as one document (an SFTP file that is one invoice), named `name`.
fn read_document<R: Read>(
    file: R,
    name: &str,
    limits: &BatchesConfig,
    tx: &mpsc::Sender<Vec<NewBatchDocument>>,
) -> Result<i64, String> {
    let mut content = Vec::new();
    file.take(limits.max_document_bytes + 1)
        .read_to_end(&mut content)
        .map_err(|e| format!("`{name}` cannot be read: {e}"))?;
    if content.len() as u64 > limits.max_document_bytes {
        return Err(format!(
            "`{name}` is larger than {} bytes (INVEX_BATCHES_MAX_DOCUMENT_BYTES)",
            limits.max_document_bytes
        ));
    }
    let mut docs = Documents::new(limits, tx);
    let seq = docs.next_seq("file")?;
    docs.push(seq, clean_name(name), &content, "file")?;
    docs.finish()
}

fn read_head<R: Read>(file: &mut R, head: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < head.len() {
        match file.read(&mut head[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Documents read so far, sent in groups, within the limits.
struct Documents<'a> {
    limits: &'a BatchesConfig,
    tx: &'a mpsc::Sender<Vec<NewBatchDocument>>,
    group: Vec<NewBatchDocument>,
    seq: i64,
    unpacked: u64,
}

impl<'a> Documents<'a> {
    fn new(limits: &'a BatchesConfig, tx: &'a mpsc::Sender<Vec<NewBatchDocument>>) -> Self {
        Documents {
            limits,
            tx,
            group: Vec::with_capacity(GROUP),
            seq: 0,
            unpacked: 0,
        }
    }

    /// The place of the next document, if the upload may hold one more.
    fn next_seq(&mut self, what: &str) -> Result<i64, String> {
        self.seq += 1;
        if self.seq as u64 > self.limits.max_documents {
            return Err(format!(
                "the {what} holds more than {} documents (INVEX_BATCHES_MAX_DOCUMENTS)",
                self.limits.max_documents
            ));
        }
        Ok(self.seq)
    }

    fn push(&mut self, seq: i64, name: String, content: &[u8], what: &str) -> Result<(), String> {
        self.unpacked += content.len() as u64;
        if self.unpacked > self.limits.max_unpacked_bytes {
            return Err(format!(
                "the {what} unpacks to more than {} bytes (INVEX_BATCHES_MAX_UNPACKED_BYTES)",
                self.limits.max_unpacked_bytes
            ));
        }
        self.group.push(NewBatchDocument {
            seq,
            name,
            size_bytes: content.len() as i64,
            sha256: hex::encode(Sha256::digest(content)),
            content: STANDARD.encode(content),
        });
        if self.group.len() == GROUP {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        if self.group.is_empty() {
            return Ok(());
        }
        let group = std::mem::replace(&mut self.group, Vec::with_capacity(GROUP));
        self.tx
            .blocking_send(group)
            .map_err(|_| "the split was given up".to_string())
    }

    /// Everything sent; how many documents.
    fn finish(mut self) -> Result<i64, String> {
        self.flush()?;
        Ok(self.seq)
    }
}

/// Read an NDJSON feed: each non-blank line is one JSON invoice, named by its line number.
/// A line is read up to `max_document_bytes` and no further, so one endless line costs no
/// more than that.
fn read_ndjson<R: Read>(
    file: R,
    limits: &BatchesConfig,
    tx: &mpsc::Sender<Vec<NewBatchDocument>>,
) -> Result<i64, String> {
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut docs = Documents::new(limits, tx);
    let mut line = Vec::new();
    let mut number: u64 = 0;
    loop {
        line.clear();
        number += 1;
        let read = (&mut reader)
            .take(limits.max_document_bytes + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("line {number} cannot be read: {e}"))?;
        if read == 0 {
            break;
        }
        let content = line.trim_ascii();
        if line.len() as u64 > limits.max_document_bytes && !line.ends_with(b"\n") {
            return Err(format!(
                "line {number} is longer than {} bytes (INVEX_BATCHES_MAX_DOCUMENT_BYTES)",
                limits.max_document_bytes
            ));
        }
        if content.is_empty() {
            continue;
        }
        let seq = docs.next_seq("feed")?;
        docs.push(seq, format!("line {number}"), content, "feed")?;
    }
    docs.finish()
}

/// Read the archive in `file`, sending its documents in groups; how many, or why not.
fn read_zip<R: Read + Seek>(
    file: R,
    limits: &BatchesConfig,
    tx: &mpsc::Sender<Vec<NewBatchDocument>>,
) -> Result<i64, String> {
    let mut archive =
        zip::ZipArchive::new(file).map_err(|e| format!("the upload is not a readable ZIP: {e}"))?;
    let mut docs = Documents::new(limits, tx);
    for i in 0..archive.len() {
        let mut member = archive
            .by_index(i)
            .map_err(|e| format!("member {} cannot be read: {e}", i + 1))?;
        let name = match member.name() {
            Ok(n) => clean_name(&n),
            Err(_) => clean_name(&String::from_utf8_lossy(member.name_raw())),
        };
        // Folders, and the resource forks macOS adds to archives it makes.
        if member.is_dir() || name.starts_with("__MACOSX/") {
            continue;
        }
        let seq = docs.next_seq("ZIP")?;
        let mut content = Vec::new();
        (&mut member)
            .take(limits.max_document_bytes + 1)
            .read_to_end(&mut content)
            .map_err(|e| format!("`{name}` cannot be unpacked: {e}"))?;
        if content.len() as u64 > limits.max_document_bytes {
            return Err(format!(
                "`{name}` unpacks to more than {} bytes (INVEX_BATCHES_MAX_DOCUMENT_BYTES)",
                limits.max_document_bytes
            ));
        }
        docs.push(seq, name, &content, "ZIP")?;
    }
    docs.finish()
}

/// A member's name as shown: printable, at most 500 characters.
fn clean_name(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).take(500).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zip_of(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut w = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default();
        for (name, bytes) in members {
            if name.ends_with('/') {
                w.add_directory(*name, options).unwrap();
            } else {
                w.start_file(*name, options).unwrap();
                w.write_all(bytes).unwrap();
            }
        }
        w.finish().unwrap();
        out.into_inner()
    }

    fn read(
        bytes: Vec<u8>,
        limits: &BatchesConfig,
    ) -> (Result<i64, String>, Vec<NewBatchDocument>) {
        let (tx, mut rx) = mpsc::channel(1000);
        let n = read_upload(std::io::Cursor::new(bytes), limits, &tx);
        drop(tx);
        let mut docs = Vec::new();
        while let Ok(g) = rx.try_recv() {
            docs.extend(g);
        }
        (n, docs)
    }

    #[test]
    fn members_become_documents_numbered_in_order_without_folders() {
        let z = zip_of(&[
            ("a/", b""),
            ("a/one.xml", b"<Invoice/>"),
            ("__MACOSX/a/._one.xml", b"junk"),
            ("two.xml", b"<CreditNote/>"),
        ]);
        let (n, docs) = read(z, &BatchesConfig::default());
        assert_eq!(n, Ok(2));
        assert_eq!(
            docs.iter()
                .map(|d| (d.seq, d.name.as_str()))
                .collect::<Vec<_>>(),
            [(1, "a/one.xml"), (2, "two.xml")]
        );
        assert_eq!(STANDARD.decode(&docs[1].content).unwrap(), b"<CreditNote/>");
        assert_eq!(docs[0].size_bytes, 10);
    }

    #[test]
    fn each_line_of_a_json_feed_is_a_document_named_by_its_line() {
        let feed = b"{\"number\":\"1\"}\n\n  \r\n{\"number\":\"2\"}\r\n{\"number\":\"3\"}".to_vec();
        let (n, docs) = read(feed, &BatchesConfig::default());
        assert_eq!(n, Ok(3));
        assert_eq!(
            docs.iter()
                .map(|d| (d.seq, d.name.as_str()))
                .collect::<Vec<_>>(),
            [(1, "line 1"), (2, "line 4"), (3, "line 5")]
        );
        assert_eq!(
            STANDARD.decode(&docs[1].content).unwrap(),
            b"{\"number\":\"2\"}"
        );
        assert_eq!(docs[2].size_bytes, 14);
    }

    #[test]
    fn a_json_feed_is_bounded_like_a_zip() {
        let feed = b"{\"a\":1}\n{\"b\":2}\n".to_vec();
        let few = BatchesConfig {
            max_documents: 1,
            ..BatchesConfig::default()
        };
        assert!(read(feed.clone(), &few)
            .0
            .unwrap_err()
            .contains("feed holds more than 1 documents"));
        // One endless line is read up to the limit and no further.
        let long = format!("{{\"notes\":[\"{}\"]}}", "x".repeat(1000)).into_bytes();
        let small = BatchesConfig {
            max_document_bytes: 100,
            ..BatchesConfig::default()
        };
        assert!(read(long, &small)
            .0
            .unwrap_err()
            .contains("line 1 is longer than 100 bytes"));
        let little = BatchesConfig {
            max_unpacked_bytes: 10,
            ..BatchesConfig::default()
        };
        assert!(read(feed, &little)
            .0
            .unwrap_err()
            .contains("unpacks to more than 10"));
    }

    #[test]
    fn every_limit_stops_the_reading() {
        let z = zip_of(&[("a.xml", &[b'x'; 100]), ("b.xml", &[b'y'; 100])]);
        let few = BatchesConfig {
            max_documents: 1,
            ..BatchesConfig::default()
        };
        assert!(read(z.clone(), &few)
            .0
            .unwrap_err()
            .contains("more than 1 documents"));
        let small = BatchesConfig {
            max_document_bytes: 99,
            ..BatchesConfig::default()
        };
        assert!(read(z.clone(), &small)
            .0
            .unwrap_err()
            .contains("`a.xml` unpacks to more than 99"));
        let little = BatchesConfig {
            max_unpacked_bytes: 150,
            ..BatchesConfig::default()
        };
        assert!(read(z, &little)
            .0
            .unwrap_err()
            .contains("unpacks to more than 150"));
        assert!(read(b"not a zip".to_vec(), &BatchesConfig::default())
            .0
            .unwrap_err()
            .contains("not a readable ZIP"));
    }
}
