//! The batch worker: splits received uploads and validates pending documents, claiming each
//! piece of work with a lease so that several instances share the work and a worker that
//! dies is replaced when its lease runs out. A result is recorded only by the holder of the
//! document's claim, once, with the batch's count and the events it causes (see
//! [`crate::store::Store::record_batch_results`]).

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use invex_engine::document::Limits as ParseLimits;
use invex_engine::registry::Registry;
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::split::{self, Split};
use super::BatchesConfig;
use crate::admission::Admission;
use crate::state::AppState;
use crate::store::{BatchRecord, Checked, ClaimedDocument, DocumentResult, Notice, Store};
use crate::webhooks::events::EventType;

/// What the worker works with: the server's state (its store, rules and pool of heavy
/// work, and for mode `send` the sending single sends use), and the settings read from it.
struct BatchWork {
    state: AppState,
    store: Store,
    registry: Arc<Registry>,
    admission: Arc<Admission>,
    config: BatchesConfig,
    parse: ParseLimits,
    max_findings: usize,
    /// The conversion settings (mode `convert`): threshold and reading limits.
    convert: crate::convert::config::ConvertConfig,
}

/// The running worker; stopping it lets the current rounds end (claims cut short expire).
pub struct BatchWorker {
    stop: watch::Sender<bool>,
    tasks: std::sync::Mutex<Vec<JoinHandle<()>>>,
}

impl BatchWorker {
    pub async fn stop(&self) {
        let _ = self.stop.send(true);
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|e| e.into_inner()));
        for mut task in tasks {
            if tokio::time::timeout(Duration::from_secs(10), &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

/// Start the worker: `config.loops` claimers, so that one validates while another records
/// its results (each claim is the work of one of them, under its own id).
pub fn spawn(state: &AppState) -> BatchWorker {
    let (tx, rx) = watch::channel(false);
    let work = Arc::new(BatchWork {
        store: state.store.clone(),
        registry: state.registry.clone(),
        admission: state.admission.clone(),
        config: state.config.batches.clone(),
        parse: crate::validation::parse_limits(state),
        max_findings: state.config.limits.max_findings,
        convert: state.config.convert.clone(),
        state: state.clone(),
    });
    let mut tasks: Vec<JoinHandle<()>> = (0..work.config.loops.max(1))
        .map(|_| tokio::spawn(run(work.clone(), crate::ids::new_id("wkr"), rx.clone())))
        .collect();
    tasks.push(tokio::spawn(sweep(work.clone(), rx)));
    BatchWorker {
        stop: tx,
        tasks: std::sync::Mutex::new(tasks),
    }
}

async fn run(work: Arc<BatchWork>, id: String, mut stop: watch::Receiver<bool>) {
    let idle = Duration::from_millis(work.config.poll_ms.max(10));
    loop {
        if *stop.borrow() {
            return;
        }
        let busy = match round(&work, &id).await {
            Ok(busy) => busy,
            Err(e) => {
                tracing::warn!(error = %e, "batch worker round failed; trying again");
                false
            }
        };
        if !busy {
            tokio::select! {
                _ = tokio::time::sleep(idle) => {}
                _ = stop.changed() => return,
            }
        }
    }
}

/// Delete abandoned uploads now and then: a client that went away mid-upload and never
/// retried leaves pieces nobody will split.
async fn sweep(work: Arc<BatchWork>, mut stop: watch::Receiver<bool>) {
    let age = Duration::from_secs(work.config.abandoned_upload_secs.max(1));
    let every = (age / 4).clamp(Duration::from_millis(200), Duration::from_secs(600));
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.changed() => return,
        }
        let before = crate::clock::format(chrono::Utc::now() - age);
        match work.store.drop_abandoned_uploads(&before).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(uploads = n, "abandoned batch uploads deleted"),
            Err(e) => tracing::warn!(error = %e, "abandoned uploads not deleted; trying later"),
        }
    }
}

fn lease(work: &BatchWork) -> (String, String) {
    let now = chrono::Utc::now();
    let until = now + Duration::from_secs(work.config.lease_secs.max(5));
    (crate::clock::format(now), crate::clock::format(until))
}

/// One piece of work, if there was any: a split, or a claim of documents.
async fn round(work: &BatchWork, id: &str) -> Result<bool, String> {
    let (now, until) = lease(work);
    if let Some(batch) = work
        .store
        .claim_batch_to_split(id, &now, &until)
        .await
        .map_err(|e| e.to_string())?
    {
        let split = split::split(&work.store, &work.config, &batch, id, failed)
            .await
            .map_err(|e| e.to_string())?;
        match &split {
            Split::Started(n) => tracing::info!(batch = %batch.id, documents = n, "batch split"),
            Split::Failed(why) => {
                tracing::info!(batch = %batch.id, reason = %why, "batch failed");
                crate::webhooks::worker::wake();
            }
            Split::Lost => {
                tracing::warn!(batch = %batch.id, "batch split taken over by another worker")
            }
        }
        return Ok(true);
    }
    let docs = work
        .store
        .claim_batch_documents(id, &now, &until, i64::from(work.config.claim.max(1)))
        .await
        .map_err(|e| e.to_string())?;
    if docs.is_empty() {
        return Ok(false);
    }
    let (checks, docs): (Vec<_>, Vec<_>) = docs.into_iter().partition(|d| d.checking);
    if !checks.is_empty() {
        record_checks(work, id, checks).await?;
    }
    let (sends, docs): (Vec<_>, Vec<_>) = docs
        .into_iter()
        .partition(|d| d.mode == super::Mode::Send.as_str());
    let catalog = work.registry.current();
    let (parse, max_findings) = (work.parse.clone(), work.max_findings);
    let convert = Arc::new(work.convert.clone());
    let mut results = on_pool(work, docs, move |d| match d.mode.as_str() {
        "convert" => super::process::convert(&catalog, &convert, d),
        _ => super::process::process(&catalog, &parse, max_findings, d),
    })
    .await;
    // Sends wait on the store and the pool in turns: a few at a time, on the runtime.
    let sent: Vec<Option<DocumentResult>> = futures_util::stream::iter(sends)
        .map(|d| {
            let state = work.state.clone();
            async move { super::process::send(&state, &d).await }
        })
        .buffer_unordered(work.admission.workers().max(1) * 2)
        .collect()
        .await;
    results.extend(sent.into_iter().flatten());
    if results.is_empty() {
        return Ok(true);
    }
    let finished = work
        .store
        .record_batch_results(id, &results, &crate::clock::now(), completed)
        .await
        .map_err(|e| e.to_string())?;
    if results.iter().any(|r| !r.notices.is_empty()) || !finished.is_empty() {
        crate::webhooks::worker::wake();
    }
    for b in finished {
        tracing::info!(batch = %b, "batch completed");
    }
    Ok(true)
}

/// Check the identifiers of claimed documents (mode `send`) and record the checks; a batch
/// whose last check this was is passed on for sending or refused.
async fn record_checks(
    work: &BatchWork,
    id: &str,
    checks: Vec<ClaimedDocument>,
) -> Result<(), String> {
    let checked = on_pool(work, checks, super::process::check).await;
    let ended = work
        .store
        .record_batch_checks(id, &checked, &crate::clock::now(), super::process::refused)
        .await
        .map_err(|e| e.to_string())?;
    for e in ended {
        match e {
            Checked::Passed(b) => tracing::info!(batch = %b, "batch identifiers passed; sending"),
            Checked::Refused(b) => {
                tracing::info!(batch = %b, "batch refused: identifiers fail their checks");
                crate::webhooks::worker::wake();
            }
        }
    }
    Ok(())
}

/// `f` over `docs` on the shared pool of heavy work, as API requests are: one job per
/// worker of the pool, each over its share, so that a claim uses every core; when the
/// pool is full, a job waits a moment and asks again (the claim holds meanwhile).
async fn on_pool<T, F>(work: &BatchWork, docs: Vec<ClaimedDocument>, f: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(&ClaimedDocument) -> T + Send + Sync + 'static,
{
    if docs.is_empty() {
        return Vec::new();
    }
    let f = Arc::new(f);
    let share = docs.len().div_ceil(work.admission.workers().max(1));
    let jobs = docs.chunks(share.max(1)).map(|part| {
        let part: Arc<Vec<ClaimedDocument>> = Arc::new(part.to_vec());
        let f = f.clone();
        async move {
            loop {
                let (part, f) = (part.clone(), f.clone());
                match work
                    .admission
                    .run(move || part.iter().map(|d| f(d)).collect::<Vec<T>>())
                    .await
                {
                    Ok(r) => break r,
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
        }
    });
    futures_util::future::join_all(jobs)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// `batch.completed` of a batch all of whose documents have their outcome.
fn completed(batch: &BatchRecord, counts: &[(String, i64)]) -> Notice {
    let counts: serde_json::Map<String, serde_json::Value> =
        counts.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    Notice {
        event_type: EventType::BatchCompleted,
        data: json!({
            "batch_id": batch.id,
            "status": "completed",
            "mode": batch.mode,
            "documents": batch.documents,
            "counts": counts,
            "environment": batch.environment,
            "links": super::process::links(&batch.id, None),
        }),
    }
}

/// `batch.completed` of a batch that could not be split.
fn failed(batch: &BatchRecord, why: &str) -> Notice {
    Notice {
        event_type: EventType::BatchCompleted,
        data: json!({
            "batch_id": batch.id,
            "status": "failed",
            "mode": batch.mode,
            "documents": 0,
            "counts": {},
            "error": why,
            "environment": batch.environment,
            "links": super::process::links(&batch.id, None),
        }),
    }
}
