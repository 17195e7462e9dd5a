//! Taking an upload: stored piece by piece as it arrives (never whole in memory), hashed on
//! the way, bounded by `max_bytes`; the batch becomes `received` only when the last byte is
//! stored, so a broken upload is never split.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use bytes::Bytes;
use chrono::NaiveDate;
use futures_util::{Stream, StreamExt};
use sha2::{Digest, Sha256};

use super::{BatchesConfig, Mode};
use crate::store::{BatchInserted, BatchRecord, Store, StoreError};

/// Largest piece stored per row.
pub const CHUNK_BYTES: usize = 1 << 20;

/// A batch to take.
#[derive(Clone, Debug)]
pub struct NewBatch {
    pub tenant_id: String,
    pub environment: String,
    pub mode: Mode,
    pub profile: Option<String>,
    pub rules_at: NaiveDate,
    pub idempotency_key: Option<String>,
    /// The file's name and kind, when the channel knows them (SFTP); see [`BatchRecord`].
    pub input_name: Option<String>,
    pub input_kind: Option<InputKind>,
    pub keep_input: bool,
}

/// What an upload holds, when the channel knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// One document (UBL, or a JSON invoice), the whole upload.
    Document,
    Zip,
    Ndjson,
}

impl InputKind {
    pub fn as_str(self) -> &'static str {
        match self {
            InputKind::Document => "document",
            InputKind::Zip => "zip",
            InputKind::Ndjson => "ndjson",
        }
    }

    pub fn parse(s: &str) -> Option<InputKind> {
        match s {
            "document" => Some(InputKind::Document),
            "zip" => Some(InputKind::Zip),
            "ndjson" => Some(InputKind::Ndjson),
            _ => None,
        }
    }

    /// By a file's name: `.zip`, `.ndjson` / `.jsonl`, anything else one document.
    pub fn of_name(name: &str) -> InputKind {
        let ext = name
            .rsplit_once('.')
            .map(|(_, e)| e.to_ascii_lowercase())
            .unwrap_or_default();
        match ext.as_str() {
            "zip" => InputKind::Zip,
            "ndjson" | "jsonl" => InputKind::Ndjson,
            _ => InputKind::Document,
        }
    }
}

/// What taking an upload did.
#[derive(Clone, Debug)]
pub enum Intake {
    Created(BatchRecord),
    /// The idempotency key was used before: its batch (the body was not read).
    Existing(BatchRecord),
}

#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error("the upload is larger than {limit} bytes (INVEX_BATCHES_MAX_BYTES)")]
    TooLarge { limit: u64 },
    #[error("the upload is empty")]
    Empty,
    #[error("the upload did not arrive whole: {0}")]
    Body(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Store `body` as a new batch of `new`.
pub async fn receive<S, E>(
    store: &Store,
    config: &BatchesConfig,
    new: NewBatch,
    mut body: S,
) -> Result<Intake, IntakeError>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let record = BatchRecord {
        id: crate::ids::new_id("batch"),
        tenant_id: new.tenant_id.clone(),
        environment: new.environment.clone(),
        mode: new.mode.as_str().to_string(),
        profile: new.profile.clone(),
        rules_at: new.rules_at.format("%Y-%m-%d").to_string(),
        input_sha256: String::new(),
        input_bytes: 0,
        status: "uploading".into(),
        documents: 0,
        done: 0,
        error: None,
        idempotency_key: new.idempotency_key.clone(),
        created_at: crate::clock::now(),
        started_at: None,
        finished_at: None,
        input_name: new.input_name.clone(),
        input_kind: new.input_kind.map(|k| k.as_str().to_string()),
        keep_input: new.keep_input,
    };
    if let BatchInserted::Existing(id) = store.insert_batch(&record).await? {
        let existing = store
            .batch(&new.tenant_id, &id)
            .await?
            .ok_or_else(|| IntakeError::Body("the batch of this idempotency key is gone".into()))?;
        if existing.status != "uploading" {
            return Ok(Intake::Existing(existing));
        }
        // The upload this key began never arrived whole (the server stopped under it): this
        // retry takes its place.
        store.drop_batch_upload(&existing.id).await?;
        if let BatchInserted::Existing(other) = store.insert_batch(&record).await? {
            let b = store.batch(&new.tenant_id, &other).await?.ok_or_else(|| {
                IntakeError::Body("the batch of this idempotency key is gone".into())
            })?;
            return Ok(Intake::Existing(b));
        }
    }
    match store_body(store, config, &record.id, &mut body).await {
        Ok((sha256, total)) => {
            store
                .finish_batch_upload(&record.id, &sha256, total as i64)
                .await?;
            let stored = store
                .batch(&new.tenant_id, &record.id)
                .await?
                .ok_or_else(|| IntakeError::Body("the batch vanished".into()))?;
            Ok(Intake::Created(stored))
        }
        Err(e) => {
            // Nothing of a broken upload stays (the key may be used again).
            store.drop_batch_upload(&record.id).await?;
            Err(e)
        }
    }
}

async fn store_body<S, E>(
    store: &Store,
    config: &BatchesConfig,
    batch_id: &str,
    body: &mut S,
) -> Result<(String, u64), IntakeError>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
    E: std::fmt::Display,
{
    let mut hash = Sha256::new();
    let mut total: u64 = 0;
    let mut piece: Vec<u8> = Vec::with_capacity(CHUNK_BYTES);
    let mut n: i64 = 0;
    while let Some(next) = body.next().await {
        let bytes = next.map_err(|e| IntakeError::Body(e.to_string()))?;
        total += bytes.len() as u64;
        if total > config.max_bytes {
            return Err(IntakeError::TooLarge {
                limit: config.max_bytes,
            });
        }
        hash.update(&bytes);
        let mut rest: &[u8] = &bytes;
        while !rest.is_empty() {
            let room = CHUNK_BYTES - piece.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            piece.extend_from_slice(now);
            rest = later;
            if piece.len() == CHUNK_BYTES {
                store
                    .insert_batch_chunk(batch_id, n, &STANDARD.encode(&piece))
                    .await?;
                n += 1;
                piece.clear();
            }
        }
    }
    if !piece.is_empty() {
        store
            .insert_batch_chunk(batch_id, n, &STANDARD.encode(&piece))
            .await?;
    }
    if total == 0 {
        return Err(IntakeError::Empty);
    }
    Ok((hex::encode(hash.finalize()), total))
}
