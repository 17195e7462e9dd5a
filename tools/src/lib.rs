//! Command logic behind `invex validate` and `invex rules lint|test|snapshot|lock`.
//!
//! The binary (`invex-server`, binary `invex`) parses arguments and maps results to exit
//! codes; everything else lives here so that tests can drive it directly.

pub mod catalogue;
pub mod conformance;
pub mod diff;
pub mod fixtures;
pub mod lint;
pub mod lock;
pub mod snapshot;
pub mod validate;

use std::path::PathBuf;

/// Environment variable naming the rule-pack directory.
pub const RULEPACKS_ENV: &str = "INVEX_RULEPACKS";

/// The rule-pack directory when none is given: `$INVEX_RULEPACKS`, else `./rulepacks`.
pub fn default_rulepacks_dir() -> PathBuf {
    match std::env::var_os(RULEPACKS_ENV) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from("rulepacks"),
    }
}

/// `dir` when given, else [`default_rulepacks_dir`].
pub fn rulepacks_dir(dir: Option<PathBuf>) -> PathBuf {
    dir.unwrap_or_else(default_rulepacks_dir)
}

#[cfg(test)]
pub(crate) mod testkit {
    use std::path::{Path, PathBuf};

    pub fn write(root: &Path, rel: &str, content: &str) -> PathBuf {
        let path = root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create dirs");
        }
        std::fs::write(&path, content).expect("write");
        path
    }

    pub const OK_DOC: &str = "<Doc xmlns='urn:test:doc'><Line amount='1'/></Doc>";
    pub const BAD_DOC: &str = "<Doc xmlns='urn:test:doc'/>";

    /// A rule-pack tree with pack `p@1.0` (two asserts with fixtures, one without) and a
    /// profile `prof@1`.
    pub fn tree(root: &Path) {
        write(
            root,
            "p/1.0/pack.yaml",
            "pack: p
version: '1.0'
title: Test pack
namespaces:
  t: urn:test:doc
patterns:
  - patterns/main.yaml
",
        );
        write(
            root,
            "p/1.0/patterns/main.yaml",
            "pattern: main
rules:
  - context: /t:Doc
    asserts:
      - id: T-01
        flag: fatal
        test: exists(t:Line)
        message: A document has lines.
        remediation: Add a line.
        owner: line-items
        fixtures:
          pass: [ok.xml]
          fail: [bad.xml]
      - id: T-02
        flag: warning
        test: count(t:Line) < 5
        message: Many lines.
        remediation: Split the document.
        owner: line-items
",
        );
        write(root, "p/1.0/fixtures/ok.xml", OK_DOC);
        write(root, "p/1.0/fixtures/bad.xml", BAD_DOC);
        write(
            root,
            "profiles.yaml",
            "document_types:
  - id: t-doc
    namespace: urn:test:doc
    root: Doc
    title: Test document
profiles:
  - id: prof
    version: '1'
    title: Test profile
    packs: [p@1.0]
    documents: [t-doc]
",
        );
    }
}
