//! The real server as a child process, and the tools the hostile suite attacks it with.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub const KEY: &str = "hostile-suite-bootstrap-key-0001";

/// One attack at a time: latency and memory are measured on a shared machine.
pub async fn serial() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: OnceLock<tokio::sync::Mutex<()>> = OnceLock::new();
    LOCK.get_or_init(|| tokio::sync::Mutex::new(()))
        .lock()
        .await
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The binary under attack: `INVEX_HOSTILE_BIN` (e.g. a release build, or an older build to
/// show a defect), else the one cargo built for these tests.
fn binary() -> PathBuf {
    std::env::var_os("INVEX_HOSTILE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_invex")))
}

/// The rule packs it serves: `INVEX_HOSTILE_RULEPACKS` (an older binary needs the packs of
/// its day), else the shipped ones.
fn rulepacks() -> PathBuf {
    std::env::var_os("INVEX_HOSTILE_RULEPACKS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("rulepacks"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

pub struct Server {
    child: Child,
    pub port: u16,
    pub base: String,
    pub client: reqwest::Client,
    _dir: tempfile::TempDir,
}

impl Server {
    pub async fn start(env: &[(&str, &str)]) -> Server {
        Server::launch(None, env).await
    }

    /// Started under a lower descriptor limit (`ulimit -n`), as on many hosts.
    pub async fn start_with_descriptor_limit(limit: u32, env: &[(&str, &str)]) -> Server {
        Server::launch(Some(limit), env).await
    }

    async fn launch(limit: Option<u32>, env: &[(&str, &str)]) -> Server {
        let dir = tempfile::tempdir().expect("tempdir");
        let port = free_port();
        let mut command = match limit {
            Some(n) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg(format!("ulimit -n {n} && exec \"$0\" serve"))
                    .arg(binary());
                c
            }
            None => {
                let mut c = Command::new(binary());
                c.arg("serve");
                c
            }
        };
        command
            .env("INVEX_BIND", format!("127.0.0.1:{port}"))
            .env(
                "INVEX_DATABASE_URL",
                format!(
                    "sqlite://{}?mode=rwc",
                    dir.path().join("invex.db").display()
                ),
            )
            .env("INVEX_RULEPACKS", rulepacks())
            .env("INVEX_WATCH_RULEPACKS", "false")
            .env("INVEX_BOOTSTRAP_KEY", KEY)
            .env("INVEX_RATE_PER_SECOND", "100000")
            .env("INVEX_RATE_BURST", "100000")
            .env("RUST_LOG", "error")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (k, v) in env {
            command.env(k, v);
        }
        let child = command.spawn().expect("invex serve starts");
        let server = Server {
            child,
            port,
            base: format!("http://127.0.0.1:{port}"),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(600))
                .build()
                .expect("client"),
            _dir: dir,
        };
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(120) {
            if let Ok(r) = server
                .client
                .get(format!("{}/ready", server.base))
                .send()
                .await
            {
                if r.status().is_success() {
                    return server;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the server did not become ready");
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn v1_post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .post(format!("{}{path}", self.base))
            .header("X-API-Key", KEY)
    }

    pub fn api_post(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .post(format!("{}{path}", self.base))
            .bearer_auth(KEY)
    }

    pub async fn connect_sandbox_partner(&self) {
        let c: Value = self
            .v1_post("/v1/connections")
            .json(&json!({"partner": "sandbox"}))
            .send()
            .await
            .expect("create")
            .json()
            .await
            .expect("json");
        let id = c["id"].as_str().expect("id");
        let r = self
            .v1_post(&format!("/v1/connections/{id}/activate"))
            .send()
            .await
            .expect("activate");
        assert_eq!(r.status(), 200);
    }

    /// `POST /v1/invoice/send`: status and body.
    pub async fn send_xml(&self, key: &str, body: Vec<u8>) -> (u16, Value) {
        let r = self
            .v1_post("/v1/invoice/send")
            .header("Content-Type", "application/xml")
            .header("Idempotency-Key", key)
            .body(body)
            .send()
            .await
            .expect("answered");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    pub async fn send_xml_owned(&self, key: String, body: Vec<u8>) -> (u16, Value) {
        self.send_xml(&key, body).await
    }

    /// The process still runs and answers `/health`.
    pub async fn assert_alive(&self) {
        let r = self
            .client
            .get(format!("{}/health", self.base))
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .expect("the server answers /health after the attack");
        assert_eq!(r.status(), 200);
    }

    /// CPU time the process has used so far (user and system), from `/proc/<pid>/stat`.
    pub fn cpu_time(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .expect("the server process exists");
        // Fields after the command name (which is in parentheses and may hold spaces).
        let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
        let fields: Vec<&str> = after.split_whitespace().collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        // utime and stime are fields 14 and 15 of the whole line: 11 and 12 after the name.
        let total = ticks(11) + ticks(12);
        Duration::from_millis(total * 1000 / clock_ticks_per_second())
    }

    /// User CPU time the worker pool's threads (`invex-worker-N`) have used so far: the parsing,
    /// identifier checks and validation of requests, without the storage's work (SQLite's
    /// WAL checkpoints land on whichever commit crosses their threshold).
    pub fn worker_cpu_time(&self) -> Duration {
        let mut ticks = 0;
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.pid()))
            .expect("the server process exists");
        for task in tasks.flatten() {
            let path = task.path();
            let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
            if !comm.starts_with("invex-worker") {
                continue;
            }
            let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            let fields: Vec<&str> = after.split_whitespace().collect();
            let field = |i: usize| {
                fields
                    .get(i)
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            // User time: the work itself. System time here is page faults, whose number
            // depends on what the allocator had handed back before, not on the input.
            ticks += field(11);
        }
        Duration::from_millis(ticks * 1000 / clock_ticks_per_second())
    }

    /// Peak resident memory of the process so far (VmHWM), in MB.
    pub fn peak_rss_mb(&self) -> u64 {
        self.status_mb("VmHWM:")
    }

    /// Resident memory of the process now (VmRSS), in MB.
    pub fn rss_mb(&self) -> u64 {
        self.status_mb("VmRSS:")
    }

    fn status_mb(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("the server process exists");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb / 1024)
            .expect(field)
    }

    /// Wait until the resident memory is at most `mb` (memory returned after a load).
    pub async fn rss_falls_to(&self, mb: u64, within: Duration) -> u64 {
        let deadline = Instant::now() + within;
        loop {
            let now = self.rss_mb();
            if now <= mb || Instant::now() > deadline {
                return now;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The kernel's clock tick (`getconf CLK_TCK`), 100 on Linux unless configured otherwise.
fn clock_ticks_per_second() -> u64 {
    static TICKS: OnceLock<u64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100)
    })
}

pub fn example_invoice() -> String {
    std::fs::read_to_string(repo().join("examples/invoice-sk.xml")).expect("example")
}

/// `xml` with its document number (the first `cbc:ID`, BT-1) set to `number`.
pub fn numbered(xml: Vec<u8>, number: &str) -> Vec<u8> {
    let text = String::from_utf8(xml).expect("utf8");
    let start = text.find("<cbc:ID>").expect("cbc:ID") + "<cbc:ID>".len();
    let end = start + text[start..].find("</cbc:ID>").expect("end of cbc:ID");
    format!("{}{number}{}", &text[..start], &text[end..]).into_bytes()
}

/// A valid invoice of at most `bytes` bytes (as many lines as fit).
pub fn large_invoice(bytes: usize) -> Vec<u8> {
    let per_line =
        invex_benches::generate_invoice(2).len() - invex_benches::generate_invoice(1).len();
    let mut lines = bytes / per_line;
    loop {
        let doc = invex_benches::generate_invoice(lines);
        if doc.len() <= bytes {
            return doc.into_bytes();
        }
        lines -= (doc.len() - bytes) / per_line + 1;
    }
}

/// Probes `/health` on a new connection every 25 ms until stopped, from a thread of its
/// own with blocking sockets, so that the load the test itself generates on its runtime
/// does not delay the probe.
pub struct HealthProbe {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Duration>>,
}

/// A probe that gets no answer within this counts as this slow (and fails the p99).
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

fn probe_once(port: u16) -> Duration {
    use std::io::{Read, Write};
    let start = Instant::now();
    let attempt = || -> Option<()> {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let mut s = std::net::TcpStream::connect_timeout(&addr, PROBE_TIMEOUT).ok()?;
        s.set_read_timeout(Some(PROBE_TIMEOUT)).ok()?;
        s.write_all(b"GET /health HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n")
            .ok()?;
        let mut answer = Vec::new();
        s.read_to_end(&mut answer).ok()?;
        answer.starts_with(b"HTTP/1.1 200").then_some(())
    };
    match attempt() {
        Some(()) => start.elapsed(),
        None => PROBE_TIMEOUT,
    }
}

impl HealthProbe {
    pub fn start(port: u16) -> HealthProbe {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut latencies = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                latencies.push(probe_once(port));
                std::thread::sleep(Duration::from_millis(25));
            }
            latencies
        });
        HealthProbe { stop, thread }
    }

    pub async fn stop(self) -> Vec<Duration> {
        self.stop.store(true, Ordering::Relaxed);
        tokio::task::spawn_blocking(move || self.thread.join().expect("probe thread"))
            .await
            .expect("joined")
    }
}

/// The 99th percentile of `/health` latencies is under 100 ms.
pub fn assert_fast_health(latencies: &[Duration], during: &str) {
    assert_health_within(latencies, during, Duration::from_millis(100));
}

/// The 99th percentile of `/health` latencies is under `bound`.
pub fn assert_health_within(latencies: &[Duration], during: &str, bound: Duration) {
    assert!(
        latencies.len() >= 20,
        "only {} probes during {during}",
        latencies.len()
    );
    let mut sorted = latencies.to_vec();
    sorted.sort();
    let p99 = sorted[(sorted.len() * 99).div_ceil(100) - 1];
    let max = sorted[sorted.len() - 1];
    eprintln!(
        "/health during {during}: {} probes, p50 {:?}, p99 {p99:?}, max {max:?}",
        sorted.len(),
        sorted[sorted.len() / 2]
    );
    assert!(
        p99 < bound,
        "/health p99 {p99:?} during {during} (bound {bound:?})"
    );
}

/// `/health` answered every probe during the attack, the slowest within `bound`. For loads
/// whose bound the issue does not state as the 100 ms p99 (that one is asserted with
/// [`assert_fast_health`] where it is stated): under this debug build the request threads
/// also receive and parse the uploads, so their latency shows the build, not the design.
pub fn assert_health_answered(latencies: &[Duration], during: &str, bound: Duration) {
    assert!(
        latencies.len() >= 20,
        "only {} probes during {during}",
        latencies.len()
    );
    let mut sorted = latencies.to_vec();
    sorted.sort();
    let max = sorted[sorted.len() - 1];
    eprintln!(
        "/health during {during}: {} probes, p50 {:?}, p99 {:?}, max {max:?}",
        sorted.len(),
        sorted[sorted.len() / 2],
        sorted[(sorted.len() * 99).div_ceil(100) - 1]
    );
    assert!(max < bound, "/health took {max:?} during {during}");
}

/// `n` connections that each send half a request header and then nothing.
pub async fn open_slow_sockets(port: u16, n: usize) -> Vec<TcpStream> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)).await else {
            continue;
        };
        if s.write_all(b"GET /health HTTP/1.1\r\nHost: slow\r\nX-Slow: ")
            .await
            .is_ok()
        {
            out.push(s);
        }
    }
    out
}

/// How many of `sockets` the server has closed (EOF, reset, or an error answer).
pub async fn count_closed(sockets: Vec<TcpStream>) -> usize {
    let checks = sockets.into_iter().map(|mut s| async move {
        let mut buf = [0u8; 64];
        match tokio::time::timeout(Duration::from_secs(1), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => true,
            Ok(Ok(_)) => buf.starts_with(b"HTTP/1.1 408") || buf.starts_with(b"HTTP/1.1 4"),
            Err(_) => false,
        }
    });
    futures_util::future::join_all(checks)
        .await
        .into_iter()
        .filter(|closed| *closed)
        .count()
}

/// Send `head`, then one byte every `every`, `n` times (or until the server stops reading),
/// and return what the server answered.
pub async fn trickle(port: u16, head: &[u8], every: Duration, n: usize) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connects");
    s.write_all(head).await.expect("head");
    for _ in 0..n {
        tokio::time::sleep(every).await;
        if s.write_all(b"<").await.is_err() {
            break;
        }
    }
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut answer)).await;
    String::from_utf8_lossy(&answer).into_owned()
}

impl Server {
    pub fn v1_get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .get(format!("{}{path}", self.base))
            .header("X-API-Key", KEY)
    }

    /// `POST /v1/invoice/convert` with one file: status and body.
    pub async fn convert(&self, name: &str, bytes: Vec<u8>) -> (u16, Value) {
        let form = reqwest::multipart::Form::new().part(
            "file",
            reqwest::multipart::Part::bytes(bytes).file_name(name.to_string()),
        );
        let r = self
            .v1_post("/v1/invoice/convert")
            .multipart(form)
            .send()
            .await
            .expect("answered");
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// The server's own xlsx template, member by member.
    pub async fn xlsx_template(&self) -> Vec<(String, Vec<u8>)> {
        use std::io::Read;
        let bytes = self
            .v1_get("/v1/invoice/convert/template.xlsx")
            .send()
            .await
            .expect("template")
            .bytes()
            .await
            .expect("body");
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).expect("zip");
        (0..zip.len())
            .map(|i| {
                let mut f = zip.by_index(i).expect("member");
                let mut content = Vec::new();
                f.read_to_end(&mut content).expect("read");
                (f.name().expect("member name").to_string(), content)
            })
            .collect()
    }
}

fn zip_of(members: &[(String, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write;
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in members {
        out.start_file(name.as_str(), options).expect("start");
        out.write_all(content).expect("write");
    }
    out.finish().expect("finish").into_inner()
}

/// Workbooks of a few KB that made a trusting reader allocate terabytes or expand without
/// bound, built from the server's own template: a value in XFD1048576, 10^14 declared shared
/// strings, 64 MiB of zeros deflated, 1,001 members. Each with the limit it must be refused by.
pub fn spreadsheet_bombs(template: &[(String, Vec<u8>)]) -> Vec<(&'static str, Vec<u8>)> {
    let changed = |member: &str, change: &dyn Fn(&str) -> String| {
        let members: Vec<(String, Vec<u8>)> = template
            .iter()
            .map(|(name, content)| {
                if name == member {
                    let text = String::from_utf8(content.clone()).expect("utf8");
                    (name.clone(), change(&text).into_bytes())
                } else {
                    (name.clone(), content.clone())
                }
            })
            .collect();
        zip_of(&members)
    };
    let far_cell = changed("xl/worksheets/sheet1.xml", &|t| {
        t.replacen(
            "</sheetData>",
            "<row r=\"1048576\"><c r=\"XFD1048576\"><v>1</v></c></row></sheetData>",
            1,
        )
    });
    let strings = changed("xl/sharedStrings.xml", &|t| {
        let start = t.find("uniqueCount=\"").expect("uniqueCount") + 13;
        let end = start + t[start..].find('"').expect("end");
        format!("{}100000000000000{}", &t[..start], &t[end..])
    });
    let mut zeros = template.to_vec();
    zeros.push(("xl/media/zeros.bin".into(), vec![0u8; 64 << 20]));
    let mut many = template.to_vec();
    many.extend((0..1001).map(|i| (format!("xl/media/m{i}.bin"), Vec::new())));
    vec![
        ("max_columns", far_cell),
        ("max_shared_strings", strings),
        ("max_compression_ratio", zip_of(&zeros)),
        ("max_zip_entries", zip_of(&many)),
    ]
}

/// A CSV of `n` one-line invoices (1.8 MB for 90,000).
pub fn csv_of_invoices(n: usize) -> Vec<u8> {
    let mut csv = String::from(
        "Invoice number,Issue date,Seller name,Seller VAT ID,Buyer name,Item name,Quantity,Unit price,VAT rate\n",
    );
    for i in 0..n {
        csv.push_str(&format!(
            "INV-{i},2027-01-15,Dodávateľ s.r.o.,SK2022749619,Odberateľ a.s.,Goods,1,10.00,23\n"
        ));
    }
    csv.into_bytes()
}
