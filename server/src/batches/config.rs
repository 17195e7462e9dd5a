//! `[batches]` configuration and its `INVEX_BATCHES_*` variables.

use serde::{Deserialize, Serialize};

use crate::settings::{parse, parse_bool};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BatchesConfig {
    /// Run the batch worker in this instance (several may: documents are claimed with
    /// leases, so each is processed by one worker).
    pub worker: bool,
    /// Claimers in this instance's worker (one validates while another records).
    pub loops: u32,
    /// How often an idle worker looks for work, in milliseconds.
    pub poll_ms: u64,
    /// How long a claim holds before another worker may take the work over, in seconds.
    pub lease_secs: u64,
    /// Documents a worker claims at once.
    pub claim: u32,
    /// Largest upload, in bytes.
    pub max_bytes: u64,
    /// Most documents in one batch.
    pub max_documents: u64,
    /// Largest document in a batch (unpacked), in bytes.
    pub max_document_bytes: u64,
    /// Most bytes a batch may unpack to in all.
    pub max_unpacked_bytes: u64,
    /// An upload still arriving after this many seconds was abandoned (its client went away
    /// and never retried): the worker deletes it and its pieces.
    pub abandoned_upload_secs: u64,
}

impl Default for BatchesConfig {
    fn default() -> Self {
        BatchesConfig {
            worker: true,
            loops: 2,
            poll_ms: 500,
            lease_secs: 120,
            claim: 256,
            max_bytes: 1 << 30,
            max_documents: 100_000,
            max_document_bytes: 16 << 20,
            max_unpacked_bytes: 8 << 30,
            abandoned_upload_secs: 24 * 3600,
        }
    }
}

impl BatchesConfig {
    /// Apply one `INVEX_BATCHES_*` variable (`key` without the `INVEX_` prefix).
    pub fn apply_env(&mut self, key: &str, value: String) -> Result<(), String> {
        match key {
            "BATCHES_WORKER" => self.worker = parse_bool(&value)?,
            "BATCHES_LOOPS" => self.loops = parse(&value)?,
            "BATCHES_POLL_MS" => self.poll_ms = parse(&value)?,
            "BATCHES_LEASE_SECS" => self.lease_secs = parse(&value)?,
            "BATCHES_CLAIM" => self.claim = parse(&value)?,
            "BATCHES_MAX_BYTES" => self.max_bytes = parse(&value)?,
            "BATCHES_MAX_DOCUMENTS" => self.max_documents = parse(&value)?,
            "BATCHES_MAX_DOCUMENT_BYTES" => self.max_document_bytes = parse(&value)?,
            "BATCHES_MAX_UNPACKED_BYTES" => self.max_unpacked_bytes = parse(&value)?,
            "BATCHES_ABANDONED_UPLOAD_SECS" => self.abandoned_upload_secs = parse(&value)?,
            other => return Err(format!("unknown variable INVEX_{other}")),
        }
        Ok(())
    }
}
