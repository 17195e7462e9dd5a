//! Schema packs: a pack whose layer is an XML Schema instead of (or before) patterns.
//!
//! `pack.yaml` names the schema's document files (`schema.documents`, relative to the pack
//! directory) and declares the rules its findings carry, one per kind of violation the
//! validator reports (`schema.rules`), each with its title, remediation, owner and
//! fixtures like any assert. Loading compiles the schema at once, reading each file it
//! needs exactly once from inside the pack directory; the lock covers every file read, so
//! what is served is byte for byte what the pack's author locked.

use std::cell::RefCell;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::yamlpos::Seg;
use super::{Diagnostic, FixturesDef, PackDef, Source};
use crate::schema::{self, Schema, SchemaSource};

/// `schema:` in `pack.yaml`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaDef {
    pub format: SchemaFormat,
    /// The schema documents whose global elements are accepted document elements,
    /// relative to the pack directory.
    #[serde(deserialize_with = "crate::yaml::blank_as_default")]
    pub documents: Vec<String>,
    /// One rule per kind of schema violation (`UBL-XSD-*`), in the order reports list them.
    #[serde(deserialize_with = "crate::yaml::blank_as_default")]
    pub rules: Vec<SchemaRuleDef>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SchemaFormat {
    /// W3C XML Schema 1.0, the subset UBL 2.1 uses (see `crate::schema`).
    Xsd,
}

/// A kind of schema violation as a rule: its findings are fatal, their messages say what
/// the schema expected at the node; the rule gives the fix.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaRuleDef {
    pub id: String,
    /// What the rule finds, in one sentence (listings and the error catalogue).
    pub title: String,
    pub remediation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub fixtures: FixturesDef,
}

/// A schema pack's compiled schema and the files it was compiled from.
#[derive(Clone, Debug)]
pub struct LoadedSchema {
    pub schema: Arc<Schema>,
    /// Every file read, relative to the pack directory (`/`-separated), with its SHA-256
    /// (lowercase hex), in reading order.
    pub files: Vec<(String, String)>,
}

/// The largest schema file read: the UBL 2.1 files are at most 300 KB; a larger file is
/// not a schema a pack should ship.
const MAX_SCHEMA_FILE: u64 = 8 * 1024 * 1024;

/// Reads schema files from inside one pack directory only, recording what it read.
struct PackFiles {
    dir: PathBuf,
    read: RefCell<Vec<(String, String)>>,
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

impl SchemaSource for PackFiles {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        use std::io::{Error, ErrorKind, Read};
        // A schemaLocation may climb out of its folder (`../common/…`) but not out of the
        // pack: a pack is what its lock covers.
        let path = lexical(path);
        let Ok(rel) = path.strip_prefix(&self.dir) else {
            return Err(Error::new(
                ErrorKind::PermissionDenied,
                "outside the pack directory",
            ));
        };
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let file = std::fs::File::open(&path)?;
        let mut bytes = Vec::new();
        file.take(MAX_SCHEMA_FILE + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > MAX_SCHEMA_FILE {
            return Err(Error::new(
                ErrorKind::InvalidData,
                format!("larger than {MAX_SCHEMA_FILE} bytes"),
            ));
        }
        self.read
            .borrow_mut()
            .push((rel.join("/"), crate::lock::sha256_hex(&bytes)));
        Ok(bytes)
    }
}

fn escapes(rel: &str) -> bool {
    let p = Path::new(rel);
    p.is_absolute() || p.components().any(|c| matches!(c, Component::ParentDir))
}

/// Check and compile the `schema:` of a pack in `dir`. None when it does not compile (the
/// reasons are in `diags`).
pub(super) fn load(
    dir: &Path,
    pack: &Source<PackDef>,
    def: &SchemaDef,
    diags: &mut Vec<Diagnostic>,
) -> Option<LoadedSchema> {
    check_rules(dir, pack, def, diags);
    if def.documents.is_empty() {
        diags.push(pack.at(
            &[Seg::Key("schema"), Seg::Key("documents")],
            "a schema needs at least one document",
        ));
        return None;
    }
    let dir = lexical(dir);
    let mut entries = Vec::new();
    for (i, rel) in def.documents.iter().enumerate() {
        if escapes(rel) {
            diags.push(pack.at_value(
                &[Seg::Key("schema"), Seg::Key("documents"), Seg::Index(i)],
                format!(
                    "schema document `{rel}` must be a relative path inside the pack directory"
                ),
            ));
            return None;
        }
        entries.push(dir.join(rel));
    }
    let files = PackFiles {
        dir,
        read: RefCell::new(Vec::new()),
    };
    let refs: Vec<&Path> = entries.iter().map(PathBuf::as_path).collect();
    match schema::compile(&files, &refs) {
        Ok(schema) => Some(LoadedSchema {
            schema: Arc::new(schema),
            files: files.read.into_inner(),
        }),
        Err(e) => {
            diags.push(pack.at(
                &[Seg::Key("schema"), Seg::Key("documents")],
                format!("the schema does not compile: {e}"),
            ));
            None
        }
    }
}

/// Every rule id the validator can report must be declared once, and nothing else.
fn check_rules(dir: &Path, pack: &Source<PackDef>, def: &SchemaDef, diags: &mut Vec<Diagnostic>) {
    let known = schema::RULE_IDS;
    let fixtures = dir.join("fixtures");
    for (i, r) in def.rules.iter().enumerate() {
        let at = |key: &'static str| {
            [
                Seg::Key("schema"),
                Seg::Key("rules"),
                Seg::Index(i),
                Seg::Key(key),
            ]
        };
        if !known.contains(&r.id.as_str()) {
            diags.push(pack.at(
                &at("id"),
                format!(
                    "`{}` is not a kind of schema finding (the validator reports {})",
                    r.id,
                    known.join(", ")
                ),
            ));
        } else if def.rules[..i].iter().any(|o| o.id == r.id) {
            diags.push(pack.at(&at("id"), format!("duplicate rule id `{}`", r.id)));
        }
        for (key, list) in [("pass", &r.fixtures.pass), ("fail", &r.fixtures.fail)] {
            for (fi, name) in list.iter().enumerate() {
                let path = fixtures.join(name);
                if escapes(name) || !path.is_file() {
                    let mut yaml_path = at("fixtures").to_vec();
                    yaml_path.push(Seg::Key(key));
                    yaml_path.push(Seg::Index(fi));
                    diags.push(pack.at_value(
                        &yaml_path,
                        format!("fixture file `{}` not found", path.display()),
                    ));
                }
            }
        }
    }
    for id in known {
        if !def.rules.iter().any(|r| r.id == *id) {
            diags.push(pack.at(
                &[Seg::Key("schema"), Seg::Key("rules")],
                format!("the schema's rules must declare `{id}`: the validator reports it"),
            ));
        }
    }
}
