//! Admission control for heavy work: a bounded pool of worker threads for CPU-bound jobs
//! (parsing, validation, identifier checks, conversion, PDF rendering), and a global
//! in-flight budget of request bytes and documents.
//!
//! Why: the async runtime has as many threads as cores. A job that holds one of them for
//! milliseconds delays every other request on it, `/health` included; a job that holds it
//! for seconds stalls the server. Heavy jobs therefore run on a pool of `workers` threads of
//! their own, at a lower CPU priority than the threads that answer requests (so a saturated
//! pool never starves them), and excess jobs wait a short while for a place or are refused
//! with 503 and `Retry-After`. The in-flight budget bounds the memory that waiting and
//! running requests hold together, whatever the number of connections.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Admission settings (`[admission]` in the configuration file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AdmissionConfig {
    /// Heavy jobs running at once; 0 means one per core.
    pub workers: usize,
    /// Longest a request waits for a worker or for budget before a 503.
    pub queue_wait_ms: u64,
    /// Most requests waiting for a worker at once; beyond, a 503 at once.
    pub max_waiting: usize,
    /// Request bytes that admitted requests may hold together.
    pub inflight_bytes: usize,
    /// Documents (files, converted invoices) that admitted requests may hold together.
    pub inflight_documents: usize,
}

impl Default for AdmissionConfig {
    fn default() -> Self {
        AdmissionConfig {
            workers: 0,
            queue_wait_ms: 2_000,
            max_waiting: 256,
            inflight_bytes: 256 * 1024 * 1024,
            inflight_documents: 4_000,
        }
    }
}

/// Which resource was not available in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    Workers = 0,
    InflightBytes = 1,
    InflightDocuments = 2,
}

impl Resource {
    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Workers => "workers",
            Resource::InflightBytes => "inflight_bytes",
            Resource::InflightDocuments => "inflight_documents",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Busy {
    /// Nothing was free within the wait (or the queue was full).
    #[error("the server is busy: no {} free within {waited_ms} ms", .resource.as_str())]
    Saturated { resource: Resource, waited_ms: u64 },
    /// A request needs more than the whole budget: it can never be admitted.
    #[error("the request needs {needed} {}, more than the server's budget of {budget}", .resource.as_str())]
    OverBudget {
        resource: Resource,
        needed: usize,
        budget: usize,
    },
    /// The job panicked; the worker survived.
    #[error("a worker job failed: {0}")]
    Failed(String),
}

/// Budget units are KiB for bytes: semaphores count in u32 per acquisition.
const BYTE_UNIT: usize = 1024;

pub struct Admission {
    pool: rayon::ThreadPool,
    workers: Arc<Semaphore>,
    worker_count: usize,
    waiting: AtomicUsize,
    max_waiting: usize,
    wait: Duration,
    bytes: Arc<Semaphore>,
    byte_units: usize,
    documents: Arc<Semaphore>,
    document_budget: usize,
    /// Requests refused, by resource (for the metrics).
    refused: [AtomicU64; 3],
}

/// What an admitted request holds until it is answered.
#[derive(Debug, Default)]
pub struct Ticket {
    /// Held, not read: dropping the ticket returns the bytes to the budget.
    _bytes: Option<OwnedSemaphorePermit>,
    documents: Vec<OwnedSemaphorePermit>,
}

/// How much lower than the request threads heavy jobs run (a nice value, 0–19).
const WORKER_NICENESS: i32 = 10;

/// Lower the calling thread's CPU priority by [`WORKER_NICENESS`]. Linux keeps the nice
/// value per thread, and `nice` changes the calling thread's (libc directly: one call
/// needs no crate).
#[cfg(target_os = "linux")]
fn lower_priority() {
    // SAFETY: a system call on the calling thread; no memory is shared. `nice` answers -1
    // both for an error and for a new value of -1, which lowering can never give.
    let result = unsafe { libc::nice(WORKER_NICENESS) };
    if result == -1 {
        tracing::warn!("cannot lower the priority of a worker thread");
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

#[derive(Debug, thiserror::Error)]
#[error("cannot start the worker pool: {0}")]
pub struct PoolError(String);

impl Admission {
    pub fn new(config: &AdmissionConfig) -> Result<Admission, PoolError> {
        let worker_count = match config.workers {
            0 => std::thread::available_parallelism().map_or(2, |n| n.get()),
            n => n,
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(worker_count)
            .thread_name(|i| format!("invex-worker-{i}"))
            .start_handler(|_| lower_priority())
            .build()
            .map_err(|e| PoolError(e.to_string()))?;
        let byte_units = (config.inflight_bytes / BYTE_UNIT).max(1);
        let document_budget = config.inflight_documents.max(1);
        Ok(Admission {
            pool,
            workers: Arc::new(Semaphore::new(worker_count)),
            worker_count,
            waiting: AtomicUsize::new(0),
            max_waiting: config.max_waiting,
            wait: Duration::from_millis(config.queue_wait_ms),
            bytes: Arc::new(Semaphore::new(byte_units)),
            byte_units,
            documents: Arc::new(Semaphore::new(document_budget)),
            document_budget,
            refused: Default::default(),
        })
    }

    /// Number of heavy jobs that may run at once.
    pub fn workers(&self) -> usize {
        self.worker_count
    }

    /// Jobs running now and requests waiting for a worker (for metrics and `/ready`).
    pub fn load(&self) -> (usize, usize) {
        (
            self.worker_count - self.workers.available_permits(),
            self.waiting.load(Ordering::Relaxed),
        )
    }

    /// Requests refused so far for each resource.
    pub fn refusals(&self) -> [(Resource, u64); 3] {
        [
            Resource::Workers,
            Resource::InflightBytes,
            Resource::InflightDocuments,
        ]
        .map(|r| (r, self.refused[r as usize].load(Ordering::Relaxed)))
    }

    fn refuse(&self, busy: Busy) -> Busy {
        if let Busy::Saturated { resource, .. } | Busy::OverBudget { resource, .. } = &busy {
            self.refused[*resource as usize].fetch_add(1, Ordering::Relaxed);
        }
        busy
    }

    fn saturated(&self, resource: Resource) -> Busy {
        self.refuse(Busy::Saturated {
            resource,
            waited_ms: self.wait.as_millis() as u64,
        })
    }

    async fn acquire(
        &self,
        pool: &Arc<Semaphore>,
        units: usize,
        budget: usize,
        resource: Resource,
    ) -> Result<OwnedSemaphorePermit, Busy> {
        if units > budget {
            return Err(self.refuse(Busy::OverBudget {
                resource,
                needed: units,
                budget,
            }));
        }
        let n = u32::try_from(units).map_err(|_| Busy::OverBudget {
            resource,
            needed: units,
            budget,
        })?;
        match tokio::time::timeout(self.wait, pool.clone().acquire_many_owned(n)).await {
            Ok(Ok(permit)) => Ok(permit),
            // The semaphores are never closed; treat it like a timeout all the same.
            Ok(Err(_)) | Err(_) => Err(self.saturated(resource)),
        }
    }

    /// Admit a request that will hold `bytes` of body (its declared length, or the body
    /// limit when it declares none).
    pub async fn admit(&self, bytes: usize) -> Result<Ticket, Busy> {
        let units = bytes.div_ceil(BYTE_UNIT).max(1);
        let permit = self
            .acquire(&self.bytes, units, self.byte_units, Resource::InflightBytes)
            .await
            .map_err(|e| match e {
                Busy::OverBudget { budget, .. } => Busy::OverBudget {
                    resource: Resource::InflightBytes,
                    needed: bytes,
                    budget: budget * BYTE_UNIT,
                },
                other => other,
            })?;
        Ok(Ticket {
            _bytes: Some(permit),
            documents: Vec::new(),
        })
    }

    /// Add `n` documents to what `ticket` holds.
    pub async fn hold_documents(&self, ticket: &mut Ticket, n: usize) -> Result<(), Busy> {
        if n == 0 {
            return Ok(());
        }
        let held: usize = ticket.documents.iter().map(|p| p.num_permits()).sum();
        if held + n > self.document_budget {
            return Err(self.refuse(Busy::OverBudget {
                resource: Resource::InflightDocuments,
                needed: held + n,
                budget: self.document_budget,
            }));
        }
        let permit = self
            .acquire(
                &self.documents,
                n,
                self.document_budget,
                Resource::InflightDocuments,
            )
            .await?;
        ticket.documents.push(permit);
        Ok(())
    }

    /// Run a CPU-bound job on a worker thread, waiting at most the queue wait for one.
    /// The job runs to its end even when the request that asked for it goes away, and
    /// holds its worker until then, so the number of running jobs stays bounded.
    pub async fn run<T, F>(&self, job: F) -> Result<T, Busy>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let permit = match self.workers.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                if self.waiting.fetch_add(1, Ordering::AcqRel) >= self.max_waiting {
                    self.waiting.fetch_sub(1, Ordering::AcqRel);
                    return Err(self.saturated(Resource::Workers));
                }
                let got =
                    tokio::time::timeout(self.wait, self.workers.clone().acquire_owned()).await;
                self.waiting.fetch_sub(1, Ordering::AcqRel);
                match got {
                    Ok(Ok(p)) => p,
                    Ok(Err(_)) | Err(_) => return Err(self.saturated(Resource::Workers)),
                }
            }
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        // The permit guarantees a free thread: the job starts at once.
        let idle = self.workers.clone();
        let capacity = self.worker_count;
        self.pool.spawn(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            // The last job of a burst hands the memory this thread freed back to the
            // system: a large document's pages would otherwise stay resident in the
            // thread's heap until it next allocates. Not while other jobs run (the next
            // would take the pages again at once). Before the answer, so that the cost is
            // the job's own and done when its request is answered.
            if idle.available_permits() + 1 == capacity {
                return_memory();
            }
            drop(permit);
            let _ = tx.send(outcome);
        });
        match rx.await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(panic)) => Err(Busy::Failed(panic_message(&panic))),
            Err(_) => Err(Busy::Failed("the worker stopped".into())),
        }
    }
}

/// Give memory freed on this thread back to the system (mimalloc, the binary's allocator;
/// a no-op for memory of any other allocator).
fn return_memory() {
    // SAFETY: mi_collect only walks and purges the calling thread's own mimalloc heap.
    unsafe { libmimalloc_sys::mi_collect(false) };
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a job panicked".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn admission(workers: usize, wait_ms: u64) -> Admission {
        Admission::new(&AdmissionConfig {
            workers,
            queue_wait_ms: wait_ms,
            max_waiting: 4,
            inflight_bytes: 10 * 1024,
            inflight_documents: 5,
        })
        .expect("pool")
    }

    #[tokio::test]
    async fn at_most_workers_jobs_run_and_the_rest_wait_or_are_refused() {
        let a = Arc::new(admission(1, 100));
        let slow = {
            let a = a.clone();
            tokio::spawn(async move {
                a.run(|| std::thread::sleep(Duration::from_millis(400)))
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(a.load().0, 1);
        let start = Instant::now();
        let refused = a.run(|| 1).await;
        assert!(
            matches!(
                refused,
                Err(Busy::Saturated {
                    resource: Resource::Workers,
                    ..
                })
            ),
            "{refused:?}"
        );
        assert!(start.elapsed() >= Duration::from_millis(90));
        slow.await.expect("joined").expect("ran");
        assert_eq!(a.run(|| 7).await.expect("free again"), 7);
    }

    #[tokio::test]
    async fn the_byte_budget_is_shared_and_returned() {
        let a = admission(1, 50);
        let first = a.admit(8 * 1024).await.expect("fits");
        assert!(matches!(
            a.admit(4 * 1024).await,
            Err(Busy::Saturated {
                resource: Resource::InflightBytes,
                ..
            })
        ));
        assert!(matches!(
            a.admit(11 * 1024).await,
            Err(Busy::OverBudget {
                resource: Resource::InflightBytes,
                ..
            })
        ));
        drop(first);
        a.admit(4 * 1024).await.expect("returned");
    }

    #[tokio::test]
    async fn documents_are_held_by_the_ticket() {
        let a = admission(1, 50);
        let mut t = a.admit(1).await.expect("admitted");
        a.hold_documents(&mut t, 3).await.expect("three");
        a.hold_documents(&mut t, 2).await.expect("five");
        assert!(matches!(
            a.hold_documents(&mut t, 1).await,
            Err(Busy::OverBudget { .. })
        ));
        let mut other = a.admit(1).await.expect("admitted");
        assert!(matches!(
            a.hold_documents(&mut other, 1).await,
            Err(Busy::Saturated { .. })
        ));
        drop(t);
        a.hold_documents(&mut other, 5).await.expect("returned");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn jobs_run_at_a_lower_priority_than_the_caller() {
        let a = admission(1, 50);
        let nice = || {
            let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("stat");
            let after = stat.rsplit_once(')').expect("name").1;
            // Field 19 of the line (nice) is the 17th after the name.
            after
                .split_whitespace()
                .nth(16)
                .expect("nice")
                .parse::<i32>()
                .expect("int")
        };
        let ours = nice();
        let theirs = a.run(nice).await.expect("ran");
        assert_eq!(theirs, (ours + WORKER_NICENESS).min(19));
    }

    #[tokio::test]
    async fn a_panicking_job_is_an_error_and_frees_its_worker() {
        let a = admission(1, 50);
        let r: Result<(), Busy> = a.run(|| panic!("boom")).await;
        assert!(matches!(r, Err(Busy::Failed(_))));
        assert_eq!(a.run(|| 2).await.expect("worker free"), 2);
    }
}
