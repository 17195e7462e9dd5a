//! Stored validation results, written by one group-commit writer: requests wait for their
//! row to be committed (nothing answered is lost), and under load many rows share one
//! transaction (one fsync) instead of one each.

use std::sync::Arc;

use sqlx::{Any, AnyPool, Transaction};
use tokio::sync::{mpsc, oneshot};

use super::{opt_text, text, Store, StoreError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationRecord {
    pub id: String,
    pub tenant_id: String,
    pub key_id: Option<String>,
    pub created_at: String,
    pub file_name: Option<String>,
    pub sha256: String,
    pub size_bytes: i64,
    /// `id@version`.
    pub profile: String,
    pub verdict: String,
    /// Packs used, `id@version`, comma-separated.
    pub rules_version: String,
    pub environment: String,
    /// The JSON result as answered.
    pub result: String,
}

const COLUMNS: &str = "id, tenant_id, key_id, created_at, file_name, sha256, size_bytes, \
                       profile, verdict, rules_version, environment, result";

impl ValidationRecord {
    fn from_row(row: &sqlx::any::AnyRow) -> Result<ValidationRecord, sqlx::Error> {
        use sqlx::Row;
        Ok(ValidationRecord {
            id: text(row, "id")?,
            tenant_id: text(row, "tenant_id")?,
            key_id: opt_text(row, "key_id")?,
            created_at: text(row, "created_at")?,
            file_name: opt_text(row, "file_name")?,
            sha256: text(row, "sha256")?,
            size_bytes: row.try_get::<i64, _>("size_bytes")?,
            profile: text(row, "profile")?,
            verdict: text(row, "verdict")?,
            rules_version: text(row, "rules_version")?,
            environment: text(row, "environment")?,
            result: text(row, "result")?,
        })
    }
}

pub(super) struct WriteJob {
    records: Vec<ValidationRecord>,
    done: oneshot::Sender<Result<(), Arc<StoreError>>>,
}

/// Most rows committed in one transaction.
const MAX_BATCH_ROWS: usize = 512;

pub(super) fn spawn_writer(pool: AnyPool) -> mpsc::Sender<WriteJob> {
    let (tx, rx) = mpsc::channel::<WriteJob>(4096);
    tokio::spawn(writer_loop(pool, rx));
    tx
}

async fn writer_loop(pool: AnyPool, mut rx: mpsc::Receiver<WriteJob>) {
    while let Some(first) = rx.recv().await {
        let mut rows = first.records.len();
        let mut jobs = vec![first];
        // Take whatever else is already waiting: those rows ride the same commit.
        while rows < MAX_BATCH_ROWS {
            match rx.try_recv() {
                Ok(job) => {
                    rows += job.records.len();
                    jobs.push(job);
                }
                Err(_) => break,
            }
        }
        let result = insert_batch(&pool, &jobs).await.map_err(Arc::new);
        if let Err(e) = &result {
            tracing::error!(error = %e, rows, "storing validation results failed");
        }
        for job in jobs {
            // The requester may have gone away; its row is stored all the same.
            let _ = job.done.send(result.clone());
        }
    }
}

async fn insert_batch(pool: &AnyPool, jobs: &[WriteJob]) -> Result<(), StoreError> {
    let mut tx: Transaction<'_, Any> = pool.begin().await?;
    for record in jobs.iter().flat_map(|j| &j.records) {
        sqlx::query(&format!(
            "INSERT INTO validations ({COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        ))
        .bind(&record.id)
        .bind(&record.tenant_id)
        .bind(record.key_id.as_deref())
        .bind(&record.created_at)
        .bind(record.file_name.as_deref())
        .bind(&record.sha256)
        .bind(record.size_bytes)
        .bind(&record.profile)
        .bind(&record.verdict)
        .bind(&record.rules_version)
        .bind(&record.environment)
        .bind(&record.result)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

impl Store {
    /// Store results; returns when they are committed.
    pub async fn insert_validations(
        &self,
        records: Vec<ValidationRecord>,
    ) -> Result<(), StoreError> {
        if records.is_empty() {
            return Ok(());
        }
        let (done, wait) = oneshot::channel();
        self.writer
            .send(WriteJob { records, done })
            .await
            .map_err(|_| StoreError::WriterStopped)?;
        match wait.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(StoreError::Shared(e)),
            Err(_) => Err(StoreError::WriterStopped),
        }
    }

    /// One result of `tenant_id` (results of other tenants are not found).
    pub async fn validation(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<Option<ValidationRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM validations WHERE tenant_id = $1 AND id = $2"
        ))
        .bind(tenant_id)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(ValidationRecord::from_row).transpose()?)
    }

    /// A tenant's results, newest first, at most `limit`, older than `before` when given.
    pub async fn validations(
        &self,
        tenant_id: &str,
        before: Option<&str>,
        limit: i64,
    ) -> Result<Vec<ValidationRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM validations WHERE tenant_id = $1 AND id < $2 \
             ORDER BY id DESC LIMIT $3"
        ))
        .bind(tenant_id)
        // Ids are time-ordered; "~" sorts after every id.
        .bind(before.unwrap_or("~"))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .iter()
            .map(ValidationRecord::from_row)
            .collect::<Result<_, _>>()?)
    }
}
