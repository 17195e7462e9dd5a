//! Storage with sqlx: SQLite embedded by default, PostgreSQL when several instances share
//! one database. One portable schema (`server/migrations`), run at start.

mod backlog;
mod batches;
mod conversions;
mod instances;
mod keys;
mod people;
mod sending;
mod sftp;
mod sso;
mod tenants;
mod usage;
mod validations;
pub mod webhooks;

use std::sync::{Arc, Once};

use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyPool, Row};
use tokio::sync::mpsc;

pub use backlog::Backlog;
pub use batches::{
    BatchInserted, BatchRecord, CheckFailure, Checked, ClaimedDocument, DocumentCheck,
    DocumentResult, DocumentRow, NewBatchDocument,
};
pub use conversions::{ConversionRecord, InputRecord};
pub use instances::{Generation, InstanceRow};
pub use keys::{KeyRecord, RevokeOutcome};
pub use people::{
    Invited, LinkRecord, PersonChange, PersonRecord, SessionRecord, SESSION_LINK, SESSION_PASSWORD,
    SESSION_SSO,
};
pub use sending::{
    entry_hash, ConnectionRecord, EventRecord, IdempotencyClaim, InvoiceFilter, InvoiceRecord,
    KeyCompletion, NewEvent, NewInvoice, Notice, ScheduledEvent, GENESIS_HASH,
};
pub use sftp::{SftpAccountRecord, SftpFileRow};
pub use sso::{SsoAttempt, SsoRecord, SsoSaved};
pub use tenants::{Tenant, TenantKind, OPERATOR_TENANT_ID};
pub use usage::UsageDelta;
pub use validations::ValidationRecord;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migrating the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("cannot create the database directory {path}: {source}")]
    Directory {
        path: String,
        source: std::io::Error,
    },
    #[error("unsupported database URL `{0}` (sqlite://... or postgres://...)")]
    UnsupportedUrl(String),
    #[error("the storage writer has stopped")]
    WriterStopped,
    #[error("{0}")]
    Shared(Arc<StoreError>),
    /// An idempotency key was taken over by another request (its holder was presumed
    /// dead): this request stored nothing.
    #[error("the idempotency key is no longer held by this request")]
    ClaimLost,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The database: a pool, and the group-commit writer for validation results.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    writer: mpsc::Sender<validations::WriteJob>,
}

static DRIVERS: Once = Once::new();

/// How often the SQLite write-ahead log is copied back into the database.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Copy the SQLite write-ahead log into the database every second, beside the writers
/// (a passive checkpoint waits for no one and blocks no one), until the store is gone.
async fn checkpoints(pool: AnyPool, writer: mpsc::WeakSender<validations::WriteJob>) {
    let mut tick = tokio::time::interval(CHECKPOINT_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        if writer.upgrade().is_none() || pool.is_closed() {
            return;
        }
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&pool)
            .await
        {
            tracing::warn!(error = %e, "SQLite checkpoint failed; retried in a second");
        }
    }
}

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

impl Store {
    /// Connect (creating an SQLite file and its directory when needed) and migrate.
    pub async fn connect(url: &str) -> Result<Store, StoreError> {
        DRIVERS.call_once(sqlx::any::install_default_drivers);
        let backend = if url.starts_with("sqlite:") {
            create_sqlite_dir(url)?;
            Backend::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Backend::Postgres
        } else {
            return Err(StoreError::UnsupportedUrl(url.to_string()));
        };
        let pool = AnyPoolOptions::new()
            .max_connections(match backend {
                // SQLite serialises writers; a few readers beside the writer are enough.
                Backend::Sqlite => 8,
                Backend::Postgres => 16,
            })
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    if backend == Backend::Sqlite {
                        // WAL (sqlx's default) with NORMAL sync: a commit survives a crash
                        // of the process; only a power or OS failure may lose the last
                        // commits. FULL would fsync every group commit and cap throughput
                        // at the disk's flush rate. Deployments that need power-loss
                        // durability use PostgreSQL.
                        sqlx::Executor::execute(&mut *conn, "PRAGMA synchronous = NORMAL").await?;
                        // Checkpoints run in the background (`checkpoints`), not inside
                        // the commit that crosses the threshold: a checkpoint there held
                        // every request waiting for that commit. The high threshold is
                        // only a safety net.
                        sqlx::Executor::execute(&mut *conn, "PRAGMA wal_autocheckpoint = 16384")
                            .await?;
                    }
                    Ok(())
                })
            })
            .connect(url)
            .await?;
        MIGRATOR.run(&pool).await?;
        let writer = validations::spawn_writer(pool.clone());
        if backend == Backend::Sqlite {
            tokio::spawn(checkpoints(pool.clone(), writer.downgrade()));
        }
        Ok(Store {
            pool,
            backend,
            writer,
        })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// A round trip to the database, for readiness.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// `sqlite://data/invex.db?mode=rwc` → make sure `data/` exists.
fn create_sqlite_dir(url: &str) -> Result<(), StoreError> {
    let rest = url.trim_start_matches("sqlite:").trim_start_matches("//");
    let path = rest.split('?').next().unwrap_or_default();
    if path.is_empty() || path.contains(":memory:") {
        return Ok(());
    }
    if let Some(parent) = std::path::Path::new(path).parent() {
        if !parent.as_os_str().is_empty() {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Directory {
                path: parent.display().to_string(),
                source,
            })?;
        }
    }
    Ok(())
}

fn text(row: &AnyRow, column: &str) -> Result<String, sqlx::Error> {
    row.try_get::<String, _>(column)
}

fn opt_text(row: &AnyRow, column: &str) -> Result<Option<String>, sqlx::Error> {
    row.try_get::<Option<String>, _>(column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_directory_is_taken_from_the_url() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("a/b/x.db");
        create_sqlite_dir(&format!("sqlite://{}?mode=rwc", db.display())).expect("create");
        assert!(dir.path().join("a/b").is_dir());
        create_sqlite_dir("sqlite::memory:").expect("memory");
    }
}
