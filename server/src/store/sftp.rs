//! SFTP drop folders as stored: the accounts (with their public keys), the files each
//! account delivered (once per content), and the server's host key.

use sqlx::Row;

use super::{opt_text, text, Store, StoreError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SftpAccountRecord {
    /// Also the SSH user name.
    pub id: String,
    pub tenant_id: String,
    pub name: String,
    pub role: String,
    /// OpenSSH public key lines, one per line.
    pub public_keys: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
    /// What its deliveries become: batches of this mode (`validate`, `convert`, `send`).
    pub mode: String,
    /// The profile of those batches; detected per document when absent.
    pub profile: Option<String>,
}

const ACCOUNT: &str =
    "id, tenant_id, name, role, public_keys, created_at, revoked_at, mode, profile";

impl SftpAccountRecord {
    fn from_row(row: &sqlx::any::AnyRow) -> Result<SftpAccountRecord, sqlx::Error> {
        Ok(SftpAccountRecord {
            id: text(row, "id")?,
            tenant_id: text(row, "tenant_id")?,
            name: text(row, "name")?,
            role: text(row, "role")?,
            public_keys: text(row, "public_keys")?,
            created_at: text(row, "created_at")?,
            revoked_at: opt_text(row, "revoked_at")?,
            mode: text(row, "mode")?,
            profile: opt_text(row, "profile")?,
        })
    }
}

/// A file an account delivered, with the state of the batch made of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SftpFileRow {
    pub name: String,
    pub sha256: String,
    pub size_bytes: i64,
    pub batch_id: String,
    pub received_at: String,
    /// The batch's status (`received`, `processing`, `completed`, `failed`).
    pub status: String,
    pub input_kind: Option<String>,
    pub error: Option<String>,
    /// The one document of a single-document file, once it has its outcome (asked for with
    /// `with_outcomes`).
    pub document: Option<super::DocumentRow>,
}

impl Store {
    pub async fn insert_sftp_account(&self, a: &SftpAccountRecord) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO sftp_accounts ({ACCOUNT}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        ))
        .bind(&a.id)
        .bind(&a.tenant_id)
        .bind(&a.name)
        .bind(&a.role)
        .bind(&a.public_keys)
        .bind(&a.created_at)
        .bind(a.revoked_at.as_deref())
        .bind(&a.mode)
        .bind(a.profile.as_deref())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The tenant's accounts, revoked ones included, oldest first.
    pub async fn sftp_accounts(
        &self,
        tenant_id: &str,
    ) -> Result<Vec<SftpAccountRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {ACCOUNT} FROM sftp_accounts WHERE tenant_id = $1 ORDER BY created_at, id"
        ))
        .bind(tenant_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(SftpAccountRecord::from_row)
            .collect::<Result<_, _>>()
            .map_err(StoreError::from)
    }

    /// An account by its id (the SSH user name), of any tenant: for signing in.
    pub async fn sftp_account(&self, id: &str) -> Result<Option<SftpAccountRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {ACCOUNT} FROM sftp_accounts WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(SftpAccountRecord::from_row).transpose()?)
    }

    /// Revoke the tenant's account `id`; whether it was active.
    pub async fn revoke_sftp_account(
        &self,
        tenant_id: &str,
        id: &str,
        now: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE sftp_accounts SET revoked_at = $3 \
             WHERE tenant_id = $1 AND id = $2 AND revoked_at IS NULL",
        )
        .bind(tenant_id)
        .bind(id)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Record that `account_id` delivered the content `sha256` as `name`, made into
    /// `batch_id`. The same content again keeps its first record.
    pub async fn record_sftp_file(
        &self,
        account_id: &str,
        sha256: &str,
        name: &str,
        size_bytes: i64,
        batch_id: &str,
        now: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO sftp_files (account_id, sha256, name, size_bytes, batch_id, received_at) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (account_id, sha256) DO NOTHING",
        )
        .bind(account_id)
        .bind(sha256)
        .bind(name)
        .bind(size_bytes)
        .bind(batch_id)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The newest `limit` files of an account, oldest first, with their batches' states and,
    /// `with_outcomes`, a single document's outcome and result: one query for a folder.
    pub async fn sftp_files(
        &self,
        account_id: &str,
        limit: i64,
        with_outcomes: bool,
    ) -> Result<Vec<SftpFileRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT f.name, f.sha256, f.size_bytes, f.batch_id, f.received_at, b.status, \
             b.input_kind, b.error, d.seq AS d_seq, d.name AS d_name, \
             d.size_bytes AS d_size_bytes, d.sha256 AS d_sha256, d.attempts AS d_attempts, \
             d.outcome AS d_outcome, d.result AS d_result, d.finished_at AS d_finished_at \
             FROM sftp_files f JOIN batches b ON b.id = f.batch_id \
             LEFT JOIN batch_documents d ON $3 = 1 AND d.batch_id = f.batch_id AND d.seq = 1 \
                 AND b.input_kind = 'document' AND d.outcome IS NOT NULL \
             WHERE f.account_id = $1 ORDER BY f.received_at DESC, f.sha256 LIMIT $2",
        )
        .bind(account_id)
        .bind(limit)
        .bind(i64::from(with_outcomes))
        .fetch_all(self.pool())
        .await?;
        let mut files = rows
            .iter()
            .map(|r| {
                let document = match r.try_get::<Option<i64>, _>("d_seq")? {
                    Some(seq) => Some(super::DocumentRow {
                        seq,
                        name: text(r, "d_name")?,
                        size_bytes: r.try_get("d_size_bytes")?,
                        sha256: text(r, "d_sha256")?,
                        attempts: r.try_get("d_attempts")?,
                        outcome: opt_text(r, "d_outcome")?,
                        result: opt_text(r, "d_result")?,
                        finished_at: opt_text(r, "d_finished_at")?,
                    }),
                    None => None,
                };
                Ok(SftpFileRow {
                    name: text(r, "name")?,
                    sha256: text(r, "sha256")?,
                    size_bytes: r.try_get("size_bytes")?,
                    batch_id: text(r, "batch_id")?,
                    received_at: text(r, "received_at")?,
                    status: text(r, "status")?,
                    input_kind: opt_text(r, "input_kind")?,
                    error: opt_text(r, "error")?,
                    document,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()?;
        files.reverse();
        Ok(files)
    }

    /// The SSH host key, made by the first instance that needed one: `candidate` is stored
    /// unless another instance stored its own first; the one stored is returned.
    pub async fn sftp_host_key(&self, candidate: &str, now: &str) -> Result<String, StoreError> {
        sqlx::query(
            "INSERT INTO sftp_host_keys (id, private_key, created_at) VALUES ('host', $1, $2) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(candidate)
        .bind(now)
        .execute(self.pool())
        .await?;
        let key: String =
            sqlx::query_scalar("SELECT private_key FROM sftp_host_keys WHERE id = 'host'")
                .fetch_one(self.pool())
                .await?;
        Ok(key)
    }
}
