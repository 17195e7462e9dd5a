//! A file complete in `inbox/` becomes a batch: one document, or a whole ZIP or NDJSON feed
//! (by its name), taken as an HTTP upload is and processed by the same workers. The batch's
//! idempotency key is the account and the file's SHA-256, so the same bytes delivered again
//! (a retry after a lost answer, a restart) are the same batch: nothing is processed twice.
//! The close that delivered the file is answered only once the batch and its record are
//! stored, so a client that saw `OK` has lost nothing, and one that did not sends again.

use std::io::{Read, Seek};

use sha2::{Digest, Sha256};

use crate::batches::{self, BatchesConfig, InputKind, Intake, IntakeError, Mode, NewBatch};
use crate::store::{SftpAccountRecord, Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    #[error("the file is empty")]
    Empty,
    #[error("the file is larger than {limit} bytes (INVEX_BATCHES_MAX_BYTES)")]
    TooLarge { limit: u64 },
    #[error("reading the delivered file: {0}")]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("storing the file: {0}")]
    Intake(String),
}

/// Deliver `file` (rewound or not), named `name` in `inbox/`, for `account`; the batch id.
pub async fn deliver(
    store: &Store,
    config: &BatchesConfig,
    environment: &str,
    account: &SftpAccountRecord,
    name: &str,
    mut file: std::fs::File,
) -> Result<String, DeliverError> {
    let (file, sha256, size) = tokio::task::spawn_blocking(move || {
        file.rewind()?;
        let mut hash = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut size: u64 = 0;
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hash.update(&buf[..n]);
            size += n as u64;
        }
        file.rewind()?;
        Ok::<_, std::io::Error>((file, hex::encode(hash.finalize()), size))
    })
    .await
    .map_err(|e| DeliverError::Io(std::io::Error::other(e)))??;
    if size == 0 {
        return Err(DeliverError::Empty);
    }
    if size > config.max_bytes {
        return Err(DeliverError::TooLarge {
            limit: config.max_bytes,
        });
    }
    let new = NewBatch {
        tenant_id: account.tenant_id.clone(),
        environment: environment.to_string(),
        mode: Mode::parse(&account.mode).unwrap_or(Mode::Validate),
        profile: account.profile.clone(),
        rules_at: invex_engine::registry::today(),
        idempotency_key: Some(format!("sftp:{}:{sha256}", account.id)),
        input_name: Some(name.to_string()),
        input_kind: Some(InputKind::of_name(name)),
        keep_input: true,
    };
    let body =
        tokio_util::io::ReaderStream::with_capacity(tokio::fs::File::from_std(file), 1 << 20);
    let batch = match batches::receive(store, config, new, body).await {
        Ok(Intake::Created(b)) | Ok(Intake::Existing(b)) => b,
        Err(IntakeError::TooLarge { limit }) => return Err(DeliverError::TooLarge { limit }),
        Err(IntakeError::Empty) => return Err(DeliverError::Empty),
        Err(IntakeError::Body(e)) => return Err(DeliverError::Intake(e)),
        Err(IntakeError::Store(e)) => return Err(DeliverError::Store(e)),
    };
    store
        .record_sftp_file(
            &account.id,
            &sha256,
            name,
            size as i64,
            &batch.id,
            &crate::clock::now(),
        )
        .await?;
    tracing::info!(account = %account.id, file = name, batch = %batch.id, "sftp file delivered");
    Ok(batch.id)
}
