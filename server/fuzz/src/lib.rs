//! What the fuzz targets share: the production limits, and building workbooks from
//! fuzzed parts so that mutations reach the sheet reader instead of breaking the ZIP.

use std::io::{Cursor, Read, Write};
use std::sync::{Once, OnceLock};

use invex_server::convert::config::ConvertConfig;
use invex_server::convert::extract::Limits;

/// The limits the server runs with by default.
pub fn limits() -> &'static Limits {
    static LIMITS: OnceLock<Limits> = OnceLock::new();
    LIMITS.get_or_init(|| ConvertConfig::default().limits())
}

/// Third-party readers whose panics the extractors turn into errors (`catch_unwind`).
const GUARDED: [&str; 2] = ["/calamine-", "/lopdf-"];

/// libFuzzer's panic hook aborts on every panic, even one the extractor catches. Keep
/// that for panics anywhere else (our code has no guard to rely on), and let a panic
/// inside a guarded reader unwind to its guard, as it does in the server.
pub fn contain_guarded_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let fuzzer_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let guarded = info
                .location()
                .is_some_and(|l| GUARDED.iter().any(|g| l.file().contains(g)));
            if !guarded {
                fuzzer_hook(info);
            }
        }));
    });
}

/// Separates the parts of a structured xlsx input: worksheet, shared strings, workbook.
pub const PART_SEPARATOR: &[u8] = b"\n--part--\n";

/// The members of the server's xlsx template.
fn template() -> &'static [(String, Vec<u8>)] {
    static MEMBERS: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    MEMBERS.get_or_init(|| {
        let bytes = invex_server::convert::tabular::template_xlsx().unwrap_or_default();
        let Ok(mut zip) = zip::ZipArchive::new(Cursor::new(bytes)) else {
            return Vec::new();
        };
        (0..zip.len())
            .filter_map(|i| {
                let mut f = zip.by_index(i).ok()?;
                let name = f.name().ok()?.to_string();
                let mut content = Vec::new();
                f.read_to_end(&mut content).ok()?;
                Some((name, content))
            })
            .collect()
    })
}

/// The template with its first worksheet, shared strings and workbook replaced by the
/// parts of `data` that are present (stored, so mutations arrive unchanged).
pub fn workbook_from_parts(data: &[u8]) -> Vec<u8> {
    let mut parts = Vec::new();
    let mut rest = data;
    while let Some(at) = rest
        .windows(PART_SEPARATOR.len())
        .position(|w| w == PART_SEPARATOR)
    {
        parts.push(&rest[..at]);
        rest = &rest[at + PART_SEPARATOR.len()..];
    }
    parts.push(rest);
    let replaced = [
        "xl/worksheets/sheet1.xml",
        "xl/sharedStrings.xml",
        "xl/workbook.xml",
    ];
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, content) in template() {
        let content = replaced
            .iter()
            .position(|r| r == name)
            .and_then(|i| parts.get(i).copied())
            .unwrap_or(content);
        if out.start_file(name.as_str(), stored).is_err() || out.write_all(content).is_err() {
            return Vec::new();
        }
    }
    out.finish().map(Cursor::into_inner).unwrap_or_default()
}
