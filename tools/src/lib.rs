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

pub mod embedded;

/// Environment variable naming the rule-pack directory.
pub const RULEPACKS_ENV: &str = "INVEX_RULEPACKS";

/// Where rule packs come from: a directory named on the command line or in
/// `$INVEX_RULEPACKS`, else the packs embedded in this build.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rulepacks {
    Dir(PathBuf),
    Embedded,
}

impl Rulepacks {
    /// `dir` when given, else `$INVEX_RULEPACKS` when set, else the embedded packs.
    pub fn choose(dir: Option<PathBuf>) -> Rulepacks {
        match dir {
            Some(dir) => Rulepacks::Dir(dir),
            None => match std::env::var_os(RULEPACKS_ENV) {
                Some(v) if !v.is_empty() => Rulepacks::Dir(PathBuf::from(v)),
                _ => Rulepacks::Embedded,
            },
        }
    }

    /// The directory to load from (the embedded packs are written out on first use).
    pub fn dir(&self) -> std::io::Result<PathBuf> {
        match self {
            Rulepacks::Dir(dir) => Ok(dir.clone()),
            Rulepacks::Embedded => embedded::dir(),
        }
    }

    /// For messages: the directory, or `embedded`.
    pub fn describe(&self) -> String {
        match self {
            Rulepacks::Dir(dir) => dir.display().to_string(),
            Rulepacks::Embedded => format!("the embedded rule packs ({})", embedded::DIGEST),
        }
    }
}

/// The rule-pack directory for a command: `dir`, else `$INVEX_RULEPACKS`, else the
/// embedded packs written out (see [`embedded`]).
pub fn rulepacks_dir(dir: Option<PathBuf>) -> std::io::Result<PathBuf> {
    Rulepacks::choose(dir).dir()
}

/// `$INVEX_CACHE_DIR`, else `$XDG_CACHE_HOME/invex`, else `$HOME/.cache/invex`: the
/// expression memo and the embedded rule packs' copy.
pub fn cache_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("INVEX_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("invex"));
    }
    var("HOME").map(|home| PathBuf::from(home).join(".cache").join("invex"))
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
