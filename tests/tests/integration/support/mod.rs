//! Start the real server on a random port and talk HTTP to it.
#![allow(dead_code)]

pub mod console;
pub mod oidc;
pub mod receiver;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use invex_engine::registry::Registry;
use invex_server::config::{Config, Mode};
use invex_server::Running;
use reqwest::{Client, RequestBuilder, Response};
use serde_json::Value;

pub const BOOTSTRAP: &str = "test-bootstrap-admin-key-0001";

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace")
        .to_path_buf()
}

/// The shipped packs, compiled once per test binary.
pub fn shipped() -> Arc<Registry> {
    static REGISTRY: OnceLock<Arc<Registry>> = OnceLock::new();
    REGISTRY
        .get_or_init(|| Arc::new(Registry::open(repo().join("rulepacks")).expect("packs load")))
        .clone()
}

pub fn example(name: &str) -> Vec<u8> {
    std::fs::read(repo().join("examples").join(name)).expect("example")
}

/// `xml` with its document number (the first `cbc:ID`, BT-1) set to `number`: a different
/// invoice of the same seller, so that sending it is not a duplicate of the example.
pub fn numbered(xml: Vec<u8>, number: &str) -> Vec<u8> {
    let text = String::from_utf8(xml).expect("utf8");
    let start = text.find("<cbc:ID>").expect("cbc:ID") + "<cbc:ID>".len();
    let end = start + text[start..].find("</cbc:ID>").expect("end of cbc:ID");
    format!("{}{number}{}", &text[..start], &text[end..]).into_bytes()
}

/// The example invoice with one change that makes it invalid (BR-16 and friends: no lines).
pub fn invalid_invoice() -> Vec<u8> {
    let text = String::from_utf8(example("invoice-sk.xml")).expect("utf8");
    let start = text.find("<cac:InvoiceLine>").expect("line");
    let end = text.rfind("</cac:InvoiceLine>").expect("line end") + "</cac:InvoiceLine>".len();
    format!("{}{}", &text[..start], &text[end..]).into_bytes()
}

pub struct TestServer {
    pub running: Option<Running>,
    pub base: String,
    pub client: Client,
    pub dir: tempfile::TempDir,
}

pub fn config(dir: &Path) -> Config {
    Config {
        bind: "127.0.0.1:0".parse().expect("addr"),
        mode: Mode::Sandbox,
        database_url: format!("sqlite://{}?mode=rwc", dir.join("invex.db").display()),
        rulepacks: Some(repo().join("rulepacks")),
        watch_rulepacks: false,
        bootstrap_key: Some(BOOTSTRAP.to_string()),
        // The simulated buyer answers quickly in tests; one test waits longer on purpose.
        sending: invex_server::sending::config::SendingConfig {
            sandbox_response_delay_ms: 100,
            ..Default::default()
        },
        // Each test server its own port (SFTP is on in the sandbox).
        sftp: invex_server::sftp::SftpConfig {
            bind: "127.0.0.1:0".into(),
            ..Default::default()
        },
        ..Config::default()
    }
}

impl TestServer {
    /// A sandbox server with the shipped packs and a fresh database.
    pub async fn start() -> TestServer {
        TestServer::with(|_| {}).await
    }

    /// A server whose configuration `adjust` may change first.
    pub async fn with(adjust: impl FnOnce(&mut Config)) -> TestServer {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut c = config(dir.path());
        adjust(&mut c);
        let registry = (c.rulepacks == Some(repo().join("rulepacks"))).then(shipped);
        TestServer::launch(c, registry, dir).await
    }

    pub async fn launch(
        c: Config,
        registry: Option<Arc<Registry>>,
        dir: tempfile::TempDir,
    ) -> TestServer {
        let running = invex_server::start(c, registry)
            .await
            .expect("server starts");
        TestServer {
            base: format!("http://{}", running.addr),
            running: Some(running),
            client: Client::new(),
            dir,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A `/v1` request with `key` in X-API-Key.
    pub fn v1(&self, method: reqwest::Method, path: &str, key: &str) -> RequestBuilder {
        self.client
            .request(method, self.url(path))
            .header("X-API-Key", key)
    }

    /// An `/api` request with `key` as a Bearer token.
    pub fn api(&self, method: reqwest::Method, path: &str, key: &str) -> RequestBuilder {
        self.client.request(method, self.url(path)).bearer_auth(key)
    }

    /// Create a key of `role` in the tenant of `admin`; returns (id, key).
    pub async fn create_key(&self, admin: &str, role: &str) -> (String, String) {
        let r = self
            .v1(reqwest::Method::POST, "/v1/keys", admin)
            .json(&serde_json::json!({"role": role, "name": format!("{role} key")}))
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 201, "create key");
        let body: Value = r.json().await.expect("json");
        (
            body["id"].as_str().expect("id").to_string(),
            body["key"].as_str().expect("key").to_string(),
        )
    }

    /// A connection to the sandbox delivery partner, created (pending) and activated with
    /// the bootstrap key: what every sending test needs first. Its id.
    pub async fn sandbox_connection(&self) -> String {
        let r = self
            .v1(reqwest::Method::POST, "/v1/connections", BOOTSTRAP)
            .json(&serde_json::json!({"partner": "sandbox", "name": "test partner"}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        let c: Value = r.json().await.unwrap();
        assert_eq!(c["status"], "pending");
        let id = c["id"].as_str().unwrap().to_string();
        let r = self
            .v1(
                reqwest::Method::POST,
                &format!("/v1/connections/{id}/activate"),
                BOOTSTRAP,
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        id
    }

    /// Submit `body` as a batch (`/v1/batches?{query}`, bootstrap key), and the batch once
    /// its status is final.
    pub async fn run_batch(&self, query: &str, content_type: &str, body: Vec<u8>) -> Value {
        let r = self
            .v1(
                reqwest::Method::POST,
                &format!("/v1/batches?{query}"),
                BOOTSTRAP,
            )
            .header("Content-Type", content_type)
            .body(body)
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 202, "submit");
        let accepted: Value = r.json().await.expect("json");
        self.batch_finished(accepted["id"].as_str().expect("id"))
            .await
    }

    /// The batch `id` (of the bootstrap tenant) once its status is final.
    pub async fn batch_finished(&self, id: &str) -> Value {
        let start = std::time::Instant::now();
        loop {
            let b: Value = self
                .v1(
                    reqwest::Method::GET,
                    &format!("/v1/batches/{id}"),
                    BOOTSTRAP,
                )
                .value()
                .await;
            if ["completed", "failed", "refused"].contains(&b["status"].as_str().unwrap_or("")) {
                return b;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(60),
                "batch still {b}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Validate `xml` through `/v1/invoice/validate` with `key`.
    pub async fn validate(&self, key: &str, xml: Vec<u8>) -> Response {
        self.v1(reqwest::Method::POST, "/v1/invoice/validate", key)
            .header("Content-Type", "application/xml")
            .body(xml)
            .send()
            .await
            .expect("send")
    }
}

/// The body of a problem answer, after checking that it is one with `status`.
pub async fn problem(response: Response, status: u16) -> Value {
    assert_eq!(response.status().as_u16(), status, "status");
    let kind = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    assert_eq!(kind, "application/problem+json");
    let body: Value = response.json().await.expect("problem json");
    assert_eq!(body["status"].as_u64(), Some(u64::from(status)), "{body}");
    for member in ["type", "title", "detail", "instance", "request_id"] {
        assert!(body[member].is_string(), "problem lacks {member}: {body}");
    }
    body
}

/// Serve `app` (a local stand-in for an external system, speaking its wire format) on a
/// random port; its base URL.
pub async fn serve_stub(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("stub serves") });
    format!("http://{addr}")
}

/// The base URL of a register that is down: it accepts a connection and closes it
/// without a word. The port stays held for the whole test process, so no other test's
/// server can take it over (a port bound and released could be reused in between).
pub async fn dead_endpoint() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            drop(stream);
        }
    });
    format!("http://{addr}")
}

/// Send a request and read its JSON body (the status is the test's business elsewhere).
pub trait JsonBody {
    fn value(self) -> impl std::future::Future<Output = Value>;
}

impl JsonBody for RequestBuilder {
    async fn value(self) -> Value {
        self.send()
            .await
            .expect("send")
            .json()
            .await
            .expect("json body")
    }
}

/// In each of `rounds` rounds: a new tenant with four admin keys, each sent at the same
/// moment to revoke itself (spread over `servers`). Exactly three revocations go through,
/// one is refused as the last admin key, and the tenant keeps one working admin key.
pub async fn revoke_admin_keys_at_once(servers: &[&TestServer], rounds: usize) {
    const ADMINS: usize = 4;
    let first = servers[0];
    for round in 0..rounds {
        let r = first
            .v1(reqwest::Method::POST, "/v1/tenants", BOOTSTRAP)
            .json(&serde_json::json!({"name": format!("race {round}")}))
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 201, "create tenant");
        let created: Value = r.json().await.expect("json");
        let mut keys = vec![(
            created["admin_key"]["id"].as_str().expect("id").to_string(),
            created["admin_key"]["key"]
                .as_str()
                .expect("key")
                .to_string(),
        )];
        while keys.len() < ADMINS {
            let admin = keys[0].1.clone();
            keys.push(first.create_key(&admin, "admin").await);
        }
        let barrier = Arc::new(tokio::sync::Barrier::new(ADMINS));
        let requests = keys.iter().enumerate().map(|(n, (id, key))| {
            let s = servers[n % servers.len()];
            let request = s.v1(reqwest::Method::DELETE, &format!("/v1/keys/{id}"), key);
            let barrier = barrier.clone();
            async move {
                barrier.wait().await;
                request.send().await.expect("send").status().as_u16()
            }
        });
        let statuses = futures_util::future::join_all(requests).await;
        let revoked = statuses.iter().filter(|s| **s == 204).count();
        let refused = statuses.iter().filter(|s| **s == 409).count();
        assert_eq!(
            (revoked, refused),
            (ADMINS - 1, 1),
            "round {round}: answers {statuses:?}"
        );
        let (_, survivor) = &keys[statuses.iter().position(|s| *s == 409).expect("409")];
        let list: Value = first
            .v1(reqwest::Method::GET, "/v1/keys", survivor)
            .send()
            .await
            .expect("send")
            .json()
            .await
            .expect("json");
        let active = list["keys"]
            .as_array()
            .expect("keys")
            .iter()
            .filter(|k| k["role"] == "admin" && k["revoked_at"].is_null())
            .count();
        assert_eq!(active, 1, "round {round}: {list}");
    }
}

/// A fresh schema on the PostgreSQL server named by `INVEX_TEST_POSTGRES_URL`: the URL that
/// uses it, and the server's URL. The PostgreSQL tests are `#[ignore]`d by default (the
/// test summary counts them) and run when asked (`-- --ignored`, as `.ci/run` does): then
/// a missing server is a failure, never a silent pass.
pub async fn postgres_schema() -> (String, String) {
    let base = std::env::var("INVEX_TEST_POSTGRES_URL").expect(
        "INVEX_TEST_POSTGRES_URL names the PostgreSQL server (.ci/run sets it to 127.0.0.1:5432)",
    );
    let schema = format!(
        "invex_test_{}",
        invex_server::ids::new_id("s").trim_start_matches("s_")
    );
    let pool = sqlx::PgPool::connect(&base)
        .await
        .expect("PostgreSQL answers");
    sqlx::query(&format!("CREATE SCHEMA {schema}"))
        .execute(&pool)
        .await
        .expect("a schema for the test");
    pool.close().await;
    let sep = if base.contains('?') { '&' } else { '?' };
    (
        format!("{base}{sep}options=-c%20search_path%3D{schema}"),
        base,
    )
}

/// A ZIP (deflated) with a folder `invoices/` and `members` (name, content) in order.
pub fn zip_of(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write;
    let mut out = std::io::Cursor::new(Vec::new());
    let mut w = zip::ZipWriter::new(&mut out);
    let options = zip::write::SimpleFileOptions::default();
    w.add_directory("invoices/", options).expect("a folder");
    for (name, bytes) in members {
        w.start_file(name.as_str(), options).expect("a member");
        w.write_all(bytes).expect("its content");
    }
    w.finish().expect("the archive");
    out.into_inner()
}
