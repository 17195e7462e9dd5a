//! Every problem type the server can answer has its entry in docs/problems.md, which the
//! `type` URI of each problem links to.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The string literal right after `marker` and the arguments before it: for
/// `Problem::new(StatusCode::X, "slug", ...)` the slug is the first literal after the
/// status; for `Problem::conflict("slug", ...)` it is the first argument.
fn slugs_after(text: &str, marker: &str, skip_first_argument: bool) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let mut args = &rest[at + marker.len()..];
        if skip_first_argument {
            match args.find(',') {
                Some(comma) => args = &args[comma + 1..],
                None => break,
            }
        }
        let trimmed = args.trim_start();
        if let Some(lit) = trimmed.strip_prefix('"') {
            if let Some(end) = lit.find('"') {
                found.push(lit[..end].to_string());
            }
        }
        rest = &rest[at + marker.len()..];
    }
    found
}

#[test]
fn every_problem_slug_is_documented() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo");
    let doc = std::fs::read_to_string(repo.join("docs/problems.md")).expect("problems.md");
    let documented: Vec<&str> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(str::trim)
        .collect();
    let mut files = Vec::new();
    rust_files(&repo.join("server/src"), &mut files);
    let mut slugs = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source");
        slugs.extend(slugs_after(&text, "Problem::new(", true));
        slugs.extend(slugs_after(&text, "Problem::conflict(", false));
    }
    slugs.sort();
    slugs.dedup();
    assert!(
        slugs.len() >= 20,
        "the scan found too few problem types: {slugs:?}"
    );
    let missing: Vec<&String> = slugs
        .iter()
        .filter(|s| !documented.contains(&s.as_str()))
        .collect();
    assert!(missing.is_empty(), "not in docs/problems.md: {missing:?}");
}
