//! Batches: the upload in pieces, its documents, and the claims workers hold on them. Every
//! claim is a lease (`claimed_by`, `claimed_until`); a result is written only by the worker
//! holding the document's claim and only once, in the same transaction as the batch's count
//! and the webhook events it causes, so a document is counted, and announced, exactly once.

use sqlx::Row;

use super::sending::{queue_notices as queue, Notice};
use super::{opt_text, text, Store, StoreError};

/// A batch as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchRecord {
    pub id: String,
    pub tenant_id: String,
    pub environment: String,
    pub mode: String,
    pub profile: Option<String>,
    pub rules_at: String,
    pub input_sha256: String,
    pub input_bytes: i64,
    pub status: String,
    pub documents: i64,
    pub done: i64,
    pub error: Option<String>,
    pub idempotency_key: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// The file the batch was made of, when named (an SFTP file).
    pub input_name: Option<String>,
    /// `document`, `zip` or `ndjson` when known; else read from the upload's first bytes.
    pub input_kind: Option<String>,
    /// The upload's pieces stay after the split (to be read again).
    pub keep_input: bool,
}

const BATCH: &str = "id, tenant_id, environment, mode, profile, rules_at, input_sha256, \
                     input_bytes, status, documents, done, error, idempotency_key, created_at, \
                     started_at, finished_at, input_name, input_kind, keep_input";

impl BatchRecord {
    fn from_row(row: &sqlx::any::AnyRow) -> Result<BatchRecord, sqlx::Error> {
        Ok(BatchRecord {
            id: text(row, "id")?,
            tenant_id: text(row, "tenant_id")?,
            environment: text(row, "environment")?,
            mode: text(row, "mode")?,
            profile: opt_text(row, "profile")?,
            rules_at: text(row, "rules_at")?,
            input_sha256: text(row, "input_sha256")?,
            input_bytes: row.try_get("input_bytes")?,
            status: text(row, "status")?,
            documents: row.try_get("documents")?,
            done: row.try_get("done")?,
            error: opt_text(row, "error")?,
            idempotency_key: opt_text(row, "idempotency_key")?,
            created_at: text(row, "created_at")?,
            started_at: opt_text(row, "started_at")?,
            finished_at: opt_text(row, "finished_at")?,
            input_name: opt_text(row, "input_name")?,
            input_kind: opt_text(row, "input_kind")?,
            keep_input: row.try_get::<i64, _>("keep_input")? != 0,
        })
    }
}

/// A document of a batch, as split from the upload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewBatchDocument {
    pub seq: i64,
    pub name: String,
    pub size_bytes: i64,
    pub sha256: String,
    /// Base64.
    pub content: String,
}

/// A document a worker holds, with what it needs to process it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedDocument {
    pub batch_id: String,
    pub seq: i64,
    pub name: String,
    /// Base64.
    pub content: String,
    pub tenant_id: String,
    pub environment: String,
    pub mode: String,
    pub profile: Option<String>,
    pub rules_at: String,
    /// The batch is `checking` (mode `send`): the document's identifiers are to be checked,
    /// not the document processed.
    pub checking: bool,
}

/// A document's identifiers checked (a batch in mode `send`, before anything is sent).
#[derive(Clone, Debug)]
pub struct DocumentCheck {
    pub batch_id: String,
    pub seq: i64,
    /// The identifiers that failed, as a JSON array (`[]`: none).
    pub faults: String,
}

/// A document whose identifiers failed their checks.
#[derive(Clone, Debug)]
pub struct CheckFailure {
    pub seq: i64,
    pub name: String,
    /// The failed identifiers (JSON array).
    pub identifiers: serde_json::Value,
}

/// How a batch's check ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Checked {
    /// Every identifier passed: the batch is `processing` (its documents are sent).
    Passed(String),
    /// Some failed: the batch is `refused`, nothing of it is sent.
    Refused(String),
}

/// A processed document's outcome.
#[derive(Clone, Debug)]
pub struct DocumentResult {
    pub batch_id: String,
    pub seq: i64,
    pub outcome: String,
    /// JSON.
    pub result: String,
    /// Events to queue with it (e.g. `invoice.remediation_required`).
    pub notices: Vec<Notice>,
    /// The conversions it made (mode `convert`) and the file they were read from: stored
    /// with the result, in its transaction, so that a document converted twice (its first
    /// worker died after converting) still leaves its conversions once.
    pub conversions: Vec<super::ConversionRecord>,
    pub inputs: Vec<super::InputRecord>,
}

/// A document's outcome as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentRow {
    pub seq: i64,
    pub name: String,
    pub size_bytes: i64,
    pub sha256: String,
    pub attempts: i64,
    pub outcome: Option<String>,
    pub result: Option<String>,
    pub finished_at: Option<String>,
}

/// What inserting a batch did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchInserted {
    Created,
    /// The tenant sent this idempotency key before: the batch it made.
    Existing(String),
}

fn unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.is_unique_violation())
}

impl Store {
    /// Store a new batch (status `uploading`); a repeated idempotency key stores nothing.
    pub async fn insert_batch(&self, b: &BatchRecord) -> Result<BatchInserted, StoreError> {
        let done = sqlx::query(&format!(
            "INSERT INTO batches ({BATCH}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
             $18, $19)"
        ))
        .bind(&b.id)
        .bind(&b.tenant_id)
        .bind(&b.environment)
        .bind(&b.mode)
        .bind(b.profile.as_deref())
        .bind(&b.rules_at)
        .bind(&b.input_sha256)
        .bind(b.input_bytes)
        .bind(&b.status)
        .bind(b.documents)
        .bind(b.done)
        .bind(b.error.as_deref())
        .bind(b.idempotency_key.as_deref())
        .bind(&b.created_at)
        .bind(b.started_at.as_deref())
        .bind(b.finished_at.as_deref())
        .bind(b.input_name.as_deref())
        .bind(b.input_kind.as_deref())
        .bind(i64::from(b.keep_input))
        .execute(self.pool())
        .await;
        match done {
            Ok(_) => Ok(BatchInserted::Created),
            Err(e) if unique_violation(&e) => {
                let id: Option<String> = sqlx::query_scalar(
                    "SELECT id FROM batches WHERE tenant_id = $1 AND idempotency_key = $2",
                )
                .bind(&b.tenant_id)
                .bind(b.idempotency_key.as_deref())
                .fetch_optional(self.pool())
                .await?;
                match id {
                    Some(id) => Ok(BatchInserted::Existing(id)),
                    None => Err(StoreError::Database(e)),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// One piece of an upload under way.
    pub async fn insert_batch_chunk(
        &self,
        batch_id: &str,
        n: i64,
        data: &str,
    ) -> Result<(), StoreError> {
        sqlx::query("INSERT INTO batch_chunks (batch_id, n, data) VALUES ($1, $2, $3)")
            .bind(batch_id)
            .bind(n)
            .bind(data)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The upload arrived whole: the batch may be split.
    pub async fn finish_batch_upload(
        &self,
        batch_id: &str,
        sha256: &str,
        bytes: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE batches SET status = 'received', input_sha256 = $2, input_bytes = $3 \
             WHERE id = $1 AND status = 'uploading'",
        )
        .bind(batch_id)
        .bind(sha256)
        .bind(bytes)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Forget an upload that did not arrive whole (the client went away, a limit).
    pub async fn drop_batch_upload(&self, batch_id: &str) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query("DELETE FROM batch_chunks WHERE batch_id = $1")
            .bind(batch_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query("DELETE FROM batches WHERE id = $1 AND status = 'uploading'")
            .bind(batch_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Delete uploads still arriving that began before `before` (abandoned), with their
    /// pieces; how many.
    pub async fn drop_abandoned_uploads(&self, before: &str) -> Result<u64, StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query(
            "DELETE FROM batch_chunks WHERE batch_id IN \
             (SELECT id FROM batches WHERE status = 'uploading' AND created_at < $1)",
        )
        .bind(before)
        .execute(&mut *tx)
        .await?;
        let gone =
            sqlx::query("DELETE FROM batches WHERE status = 'uploading' AND created_at < $1")
                .bind(before)
                .execute(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(gone.rows_affected())
    }

    /// A batch of the tenant.
    pub async fn batch(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<Option<BatchRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {BATCH} FROM batches WHERE tenant_id = $1 AND id = $2"
        ))
        .bind(tenant_id)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(BatchRecord::from_row).transpose()?)
    }

    /// How many documents of the batch ended with each outcome.
    pub async fn batch_outcomes(&self, batch_id: &str) -> Result<Vec<(String, i64)>, StoreError> {
        let mut conn = self.pool().acquire().await?;
        outcomes(&mut conn, batch_id).await
    }

    /// Claim a received batch to split it, until `lease_until`.
    pub async fn claim_batch_to_split(
        &self,
        worker: &str,
        now: &str,
        lease_until: &str,
    ) -> Result<Option<BatchRecord>, StoreError> {
        let candidates: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM batches WHERE status = 'received' \
             AND (claimed_until IS NULL OR claimed_until < $1) ORDER BY created_at LIMIT 4",
        )
        .bind(now)
        .fetch_all(self.pool())
        .await?;
        for id in candidates {
            let row = sqlx::query(&format!(
                "UPDATE batches SET claimed_by = $2, claimed_until = $3 \
                 WHERE id = $1 AND status = 'received' \
                 AND (claimed_until IS NULL OR claimed_until < $4) RETURNING {BATCH}"
            ))
            .bind(&id)
            .bind(worker)
            .bind(lease_until)
            .bind(now)
            .fetch_optional(self.pool())
            .await?;
            if let Some(row) = row {
                return Ok(Some(BatchRecord::from_row(&row)?));
            }
        }
        Ok(None)
    }

    /// Extend the lease of a batch being split; false when it is not ours any more.
    pub async fn renew_batch_claim(
        &self,
        batch_id: &str,
        worker: &str,
        lease_until: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE batches SET claimed_until = $3 WHERE id = $1 AND claimed_by = $2 \
             AND status = 'received'",
        )
        .bind(batch_id)
        .bind(worker)
        .bind(lease_until)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// The pieces of an upload from `from` on, in order.
    pub async fn batch_chunks(
        &self,
        batch_id: &str,
        from: i64,
        limit: i64,
    ) -> Result<Vec<(i64, String)>, StoreError> {
        let rows = sqlx::query(
            "SELECT n, data FROM batch_chunks WHERE batch_id = $1 AND n >= $2 ORDER BY n LIMIT $3",
        )
        .bind(batch_id)
        .bind(from)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| Ok((r.try_get::<i64, _>("n")?, text(r, "data")?)))
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// Store documents split from a batch; a document stored before (a split resumed after
    /// a crash) is kept as it is.
    pub async fn insert_batch_documents(
        &self,
        batch_id: &str,
        docs: &[NewBatchDocument],
    ) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        for d in docs {
            sqlx::query(
                "INSERT INTO batch_documents \
                 (batch_id, seq, name, size_bytes, sha256, content, attempts) \
                 VALUES ($1, $2, $3, $4, $5, $6, 0) ON CONFLICT (batch_id, seq) DO NOTHING",
            )
            .bind(batch_id)
            .bind(d.seq)
            .bind(&d.name)
            .bind(d.size_bytes)
            .bind(&d.sha256)
            .bind(&d.content)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The split is done: `documents` documents are ready for the workers; the upload's
    /// pieces go. Only the worker holding the split's claim can do this, once.
    /// `status` is `processing`, or `checking` for a batch whose identifiers are checked
    /// before it is processed.
    pub async fn start_batch(
        &self,
        batch_id: &str,
        worker: &str,
        documents: i64,
        now: &str,
        status: &str,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let started = sqlx::query(
            "UPDATE batches SET status = $5, documents = $3, started_at = $4, \
             claimed_by = NULL, claimed_until = NULL \
             WHERE id = $1 AND claimed_by = $2 AND status = 'received'",
        )
        .bind(batch_id)
        .bind(worker)
        .bind(documents)
        .bind(now)
        .bind(status)
        .execute(&mut *tx)
        .await?;
        if started.rows_affected() != 1 {
            return Ok(false);
        }
        sqlx::query(
            "DELETE FROM batch_chunks WHERE batch_id = $1 \
             AND (SELECT keep_input FROM batches WHERE id = $1) = 0",
        )
        .bind(batch_id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// The batch cannot be split (not a ZIP, a limit): it fails as a whole, with `notice`.
    pub async fn fail_batch(
        &self,
        batch: &BatchRecord,
        worker: &str,
        error: &str,
        now: &str,
        notice: &Notice,
    ) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let failed = sqlx::query(
            "UPDATE batches SET status = 'failed', error = $3, finished_at = $4, \
             claimed_by = NULL, claimed_until = NULL \
             WHERE id = $1 AND claimed_by = $2 AND status = 'received'",
        )
        .bind(&batch.id)
        .bind(worker)
        .bind(error)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if failed.rows_affected() != 1 {
            return Ok(false);
        }
        for table in ["batch_chunks", "batch_documents"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE batch_id = $1"))
                .bind(&batch.id)
                .execute(&mut *tx)
                .await?;
        }
        queue(
            &mut tx,
            &batch.tenant_id,
            &batch.id,
            std::slice::from_ref(notice),
        )
        .await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Claim up to `limit` pending documents until `lease_until`: of processing batches,
    /// documents without an outcome; of checking batches, documents not yet checked.
    pub async fn claim_batch_documents(
        &self,
        worker: &str,
        now: &str,
        lease_until: &str,
        limit: i64,
    ) -> Result<Vec<ClaimedDocument>, StoreError> {
        let mut tx = self.pool().begin().await?;
        // The outer conditions are checked again on each row (PostgreSQL re-reads a row
        // another transaction changed): of two workers, one gets a document.
        let claimed = sqlx::query(
            "UPDATE batch_documents SET claimed_by = $1, claimed_until = $2, \
             attempts = attempts + 1 \
             WHERE (batch_id, seq) IN ( \
                 SELECT d.batch_id, d.seq FROM batch_documents d \
                 JOIN batches b ON b.id = d.batch_id \
                 WHERE ((b.status = 'processing' AND d.outcome IS NULL) \
                     OR (b.status = 'checking' AND d.checked IS NULL)) \
                 AND (d.claimed_until IS NULL OR d.claimed_until < $3) \
                 ORDER BY d.batch_id, d.seq LIMIT $4) \
             AND outcome IS NULL AND (claimed_until IS NULL OR claimed_until < $3) \
             RETURNING batch_id, seq, name, content, checked",
        )
        .bind(worker)
        .bind(lease_until)
        .bind(now)
        .bind(limit)
        .fetch_all(&mut *tx)
        .await?;
        let mut out = Vec::with_capacity(claimed.len());
        let mut batches: Vec<BatchRecord> = Vec::new();
        for row in &claimed {
            let batch_id = text(row, "batch_id")?;
            if !batches.iter().any(|b| b.id == batch_id) {
                let b = sqlx::query(&format!("SELECT {BATCH} FROM batches WHERE id = $1"))
                    .bind(&batch_id)
                    .fetch_one(&mut *tx)
                    .await?;
                batches.push(BatchRecord::from_row(&b)?);
            }
            let Some(b) = batches.iter().find(|b| b.id == batch_id) else {
                continue;
            };
            let checking = b.status == "checking";
            // Checked by another worker between the choice and the claim: nothing to do
            // (the claim runs out; the batch moves on without it).
            if checking && opt_text(row, "checked")?.is_some() {
                continue;
            }
            out.push(ClaimedDocument {
                batch_id: batch_id.clone(),
                seq: row.try_get("seq")?,
                name: text(row, "name")?,
                content: opt_text(row, "content")?.unwrap_or_default(),
                tenant_id: b.tenant_id.clone(),
                environment: b.environment.clone(),
                mode: b.mode.clone(),
                profile: b.profile.clone(),
                rules_at: b.rules_at.clone(),
                checking,
            });
        }
        tx.commit().await?;
        Ok(out)
    }

    /// Write the identifier checks of documents this worker holds, in one transaction: each
    /// once, counted in `done`; a batch whose every document is now checked goes on to
    /// `processing` (`done` back to 0, for the sending) when none failed, else is `refused`
    /// as a whole: documents that failed get outcome `refused` (their identifiers as the
    /// result), the others `withheld`, with the events `refused` makes of the failures.
    pub async fn record_batch_checks(
        &self,
        worker: &str,
        checks: &[DocumentCheck],
        now: &str,
        refused: impl Fn(&BatchRecord, &[CheckFailure], &[(String, i64)]) -> Vec<Notice>,
    ) -> Result<Vec<Checked>, StoreError> {
        let mut tx = self.pool().begin().await?;
        let mut counted: Vec<(String, i64)> = Vec::new();
        for c in checks {
            let written = sqlx::query(
                "UPDATE batch_documents SET checked = $4, claimed_until = NULL \
                 WHERE batch_id = $1 AND seq = $2 AND claimed_by = $3 AND checked IS NULL",
            )
            .bind(&c.batch_id)
            .bind(c.seq)
            .bind(worker)
            .bind(&c.faults)
            .execute(&mut *tx)
            .await?;
            if written.rows_affected() != 1 {
                continue;
            }
            match counted.iter_mut().find(|(b, _)| *b == c.batch_id) {
                Some((_, n)) => *n += 1,
                None => counted.push((c.batch_id.clone(), 1)),
            }
        }
        let mut ended = Vec::new();
        for (batch_id, n) in counted {
            sqlx::query("UPDATE batches SET done = done + $2 WHERE id = $1")
                .bind(&batch_id)
                .bind(n)
                .execute(&mut *tx)
                .await?;
            let failures: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM batch_documents WHERE batch_id = $1 AND checked <> '[]'",
            )
            .bind(&batch_id)
            .fetch_one(&mut *tx)
            .await?;
            // Of the workers recording the last checks, one sees them all (the update of
            // `done` above waits for the other's transaction).
            let row = if failures == 0 {
                sqlx::query(&format!(
                    "UPDATE batches SET status = 'processing', done = 0, started_at = $2 \
                     WHERE id = $1 AND status = 'checking' AND done >= documents \
                     RETURNING {BATCH}"
                ))
                .bind(&batch_id)
                .bind(now)
                .fetch_optional(&mut *tx)
                .await?
            } else {
                sqlx::query(&format!(
                    "UPDATE batches SET status = 'refused', finished_at = $2, error = $3 \
                     WHERE id = $1 AND status = 'checking' AND done >= documents \
                     RETURNING {BATCH}"
                ))
                .bind(&batch_id)
                .bind(now)
                .bind(format!(
                    "{failures} document(s) have identifiers that fail their checks: nothing of \
                     the batch was sent; correct them and submit the batch again"
                ))
                .fetch_optional(&mut *tx)
                .await?
            };
            let Some(row) = row else { continue };
            let batch = BatchRecord::from_row(&row)?;
            if failures == 0 {
                ended.push(Checked::Passed(batch.id));
                continue;
            }
            sqlx::query(
                "UPDATE batch_documents SET \
                 outcome = CASE WHEN checked = '[]' THEN 'withheld' ELSE 'refused' END, \
                 result = CASE WHEN checked = '[]' \
                     THEN '{\"detail\":\"not sent: identifiers of other documents of the batch \
                          fail their checks, and a batch is sent whole or not at all\"}' \
                     ELSE '{\"identifiers\":' || checked || '}' END, \
                 finished_at = $2, content = NULL, claimed_until = NULL \
                 WHERE batch_id = $1",
            )
            .bind(&batch.id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            let rows = sqlx::query(
                "SELECT seq, name, checked FROM batch_documents \
                 WHERE batch_id = $1 AND checked <> '[]' ORDER BY seq",
            )
            .bind(&batch.id)
            .fetch_all(&mut *tx)
            .await?;
            let list = rows
                .iter()
                .map(|r| {
                    Ok(CheckFailure {
                        seq: r.try_get("seq")?,
                        name: text(r, "name")?,
                        identifiers: serde_json::from_str(&text(r, "checked")?).unwrap_or_default(),
                    })
                })
                .collect::<Result<Vec<_>, sqlx::Error>>()?;
            let counts = outcomes(&mut tx, &batch.id).await?;
            queue(
                &mut tx,
                &batch.tenant_id,
                &batch.id,
                &refused(&batch, &list, &counts),
            )
            .await?;
            ended.push(Checked::Refused(batch.id));
        }
        tx.commit().await?;
        Ok(ended)
    }

    /// Write the results of documents this worker holds, in one transaction: each result
    /// once (a document whose claim passed to another worker is left to it), the batches'
    /// counts, the results' events, and for every batch that is now complete, its
    /// `completed` notice. The ids of the batches completed.
    pub async fn record_batch_results(
        &self,
        worker: &str,
        results: &[DocumentResult],
        now: &str,
        completed: impl Fn(&BatchRecord, &[(String, i64)]) -> Notice,
    ) -> Result<Vec<String>, StoreError> {
        let mut tx = self.pool().begin().await?;
        let mut counted: Vec<(String, i64)> = Vec::new();
        for r in results {
            let written = sqlx::query(
                "UPDATE batch_documents SET outcome = $4, result = $5, finished_at = $6, \
                 content = NULL, claimed_until = NULL \
                 WHERE batch_id = $1 AND seq = $2 AND claimed_by = $3 AND outcome IS NULL",
            )
            .bind(&r.batch_id)
            .bind(r.seq)
            .bind(worker)
            .bind(&r.outcome)
            .bind(&r.result)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            if written.rows_affected() != 1 {
                continue;
            }
            if !r.conversions.is_empty() {
                super::conversions::insert_conversions_in(&mut tx, &r.conversions, &r.inputs)
                    .await?;
            }
            match counted.iter_mut().find(|(b, _)| *b == r.batch_id) {
                Some((_, n)) => *n += 1,
                None => counted.push((r.batch_id.clone(), 1)),
            }
            if !r.notices.is_empty() {
                let tenant: String =
                    sqlx::query_scalar("SELECT tenant_id FROM batches WHERE id = $1")
                        .bind(&r.batch_id)
                        .fetch_one(&mut *tx)
                        .await?;
                queue(&mut tx, &tenant, &r.batch_id, &r.notices).await?;
            }
        }
        let mut finished = Vec::new();
        for (batch_id, n) in counted {
            sqlx::query("UPDATE batches SET done = done + $2 WHERE id = $1")
                .bind(&batch_id)
                .bind(n)
                .execute(&mut *tx)
                .await?;
            let row = sqlx::query(&format!(
                "UPDATE batches SET status = 'completed', finished_at = $2 \
                 WHERE id = $1 AND status = 'processing' AND done >= documents RETURNING {BATCH}"
            ))
            .bind(&batch_id)
            .bind(now)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(row) = row {
                let batch = BatchRecord::from_row(&row)?;
                let counts = outcomes(&mut tx, &batch.id).await?;
                queue(
                    &mut tx,
                    &batch.tenant_id,
                    &batch.id,
                    std::slice::from_ref(&completed(&batch, &counts)),
                )
                .await?;
                finished.push(batch.id);
            }
        }
        tx.commit().await?;
        Ok(finished)
    }

    /// A page of a batch's documents by sequence, after `after`; `outcome` filters.
    pub async fn batch_documents(
        &self,
        batch_id: &str,
        after: i64,
        limit: i64,
        outcome: Option<&str>,
        with_results: bool,
    ) -> Result<Vec<DocumentRow>, StoreError> {
        let result = if with_results {
            "result"
        } else {
            "NULL AS result"
        };
        let rows = sqlx::query(&format!(
            "SELECT seq, name, size_bytes, sha256, attempts, outcome, {result}, finished_at \
             FROM batch_documents WHERE batch_id = $1 AND seq > $2 \
             AND (CAST($4 AS TEXT) IS NULL OR outcome = $4) ORDER BY seq LIMIT $3"
        ))
        .bind(batch_id)
        .bind(after)
        .bind(limit)
        .bind(outcome)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(DocumentRow {
                    seq: r.try_get("seq")?,
                    name: text(r, "name")?,
                    size_bytes: r.try_get("size_bytes")?,
                    sha256: text(r, "sha256")?,
                    attempts: r.try_get("attempts")?,
                    outcome: opt_text(r, "outcome")?,
                    result: opt_text(r, "result")?,
                    finished_at: opt_text(r, "finished_at")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }
}

async fn outcomes(
    conn: &mut sqlx::AnyConnection,
    batch_id: &str,
) -> Result<Vec<(String, i64)>, StoreError> {
    let rows = sqlx::query(
        "SELECT outcome, COUNT(*) AS n FROM batch_documents \
         WHERE batch_id = $1 AND outcome IS NOT NULL GROUP BY outcome ORDER BY outcome",
    )
    .bind(batch_id)
    .fetch_all(&mut *conn)
    .await?;
    rows.iter()
        .map(|r| Ok((text(r, "outcome")?, r.try_get::<i64, _>("n")?)))
        .collect::<Result<_, sqlx::Error>>()
        .map_err(StoreError::from)
}
