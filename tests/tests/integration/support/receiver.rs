//! A webhook receiver for the tests: logs every request, answers the scripted statuses in
//! turn, then 200.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use serde_json::Value;

#[derive(Clone, Debug)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn header(&self, name: &str) -> String {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

/// A receiver: logs every request, answers the scripted statuses in turn, then 200.
#[derive(Clone, Default)]
pub struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
    script: Arc<Mutex<VecDeque<u16>>>,
}

impl Receiver {
    pub fn scripted(statuses: &[u16]) -> Receiver {
        let r = Receiver::default();
        r.script.lock().unwrap().extend(statuses);
        r
    }

    pub async fn serve(&self) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        self.serve_on(listener);
        format!("http://{addr}/hooks")
    }

    pub fn serve_on(&self, listener: tokio::net::TcpListener) {
        let me = self.clone();
        let app = Router::new().route(
            "/hooks",
            post(move |headers: HeaderMap, body: Bytes| {
                let me = me.clone();
                async move {
                    me.got.lock().unwrap().push(Received { headers, body });
                    let status = me.script.lock().unwrap().pop_front().unwrap_or(200);
                    StatusCode::from_u16(status).unwrap()
                }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    }

    pub fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    pub async fn wait_for(&self, n: usize) -> Vec<Received> {
        let start = Instant::now();
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "waited for {n} requests, got {}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
