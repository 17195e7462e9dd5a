//! Crash safety of sending: the real `invex serve` process is killed with SIGKILL while
//! invoices are being accepted and delivered, then started again on the same database.
//! Every accepted invoice must end delivered, exactly once.

#![cfg(unix)]

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const KEY: &str = "crash-test-bootstrap-key-0001";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn serve(dir: &Path, port: u16) -> Child {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    Command::new(env!("CARGO_BIN_EXE_invex"))
        .arg("serve")
        .env("INVEX_BIND", format!("127.0.0.1:{port}"))
        .env(
            "INVEX_DATABASE_URL",
            format!("sqlite://{}?mode=rwc", dir.join("invex.db").display()),
        )
        .env("INVEX_RULEPACKS", repo.join("rulepacks"))
        .env("INVEX_WATCH_RULEPACKS", "false")
        .env("INVEX_BOOTSTRAP_KEY", KEY)
        .env("INVEX_SENDING_POLL_MS", "50")
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("invex serve starts")
}

async fn ready(client: &reqwest::Client, base: &str) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if let Ok(r) = client.get(format!("{base}/ready")).send().await {
            if r.status().is_success() {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the server did not become ready");
}

#[tokio::test]
async fn sigkill_during_sending_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let mut server = serve(dir.path(), port);
    ready(&client, &base).await;
    let c: Value = client
        .post(format!("{base}/v1/connections"))
        .header("X-API-Key", KEY)
        .json(&json!({"partner": "sandbox"}))
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    let id = c["id"].as_str().expect("id").to_string();
    client
        .post(format!("{base}/v1/connections/{id}/activate"))
        .header("X-API-Key", KEY)
        .send()
        .await
        .expect("activate");
    let invoice =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/invoice-sk.xml"))
            .expect("example");
    // Send in the background and kill the server while answers are still coming.
    let mut accepted = Vec::new();
    let sends = (0..40).map(|n| {
        client
            .post(format!("{base}/v1/invoice/send"))
            .header("X-API-Key", KEY)
            .header("Content-Type", "application/xml")
            .header("Idempotency-Key", format!("crash-{n}"))
            .body(invoice.clone())
            .send()
    });
    let pending = tokio::spawn(futures_util::future::join_all(sends));
    tokio::time::sleep(Duration::from_millis(150)).await;
    server.kill().expect("SIGKILL");
    server.wait().expect("reaped");
    for r in pending.await.expect("joined").into_iter().flatten() {
        if r.status().as_u16() == 202 {
            if let Ok(body) = r.json::<Value>().await {
                accepted.push(body["id"].as_str().expect("id").to_string());
            }
        }
    }

    let mut server = serve(dir.path(), port);
    ready(&client, &base).await;
    // A claim held by the killed process expires after its lease (60 s).
    let deadline = Instant::now() + Duration::from_secs(120);
    for id in &accepted {
        loop {
            let t: Value = client
                .get(format!("{base}/api/messages/{id}"))
                .bearer_auth(KEY)
                .send()
                .await
                .expect("send")
                .json()
                .await
                .expect("json");
            if t["status"] == "accepted" {
                let transmitted = t["events"]
                    .as_array()
                    .expect("events")
                    .iter()
                    .filter(|e| e["code"] == "transmitted")
                    .count();
                assert_eq!(transmitted, 1, "{t}");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{id} was not delivered after the restart: {t}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    server.kill().expect("stop");
    let _ = server.wait();
}
