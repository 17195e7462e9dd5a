//! Any body through the multipart reader the upload routes use (`routes::form`), under the
//! boundary the seeds use, with a small body limit so that the limit's paths are reached.
#![no_main]

use std::sync::OnceLock;

use axum::body::Body;
use axum::extract::Request;
use libfuzzer_sys::fuzz_target;

pub const BOUNDARY: &str = "invexfuzzboundary";

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(request) = Request::builder()
        .method("POST")
        .uri("/api/validate")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={BOUNDARY}"),
        )
        .body(Body::from(data.to_vec()))
    else {
        return;
    };
    let read = runtime().block_on(invex_server::routes::form::read_all(request, 64 * 1024));
    if let Ok(parts) = read {
        let total: usize = parts.iter().map(|p| p.bytes.len()).sum();
        assert!(total <= data.len());
    }
});
