//! Accepting connections and serving HTTP/1.1 on them, with the limits `axum::serve` lacks:
//! a request-header timeout (which is also the keep-alive idle timeout), a body timeout
//! (whole body, and between two pieces of it), and a cap on open connections.
//!
//! Why not `axum::serve`: it sets no timer, so a client that opens a socket and sends
//! nothing, or sends a header a byte a minute, holds a connection and a descriptor for
//! ever; enough of them make `accept` fail and lock everyone out. Here every connection
//! that is not in a request is closed after the header timeout, and when the cap is
//! reached the connection idle the longest makes room for the new one, so idle sockets
//! can never keep a real client out.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::sync::{watch, Notify};
use tokio::task::JoinSet;
use tokio::time::Sleep;
use tower::ServiceExt;

/// Connection settings (`[connections]` in the configuration file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConnectionConfig {
    /// Most open connections; also kept below the process's descriptor limit.
    pub max_connections: usize,
    /// Time a connection has to send a complete request header, counted from when it
    /// opens or its previous response was sent (so also the keep-alive idle timeout).
    pub header_timeout_ms: u64,
    /// Time a request has to send its whole body.
    pub body_timeout_ms: u64,
    /// Longest pause between two pieces of a request body.
    pub body_idle_timeout_ms: u64,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        ConnectionConfig {
            max_connections: 4096,
            header_timeout_ms: 10_000,
            body_timeout_ms: 120_000,
            body_idle_timeout_ms: 15_000,
        }
    }
}

/// Descriptors kept free for the database, files, outgoing HTTP and the listener itself.
const RESERVED_DESCRIPTORS: u64 = 128;

/// Raise the descriptor limit to its hard maximum and return the connection cap that fits
/// under it.
pub fn connection_cap(configured: usize) -> usize {
    let limit = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read or raise the descriptor limit");
            return configured;
        }
    };
    let fits = limit.saturating_sub(RESERVED_DESCRIPTORS).max(16);
    let cap = configured.min(usize::try_from(fits).unwrap_or(usize::MAX));
    if cap < configured {
        tracing::warn!(
            descriptors = limit,
            configured,
            cap,
            "the descriptor limit is low: fewer connections are accepted than configured"
        );
    }
    cap
}

/// What the accept loop knows of one open connection.
struct Conn {
    /// Requests being answered on it now.
    busy: AtomicUsize,
    /// When it last became idle, in milliseconds since the listener started.
    idle_since: AtomicU64,
    /// Asked to close (the cap needs its place, or the server stops).
    evict: Notify,
}

struct Registry {
    started: Instant,
    conns: Mutex<HashMap<u64, Arc<Conn>>>,
    next: AtomicU64,
}

impl Registry {
    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        // A poisoned map is still consistent: entries are inserted and removed whole.
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Register a new connection if there is room, making room by evicting the connection
    /// idle the longest; None when every open connection is in a request.
    fn admit(&self, cap: usize) -> Option<(u64, Arc<Conn>)> {
        let mut conns = self.lock();
        if conns.len() >= cap {
            let victim = conns
                .iter()
                .filter(|(_, c)| c.busy.load(Ordering::Acquire) == 0)
                .min_by_key(|(_, c)| c.idle_since.load(Ordering::Relaxed))
                .map(|(id, _)| *id)?;
            // Removed now so its place is free at once; it closes as soon as it sees this.
            if let Some(c) = conns.remove(&victim) {
                c.evict.notify_one();
            }
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            busy: AtomicUsize::new(0),
            idle_since: AtomicU64::new(self.now_ms()),
            evict: Notify::new(),
        });
        conns.insert(id, conn.clone());
        Some((id, conn))
    }

    fn remove(&self, id: u64) {
        self.lock().remove(&id);
    }

    fn open(&self) -> usize {
        self.lock().len()
    }
}

/// Marks a connection busy while a request is answered on it.
struct BusyGuard {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl BusyGuard {
    fn new(conn: Arc<Conn>, registry: Arc<Registry>) -> BusyGuard {
        conn.busy.fetch_add(1, Ordering::AcqRel);
        BusyGuard { conn, registry }
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.conn
            .idle_since
            .store(self.registry.now_ms(), Ordering::Relaxed);
        self.conn.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its connection marked busy until it is sent (or dropped).
struct Guarded {
    body: Body,
    _guard: BusyGuard,
}

impl HttpBody for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Observed by the metrics: connections open now and connections refused or evicted.
#[derive(Default)]
pub struct ConnectionStats {
    pub open: AtomicUsize,
    pub evicted: AtomicU64,
    pub refused: AtomicU64,
}

/// Serve `app` on `listener` until `shutdown` resolves, then let requests in progress finish.
/// With `tls`, each connection's TLS handshake comes first (within the header timeout).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    config: ConnectionConfig,
    stats: Arc<ConnectionStats>,
    tls: Option<crate::tls::Tls>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    if let Some(tls) = &tls {
        tls.watch();
    }
    let handshake_timeout = Duration::from_millis(config.header_timeout_ms.max(1));
    let cap = connection_cap(config.max_connections).max(1);
    let registry = Arc::new(Registry {
        started: Instant::now(),
        conns: Mutex::new(HashMap::new()),
        next: AtomicU64::new(0),
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(Duration::from_millis(config.header_timeout_ms.max(1)))
        .keep_alive(true);
    let timeouts = BodyTimeouts {
        total: Duration::from_millis(config.body_timeout_ms.max(1)),
        idle: Duration::from_millis(config.body_idle_timeout_ms.max(1)),
    };
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        while tasks.try_join_next().is_some() {}
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors or a connection reset before accept: wait a
                    // moment rather than spin, and go on.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some((id, conn)) = registry.admit(cap) else {
            stats.refused.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(%peer, cap, "connection refused: every connection is in a request");
            drop(stream);
            continue;
        };
        let open = registry.open();
        stats.open.store(open, Ordering::Relaxed);
        let _ = stream.set_nodelay(true);
        let service = {
            let (app, conn, registry) = (app.clone(), conn.clone(), registry.clone());
            hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                let guard = BusyGuard::new(conn.clone(), registry.clone());
                let app = app.clone();
                let mut request = request.map(|body| Body::new(TimedBody::new(body, timeouts)));
                request.extensions_mut().insert(ConnectInfo(peer));
                async move {
                    // The connection counts as busy until the answer's body is sent.
                    app.oneshot(request).await.map(|response| {
                        response.map(|body| {
                            Body::new(Guarded {
                                body,
                                _guard: guard,
                            })
                        })
                    })
                }
            })
        };
        let (registry, stats, stop) = (registry.clone(), stats.clone(), stop_rx.clone());
        let (http, tls) = (http.clone(), tls.clone());
        tasks.spawn(async move {
            match tls {
                None => run_connection(&http, stream, service, &conn, &stats, stop).await,
                Some(tls) => {
                    // A client that never finishes its handshake is treated as one that
                    // never sends its header; a failed handshake (TLS 1.2 only, say) is
                    // the client's affair, logged at debug level.
                    let accepted =
                        tokio::time::timeout(handshake_timeout, tls.acceptor.accept(stream)).await;
                    match accepted {
                        Ok(Ok(stream)) => {
                            run_connection(&http, stream, service, &conn, &stats, stop).await
                        }
                        Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                        Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                    }
                }
            }
            registry.remove(id);
            stats.open.store(registry.open(), Ordering::Relaxed);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
    Ok(())
}

/// Serve HTTP/1.1 on one accepted connection (plain or TLS) until it ends, is evicted, or
/// the server stops.
async fn run_connection<IO, S>(
    http: &hyper::server::conn::http1::Builder,
    io: IO,
    service: S,
    conn: &Conn,
    stats: &ConnectionStats,
    mut stop: watch::Receiver<bool>,
) where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = Body> + Send,
    S::Future: Send,
{
    let connection = http.serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    let graceful = tokio::select! {
        result = connection.as_mut() => {
            log_end(result);
            false
        }
        _ = conn.evict.notified() => {
            stats.evicted.fetch_add(1, Ordering::Relaxed);
            // Service calls happen inside the connection's poll on this task, so
            // none can start between this check and the drop: a connection with no
            // request in progress is closed at once (a graceful shutdown would wait
            // for the half-sent header of a slow client); one that has begun a
            // request is let finish it.
            conn.busy.load(Ordering::Acquire) > 0
        }
        _ = stop.wait_for(|s| *s) => true,
    };
    if graceful {
        connection.as_mut().graceful_shutdown();
        log_end(connection.await);
    }
}

fn log_end(result: Result<(), hyper::Error>) {
    if let Err(e) = result {
        // Timeouts and resets are the client's business; logged for support only.
        tracing::debug!(error = %e, "connection ended with an error");
    }
}

#[derive(Clone, Copy, Debug)]
struct BodyTimeouts {
    total: Duration,
    idle: Duration,
}

/// The error a request body yields when its client is too slow.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time (all of it within {total_ms} ms, with no pause over {idle_ms} ms)")]
pub struct BodyTimeout {
    pub total_ms: u64,
    pub idle_ms: u64,
}

/// Whether `error` (or anything in its source chain) is a [`BodyTimeout`].
pub fn is_body_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.is::<BodyTimeout>() {
            return true;
        }
        current = e.source();
    }
    false
}

/// A request body with a deadline for the whole of it and one between its pieces.
/// tower-http's `TimeoutBody` only has the second: a client sending a byte every few
/// seconds would never reach it.
struct TimedBody {
    inner: Incoming,
    timeouts: BodyTimeouts,
    deadline: Pin<Box<Sleep>>,
    idle: Pin<Box<Sleep>>,
}

impl TimedBody {
    fn new(inner: Incoming, timeouts: BodyTimeouts) -> TimedBody {
        TimedBody {
            inner,
            timeouts,
            deadline: Box::pin(tokio::time::sleep(timeouts.total)),
            idle: Box::pin(tokio::time::sleep(timeouts.idle)),
        }
    }

    fn timeout(&self) -> BodyTimeout {
        BodyTimeout {
            total_ms: self.timeouts.total.as_millis() as u64,
            idle_ms: self.timeouts.idle.as_millis() as u64,
        }
    }
}

impl HttpBody for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(frame) => {
                let next = tokio::time::Instant::now() + this.timeouts.idle;
                this.idle.as_mut().reset(next);
                Poll::Ready(frame.map(|f| f.map_err(Into::into)))
            }
            Poll::Pending => {
                if this.deadline.as_mut().poll(cx).is_ready()
                    || this.idle.as_mut().poll(cx).is_ready()
                {
                    return Poll::Ready(Some(Err(Box::new(this.timeout()))));
                }
                Poll::Pending
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_evicts_the_connection_idle_longest_and_never_a_busy_one() {
        let r = Registry {
            started: Instant::now(),
            conns: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
        };
        let (a, ca) = r.admit(2).expect("first");
        let (_b, cb) = r.admit(2).expect("second");
        ca.idle_since.store(5, Ordering::Relaxed);
        cb.idle_since.store(1, Ordering::Relaxed);
        cb.busy.store(1, Ordering::Relaxed);
        // b is idle longer but busy: a makes room.
        let (_c, _) = r.admit(2).expect("third");
        assert!(!r.lock().contains_key(&a));
        assert_eq!(r.open(), 2);
        // Everything busy: no room.
        for c in r.lock().values() {
            c.busy.store(1, Ordering::Relaxed);
        }
        assert!(r.admit(2).is_none());
    }

    #[test]
    fn body_timeouts_are_found_in_error_chains() {
        #[derive(Debug, thiserror::Error)]
        #[error("wrapped")]
        struct Wrap(#[source] BodyTimeout);
        let e = Wrap(BodyTimeout {
            total_ms: 1,
            idle_ms: 1,
        });
        assert!(is_body_timeout(&e));
        let other = std::io::Error::other("x");
        assert!(!is_body_timeout(&other));
    }
}
