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
    serve_with(
        dir,
        port,
        // A request still running 1 s after a crash is taken over at once by its retry.
        &[
            ("INVEX_SENDING_ABANDONED_AFTER_SECS", "1"),
            ("INVEX_SENDING_POLL_MS", "50"),
        ],
    )
}

/// `invex serve` on `port` with its database in `dir`, the shipped packs, the test key, and
/// `env` besides.
fn serve_with(dir: &Path, port: u16, env: &[(&str, &str)]) -> Child {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    Command::new(env!("CARGO_BIN_EXE_invex"))
        .arg("serve")
        .env("INVEX_BIND", format!("127.0.0.1:{port}"))
        .env("INVEX_SFTP_BIND", "127.0.0.1:0")
        .env(
            "INVEX_DATABASE_URL",
            format!("sqlite://{}?mode=rwc", dir.join("invex.db").display()),
        )
        .env("INVEX_RULEPACKS", repo.join("rulepacks"))
        .env("INVEX_WATCH_RULEPACKS", "false")
        .env("INVEX_BOOTSTRAP_KEY", KEY)
        .env("RUST_LOG", "error")
        .envs(env.iter().copied())
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
    sandbox_connection(&client, &base).await;
    let invoice = example().into_bytes();
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

/// A small deterministic generator for kill times (the seed is printed, so a failing
/// round can be replayed with INVEX_CRASH_SEED).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound.max(1)
    }
}

fn invoice_numbered(template: &str, number: &str) -> Vec<u8> {
    template
        .replacen(
            "<cbc:ID>FA2026-1102</cbc:ID>",
            &format!("<cbc:ID>{number}</cbc:ID>"),
            1,
        )
        .into_bytes()
}

async fn send_once(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    body: Vec<u8>,
) -> Option<(u16, Value)> {
    let r = client
        .post(format!("{base}/v1/invoice/send"))
        .header("X-API-Key", KEY)
        .header("Content-Type", "application/xml")
        .header("Idempotency-Key", key)
        .body(body)
        .send()
        .await
        .ok()?;
    let status = r.status().as_u16();
    Some((status, r.json().await.unwrap_or(Value::Null)))
}

/// SIGKILL at random moments of a burst of sends, round after round (`INVEX_CRASH_ROUNDS`:
/// five in a plain `cargo test`, twenty in `.ci/run`; each round kills and restarts the
/// server). After every restart each request is retried with its key until it is answered;
/// every key must end with exactly one invoice, the same one any earlier answer named,
/// delivered exactly once.
#[tokio::test]
async fn random_sigkills_during_sends_leave_one_invoice_and_one_delivery_per_key() {
    let rounds: usize = std::env::var("INVEX_CRASH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    const PER_ROUND: usize = 12;
    let seed = std::env::var("INVEX_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(7, |d| d.as_nanos() as u64)
        });
    eprintln!("{rounds} crash rounds with INVEX_CRASH_SEED={seed}");
    let mut rng = Lcg(seed);
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let template = example();
    let mut server = serve(dir.path(), port);
    ready(&client, &base).await;
    sandbox_connection(&client, &base).await;

    // key -> the invoice id its first answer named, if it got one before the kill.
    let mut answered: std::collections::BTreeMap<String, Option<String>> = Default::default();
    for round in 0..rounds {
        let keys: Vec<String> = (0..PER_ROUND).map(|n| format!("r{round}-k{n}")).collect();
        let sends = keys.iter().map(|k| {
            let body = invoice_numbered(&template, &format!("CR-{k}"));
            let (client, base, k) = (client.clone(), base.clone(), k.clone());
            async move { (k.clone(), send_once(&client, &base, &k, body).await) }
        });
        let burst = tokio::spawn(futures_util::future::join_all(sends));
        tokio::time::sleep(Duration::from_millis(rng.next(400))).await;
        server.kill().expect("SIGKILL");
        server.wait().expect("reaped");
        for (k, answer) in burst.await.expect("joined") {
            let id = match answer {
                Some((202, body)) => Some(body["id"].as_str().expect("id").to_string()),
                _ => None,
            };
            answered.insert(k, id);
        }
        server = serve(dir.path(), port);
        ready(&client, &base).await;
        // Every key of this round, retried until it is answered.
        for k in &keys {
            let body = invoice_numbered(&template, &format!("CR-{k}"));
            let deadline = Instant::now() + Duration::from_secs(30);
            let id = loop {
                match send_once(&client, &base, k, body.clone()).await {
                    Some((202, v)) => break v["id"].as_str().expect("id").to_string(),
                    Some((409 | 503, _)) | None => {}
                    Some((status, v)) => panic!("round {round}, key {k}: {status} {v}"),
                }
                assert!(
                    Instant::now() < deadline,
                    "round {round}: {k} never answered"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            };
            if let Some(Some(first)) = answered.get(k) {
                assert_eq!(first, &id, "round {round}: {k} answered two invoices");
            }
            answered.insert(k.clone(), Some(id));
        }
    }

    // Exactly one invoice per key (each key sent its own invoice number), each delivered once.
    let store = invex_server::store::Store::connect(&format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("invex.db").display()
    ))
    .await
    .expect("the database opens");
    let tenant = invex_server::store::OPERATOR_TENANT_ID;
    assert_eq!(
        store.invoice_count(tenant).await.expect("count"),
        answered.len() as i64
    );
    for (k, id) in &answered {
        let found = store
            .invoices_by_number(tenant, &format!("CR-{k}"), "2026-11-02")
            .await
            .expect("query");
        assert_eq!(found.len(), 1, "{k}: {found:?}");
        assert_eq!(Some(&found[0].id), id.as_ref(), "{k}");
    }
    store.close().await;
    // A delivery claimed by a killed process is taken over when its lease (60 s) ends.
    let deadline = Instant::now() + Duration::from_secs(150);
    for (k, id) in &answered {
        let id = id.as_deref().expect("answered");
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
            let transmitted = t["events"]
                .as_array()
                .expect("events")
                .iter()
                .filter(|e| e["code"] == "transmitted")
                .count();
            assert!(transmitted <= 1, "{k}: delivered twice: {t}");
            if transmitted == 1 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{k} ({id}) was never delivered: {t}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    server.kill().expect("stop");
    let _ = server.wait();
}

/// `invex serve` for the batch tests: quick polls, small claims, short leases (a killed
/// worker's claims pass on within 2 s), a send's abandoned key taken over after 1 s.
fn serve_batches(dir: &Path, port: u16) -> Child {
    serve_with(
        dir,
        port,
        &[
            ("INVEX_BATCHES_POLL_MS", "20"),
            ("INVEX_BATCHES_CLAIM", "8"),
            ("INVEX_BATCHES_LEASE_SECS", "2"),
            ("INVEX_SENDING_ABANDONED_AFTER_SECS", "1"),
            ("INVEX_WEBHOOKS_WORKER", "false"),
        ],
    )
}

/// The example invoice's text.
fn example() -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/invoice-sk.xml"),
    )
    .expect("example")
}

/// A connection to the sandbox partner, created and activated: what sending needs.
async fn sandbox_connection(client: &reqwest::Client, base: &str) {
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
}

/// A ZIP of `valid` copies of the example and `invalid` ones with an unknown currency.
fn batch_zip(template: &str, valid: usize, invalid: usize) -> Vec<u8> {
    use std::io::Write;
    let mut out = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut out);
    let options = zip::write::SimpleFileOptions::default();
    for n in 0..valid + invalid {
        let mut doc = invoice_numbered(template, &format!("B-{n:05}"));
        if n >= valid {
            doc = String::from_utf8(doc)
                .expect("utf-8")
                .replacen(
                    ">EUR</cbc:DocumentCurrencyCode>",
                    ">XXX</cbc:DocumentCurrencyCode>",
                    1,
                )
                .into_bytes();
        }
        w.start_file(format!("doc-{n:05}.xml"), options)
            .expect("a member");
        w.write_all(&doc).expect("its content");
    }
    w.finish().expect("the archive");
    out.into_inner()
}

/// SIGKILL while a batch is split and validated, at a random moment, three times over; after
/// each restart the batch resumes (the dead worker's claims expire) and ends with every
/// document's outcome recorded once: the counts add up to the documents, every document is in
/// the results once, and each invalid one was announced by one event.
#[tokio::test]
async fn sigkill_during_a_batch_loses_and_duplicates_no_outcome() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let serve_batches = |dir: &Path| serve_batches(dir, port);
    let template = example();
    let (valid, invalid) = (270, 30);
    let mut server = serve_batches(dir.path());
    ready(&client, &base).await;
    let id = submit_batch(&client, &base, "", batch_zip(&template, valid, invalid)).await;
    let done = kill_during_batch(
        &mut server,
        || serve_batches(dir.path()),
        &client,
        &base,
        &id,
    )
    .await;
    assert_eq!(done["documents"], (valid + invalid) as u64);
    assert_eq!(done["done"], (valid + invalid) as u64);
    assert_eq!(
        done["counts"],
        json!({"valid": valid, "invalid": invalid}),
        "{done}"
    );
    let results = client
        .get(format!("{base}/v1/batches/{id}/results"))
        .header("X-API-Key", KEY)
        .send()
        .await
        .expect("results")
        .text()
        .await
        .expect("text");
    let mut seqs: Vec<i64> = results
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).expect("a JSON line")["seq"]
                .as_i64()
                .expect("seq")
        })
        .collect();
    seqs.dedup();
    assert_eq!(seqs, (1..=(valid + invalid) as i64).collect::<Vec<_>>());
    server.kill().expect("stop");
    let _ = server.wait();
    // One event per invalid document and one for the end, whatever was killed when.
    let db = format!("sqlite://{}?mode=rw", dir.path().join("invex.db").display());
    let store = invex_server::store::Store::connect(&db)
        .await
        .expect("the database");
    let (remediation, completed): (i64, i64) = (
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM webhook_events WHERE event_type = 'batch.remediation_required'",
        )
        .fetch_one(store.pool())
        .await
        .expect("count"),
        sqlx::query_scalar(
            "SELECT COUNT(*) FROM webhook_events WHERE event_type = 'batch.completed'",
        )
        .fetch_one(store.pool())
        .await
        .expect("count"),
    );
    assert_eq!((remediation, completed), (invalid as i64, 1));
}

/// Submit `zip` as a batch (`/v1/batches{query}`); its id.
async fn submit_batch(client: &reqwest::Client, base: &str, query: &str, zip: Vec<u8>) -> String {
    let r = client
        .post(format!("{base}/v1/batches{query}"))
        .header("X-API-Key", KEY)
        .header("Content-Type", "application/zip")
        .body(zip)
        .send()
        .await
        .expect("submit");
    assert_eq!(r.status().as_u16(), 202);
    r.json::<Value>().await.expect("json")["id"]
        .as_str()
        .expect("id")
        .to_string()
}

/// The batch `id` as `GET /v1/batches/{id}` shows it, if the server answers.
async fn batch_state(client: &reqwest::Client, base: &str, id: &str) -> Option<Value> {
    client
        .get(format!("{base}/v1/batches/{id}"))
        .header("X-API-Key", KEY)
        .send()
        .await
        .ok()?
        .json::<Value>()
        .await
        .ok()
}

/// SIGKILL `server` three times at random moments while batch `id` is at work, starting it
/// again with `restart` each time, and the batch once it has ended (the server runs on).
async fn kill_during_batch(
    server: &mut Child,
    restart: impl Fn() -> Child,
    client: &reqwest::Client,
    base: &str,
    id: &str,
) -> Value {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(7);
    eprintln!("batch crash seed {seed}");
    let mut rng = Lcg(seed);
    let ended = |b: &Value| {
        ["completed", "refused", "failed"].contains(&b["status"].as_str().unwrap_or(""))
    };
    let mut interrupted = 0;
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(50 + rng.next(400))).await;
        if batch_state(client, base, id)
            .await
            .is_some_and(|b| !ended(&b))
        {
            interrupted += 1;
        }
        server.kill().expect("SIGKILL");
        server.wait().expect("reaped");
        *server = restart();
        ready(client, base).await;
    }
    assert!(interrupted > 0, "no kill came while the batch was at work");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(b) = batch_state(client, base, id).await {
            if ended(&b) {
                return b;
            }
            assert!(Instant::now() < deadline, "the batch did not finish: {b}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// SIGKILL while a batch in mode `send` checks identifiers and sends, three times over:
/// every document ends `queued` once, each as one invoice (one per document number), and
/// no document number is sent twice, whichever worker died after sending what.
#[tokio::test]
async fn sigkill_during_a_sending_batch_sends_each_document_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let serve_batches = |dir: &Path| serve_batches(dir, port);
    let template = example();
    let mut server = serve_batches(dir.path());
    ready(&client, &base).await;
    sandbox_connection(&client, &base).await;
    let documents = 150;
    let id = submit_batch(
        &client,
        &base,
        "?mode=send",
        batch_zip(&template, documents, 0),
    )
    .await;
    let done = kill_during_batch(
        &mut server,
        || serve_batches(dir.path()),
        &client,
        &base,
        &id,
    )
    .await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["counts"], json!({"queued": documents}), "{done}");
    server.kill().expect("stop");
    let _ = server.wait();
    let db = format!("sqlite://{}?mode=rw", dir.path().join("invex.db").display());
    let store = invex_server::store::Store::connect(&db)
        .await
        .expect("the database");
    let (invoices, numbers): (i64, i64) = (
        sqlx::query_scalar("SELECT COUNT(*) FROM invoices")
            .fetch_one(store.pool())
            .await
            .expect("count"),
        sqlx::query_scalar("SELECT COUNT(DISTINCT document_id) FROM invoices")
            .fetch_one(store.pool())
            .await
            .expect("count"),
    );
    assert_eq!((invoices, numbers), (documents as i64, documents as i64));
    let named: i64 = sqlx::query_scalar(
        "SELECT COUNT(DISTINCT result) FROM batch_documents WHERE outcome = 'queued'",
    )
    .fetch_one(store.pool())
    .await
    .expect("count");
    assert_eq!(named, documents as i64);
}

/// OpenSSH's client tools were found when the tests were built (server/build.rs; else the
/// tests that call this are ignored), so their absence now fails.
fn require_openssh_client() {
    for tool in ["sftp", "ssh-keygen"] {
        assert!(
            Command::new(tool).arg("-?").output().is_ok(),
            "{tool} does not run, though it was found when the tests were built \
             (Debian: apt-get install openssh-client)"
        );
    }
}

/// `ssh-keygen` makes an ed25519 key in `dir`; its path and public key line.
fn keypair(dir: &Path) -> (std::path::PathBuf, String) {
    let key = dir.join("id_ed25519");
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen (Debian's openssh-client) must be installed");
    assert!(out.status.success(), "{out:?}");
    let public = std::fs::read_to_string(key.with_extension("pub")).expect("public key");
    (key, public.trim().to_string())
}

/// OpenSSH's `sftp` running `commands` as `user` with `key` on `port`; success and output.
fn sftp(dir: &Path, key: &Path, user: &str, port: u16, commands: &str) -> (bool, String) {
    let batch = dir.join("batch.txt");
    std::fs::write(&batch, commands).expect("batch file");
    let out = Command::new("sftp")
        .current_dir(dir)
        .arg("-b")
        .arg(&batch)
        .arg("-i")
        .arg(key)
        .args(["-P", &port.to_string()])
        .args([
            "-o",
            "StrictHostKeyChecking=no",
            "-o",
            "UserKnownHostsFile=/dev/null",
        ])
        .args([
            "-o",
            "BatchMode=yes",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "LogLevel=ERROR",
        ])
        .arg(format!("{user}@127.0.0.1"))
        .output()
        .expect("sftp (Debian's openssh-client) must be installed");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// A ZIP put into an SFTP inbox, the server SIGKILLed while it is processed (three times,
/// at random moments) and the same file put again after a restart, as a client unsure of
/// its first attempt would: one archived file, one batch, and its results file holds every
/// document once.
#[tokio::test]
#[cfg_attr(
    invex_no_sftp,
    ignore = "OpenSSH's sftp / ssh-keygen not installed (Debian: openssh-client; .ci/run requires them)"
)]
async fn sigkill_while_an_sftp_delivery_is_processed_loses_and_duplicates_nothing() {
    require_openssh_client();
    let dir = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("client dir");
    let port = free_port();
    let sftp_port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    let sftp_bind = format!("127.0.0.1:{sftp_port}");
    let start = |dir: &Path| {
        serve_with(
            dir,
            port,
            &[
                ("INVEX_SFTP_BIND", sftp_bind.as_str()),
                ("INVEX_BATCHES_POLL_MS", "20"),
                ("INVEX_BATCHES_CLAIM", "8"),
                ("INVEX_BATCHES_LEASE_SECS", "2"),
                ("INVEX_WEBHOOKS_WORKER", "false"),
            ],
        )
    };
    let mut server = start(dir.path());
    ready(&client, &base).await;
    let (key, public) = keypair(work.path());
    let account: Value = client
        .post(format!("{base}/v1/sftp/accounts"))
        .header("X-API-Key", KEY)
        .json(&json!({"name": "nightly export", "role": "developer", "public_keys": [public]}))
        .send()
        .await
        .expect("create account")
        .json()
        .await
        .expect("json");
    let user = account["username"].as_str().expect("username").to_string();
    let template = example();
    let (valid, invalid) = (270, 30);
    std::fs::write(
        work.path().join("export.zip"),
        batch_zip(&template, valid, invalid),
    )
    .expect("zip");
    let put = "put export.zip inbox/export.zip\n";
    let (ok, text) = sftp(work.path(), &key, &user, sftp_port, put);
    assert!(ok, "{text}");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(11);
    eprintln!("sftp crash seed {seed}");
    let mut rng = Lcg(seed);
    for round in 0..3 {
        tokio::time::sleep(Duration::from_millis(50 + rng.next(400))).await;
        server.kill().expect("SIGKILL");
        server.wait().expect("reaped");
        server = start(dir.path());
        ready(&client, &base).await;
        if round == 0 {
            // The client is not sure its file arrived, and sends it again.
            let (ok, text) = sftp(work.path(), &key, &user, sftp_port, put);
            assert!(ok, "{text}");
        }
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let outbox = loop {
        let (ok, text) = sftp(work.path(), &key, &user, sftp_port, "ls -1 outbox\n");
        assert!(ok, "{text}");
        if text.contains("export.zip.results.ndjson") {
            break text;
        }
        assert!(Instant::now() < deadline, "no results yet: {text}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(outbox.matches(".results.ndjson").count(), 1, "{outbox}");
    let (ok, text) = sftp(
        work.path(),
        &key,
        &user,
        sftp_port,
        "ls -1 archive\nget outbox/export.zip.results.ndjson results.ndjson\n",
    );
    assert!(ok, "{text}");
    assert_eq!(
        text.matches("export.zip").count(),
        2,
        "one archived file: {text}"
    );
    let results = std::fs::read_to_string(work.path().join("results.ndjson")).expect("results");
    let lines: Vec<Value> = results
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let seqs: Vec<i64> = lines
        .iter()
        .map(|l| l["seq"].as_i64().expect("seq"))
        .collect();
    assert_eq!(seqs, (1..=(valid + invalid) as i64).collect::<Vec<_>>());
    let invalid_seen = lines.iter().filter(|l| l["outcome"] == "invalid").count();
    assert_eq!(invalid_seen, invalid);
    server.kill().expect("stop");
    let _ = server.wait();
}
