//! The rule-pack model (see docs/rule-packs.md) and loading a rule-pack directory.
//!
//! ```text
//! rulepacks/
//!   profiles.yaml
//!   <pack-id>/<version>/pack.yaml, patterns/*.yaml, fixtures/*.xml
//! ```
//!
//! Loading parses every file with serde (`deny_unknown_fields`) and checks what can be
//! checked without compiling XPath: identities, duplicate ids, override shapes, fixture
//! files, profile references. Every problem becomes a [`Diagnostic`] with
//! `file:line:column`; loading goes on past errors so that `invex rules lint` can list
//! them all.

pub mod schema;
pub mod yamlpos;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use crate::report::Severity;
pub use schema::{LoadedSchema, SchemaDef, SchemaFormat, SchemaRuleDef};
use yamlpos::{PosTree, Seg};

/// Owners the pack format names (`owner:`); lint warns about others.
pub const KNOWN_OWNERS: &[&str] = &[
    "sender-mapping",
    "seller-master-data",
    "buyer-master-data",
    "tax-settings",
    "payment-settings",
    "line-items",
    "amounts",
    "document-settings",
];

// ---------------------------------------------------------------------------------------
// Model
// ---------------------------------------------------------------------------------------

/// `pack.yaml`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PackDef {
    pub pack: String,
    pub version: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub namespaces: Namespaces,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub lets: Vec<LetDef>,
    /// Pattern files, relative to the pack directory, in evaluation order.
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub patterns: Vec<String>,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub overrides: Vec<OverrideDef>,
    /// An XML Schema checked before the pack's patterns (a schema pack; see
    /// docs/rule-packs.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<SchemaDef>,
}

/// Namespace prefix → URI, in declaration order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Namespaces(pub Vec<(String, String)>);

impl Namespaces {
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(p, u)| (p.as_str(), u.as_str()))
    }
}

impl<'de> Deserialize<'de> for Namespaces {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Namespaces;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping of namespace prefixes to URIs")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Namespaces, A::Error> {
                let mut out: Vec<(String, String)> = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, String>()? {
                    if out.iter().any(|(p, _)| *p == k) {
                        return Err(serde::de::Error::custom(format!(
                            "namespace prefix `{k}` declared twice"
                        )));
                    }
                    out.push((k, v));
                }
                Ok(Namespaces(out))
            }
        }
        d.deserialize_map(V)
    }
}

impl Serialize for Namespaces {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (p, u) in &self.0 {
            m.serialize_entry(p, u)?;
        }
        m.end()
    }
}

/// A `let`: `name` bound to the value of the XPath expression `value`.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LetDef {
    pub name: String,
    pub value: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OverrideAction {
    /// The lower pack's rule is dropped; this pack supplies an assert with the same id.
    Replace,
    /// The lower pack's rule keeps running with another flag.
    Reflag,
    /// The lower pack's rule is dropped.
    Disable,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OverrideDef {
    pub rule: String,
    pub action: OverrideAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flag: Option<Severity>,
}

/// A pattern file.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PatternDef {
    pub pattern: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Pattern lets are global (evaluated once per document).
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub lets: Vec<LetDef>,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub rules: Vec<RuleDef>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleDef {
    pub context: String,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub lets: Vec<LetDef>,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub asserts: Vec<CheckDef>,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub reports: Vec<CheckDef>,
}

/// An assert or a report.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CheckDef {
    pub id: String,
    pub flag: Severity,
    pub test: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub business_terms: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub fixtures: FixturesDef,
}

/// Fixture documents, relative to the pack's `fixtures/` directory.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FixturesDef {
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub pass: Vec<String>,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub fail: Vec<String>,
}

/// `profiles.yaml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfilesDef {
    /// The document types profiles name in `documents` (and types recognised but not
    /// supported yet, so that their refusal can say so).
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub document_types: Vec<DocumentTypeDef>,
    #[serde(default, deserialize_with = "crate::yaml::blank_as_default")]
    pub profiles: Vec<ProfileDef>,
}

/// A document type: the namespace and local name of the document element.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentTypeDef {
    /// Referenced by profiles' `documents`: [a-z0-9-]+.
    pub id: String,
    /// The document element's namespace URI (empty: no namespace).
    pub namespace: String,
    /// The document element's local name.
    pub root: String,
    /// A readable name, e.g. `UBL 2.1 Invoice`.
    pub title: String,
    /// Set for a type invex recognises but no profile may take yet: why, and what to send
    /// instead. Its documents are refused with this sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<String>,
}

impl DocumentTypeDef {
    /// `{namespace}root`, or `root` without a namespace.
    pub fn clark(&self) -> String {
        crate::doctype::clark(&self.namespace, &self.root)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileDef {
    pub id: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `pack-id@version`, lowest layer first.
    #[serde(deserialize_with = "crate::yaml::blank_as_default")]
    pub packs: Vec<String>,
    /// Ids of the document types (`document_types`) the profile validates; any other
    /// document element gets the fatal finding `INVEX-DOCTYPE` instead of the rules.
    #[serde(deserialize_with = "crate::yaml::blank_as_default")]
    pub documents: Vec<String>,
    /// Specification identifiers (BT-24, `cbc:CustomizationID`) the profile is for: an
    /// identifier equal to or starting with one of them. Profile detection uses them; a
    /// profile named explicitly validates a document whatever its identifier says (its
    /// rules, e.g. BR-01 and PEPPOL-EN16931-R004, judge the identifier).
    #[serde(
        default,
        deserialize_with = "crate::yaml::blank_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub customization_ids: Vec<String>,
    /// How detection treats the profile.
    #[serde(
        default,
        deserialize_with = "crate::yaml::blank_as_default",
        skip_serializing_if = "DetectionDef::is_default"
    )]
    pub detection: DetectionDef,
    /// The first day this version is in force (`YYYY-MM-DD`); absent: in force from the
    /// start. A bare profile name resolves to the newest version in force on the day asked
    /// for (today by default); `id@version` always names that version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_from: Option<String>,
    /// The last day this version is in force (`YYYY-MM-DD`, inclusive); absent: until a
    /// later version replaces it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<String>,
}

/// A profile's part in detection (`profile: auto`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DetectionDef {
    /// False: detection never picks the profile; clients name it.
    #[serde(default = "yes")]
    pub auto: bool,
    /// The seller's country code (BT-40) must be this one for detection to pick the profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seller_country: Option<String>,
    /// The buyer's country code (BT-55) must be this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buyer_country: Option<String>,
}

fn yes() -> bool {
    true
}

impl Default for DetectionDef {
    fn default() -> Self {
        DetectionDef {
            auto: true,
            seller_country: None,
            buyer_country: None,
        }
    }
}

impl DetectionDef {
    fn is_default(&self) -> bool {
        *self == DetectionDef::default()
    }

    /// How many country conditions the profile sets (more: more specific).
    pub fn conditions(&self) -> usize {
        usize::from(self.seller_country.is_some()) + usize::from(self.buyer_country.is_some())
    }
}

/// A `YYYY-MM-DD` date of `profiles.yaml`.
pub fn parse_date(s: &str) -> Option<chrono::NaiveDate> {
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()
}

impl ProfileDef {
    /// Whether the version is in force on `day` (dates that do not parse were reported by
    /// the loader and count as absent).
    pub fn in_force(&self, day: chrono::NaiveDate) -> bool {
        let from = self.valid_from.as_deref().and_then(parse_date);
        let until = self.valid_until.as_deref().and_then(parse_date);
        from.is_none_or(|f| f <= day) && until.is_none_or(|u| day <= u)
    }

    /// The window in words: `from 2026-11-23`, `2026-08-24 to 2027-02-23`, `always`.
    pub fn window(&self) -> String {
        match (&self.valid_from, &self.valid_until) {
            (Some(f), Some(u)) => format!("{f} to {u}"),
            (Some(f), None) => format!("from {f}"),
            (None, Some(u)) => format!("until {u}"),
            (None, None) => "always".to_string(),
        }
    }

    /// `id@version`.
    pub fn reference(&self) -> String {
        format!("{}@{}", self.id, self.version)
    }
}

// ---------------------------------------------------------------------------------------
// Diagnostics
// ---------------------------------------------------------------------------------------

/// A problem in a rule-pack file, at a 1-based line and column (0 when not known).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{}", render_diagnostic(.file, *.line, *.column, .message))]
pub struct Diagnostic {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

fn render_diagnostic(file: &Path, line: usize, column: usize, message: &str) -> String {
    if line == 0 {
        format!("{}: {message}", file.display())
    } else {
        format!("{}:{line}:{column}: {message}", file.display())
    }
}

impl Diagnostic {
    pub fn new(file: impl Into<PathBuf>, pos: yamlpos::Pos, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.into(),
            line: pos.line,
            column: pos.column,
            message: message.into(),
        }
    }

    /// A problem with a whole file (no position).
    pub fn file(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.into(),
            line: 0,
            column: 0,
            message: message.into(),
        }
    }
}

/// A rule-pack directory that could not be loaded or compiled: every problem found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", render_all(.diagnostics))]
pub struct LoadError {
    pub diagnostics: Vec<Diagnostic>,
}

fn render_all(diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Turn a YAML error into a diagnostic at its location.
fn yaml_diagnostic(file: &Path, e: &crate::yaml::Error) -> Diagnostic {
    match e.location() {
        Some((line, column)) => Diagnostic {
            file: file.to_path_buf(),
            line,
            column,
            message: e.message().to_string(),
        },
        None => Diagnostic::file(file, e.message()),
    }
}

// ---------------------------------------------------------------------------------------
// Loaded sources
// ---------------------------------------------------------------------------------------

/// A parsed YAML file with the positions of its nodes.
#[derive(Clone, Debug)]
pub struct Source<T> {
    pub file: PathBuf,
    pub def: T,
    pub positions: PosTree,
    /// SHA-256 (lowercase hex) of the bytes parsed: what a lock file compares.
    pub sha256: String,
}

impl<T> Source<T> {
    /// A diagnostic at the key or item `path` of this file.
    pub fn at(&self, path: &[Seg<'_>], message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&self.file, self.positions.locate(path), message)
    }

    /// A diagnostic at the value of `path` of this file.
    pub fn at_value(&self, path: &[Seg<'_>], message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&self.file, self.positions.locate_value(path), message)
    }
}

/// One pack: `pack.yaml` and its pattern files.
#[derive(Clone, Debug)]
pub struct PackSource {
    /// `<root>/<id>/<version>`.
    pub dir: PathBuf,
    pub pack: Source<PackDef>,
    /// Pattern files in `pack.yaml` order (files that failed to load are missing).
    pub patterns: Vec<Source<PatternDef>>,
    /// The compiled `schema:` of a schema pack (None also when it failed to compile).
    pub schema: Option<LoadedSchema>,
}

impl PackSource {
    /// `id@version`.
    pub fn reference(&self) -> String {
        format!("{}@{}", self.pack.def.pack, self.pack.def.version)
    }

    pub fn fixtures_dir(&self) -> PathBuf {
        self.dir.join("fixtures")
    }
}

/// Everything under a rule-pack directory.
#[derive(Clone, Debug, Default)]
pub struct SourceTree {
    pub root: PathBuf,
    /// Packs that loaded (possibly with some errors), sorted by id then version.
    pub packs: Vec<PackSource>,
    /// `profiles.yaml`, when present and readable.
    pub profiles: Option<Source<ProfilesDef>>,
    /// `id@version` (from directory names) of packs whose `pack.yaml` failed to load.
    pub failed: Vec<String>,
}

pub const PROFILES_FILE: &str = "profiles.yaml";
pub const PACK_FILE: &str = "pack.yaml";

fn read_yaml<T: serde::de::DeserializeOwned>(
    file: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Option<Source<T>> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            diags.push(Diagnostic::file(file, format!("cannot read: {e}")));
            return None;
        }
    };
    match crate::yaml::from_str::<T>(&text) {
        Ok(def) => Some(Source {
            file: file.to_path_buf(),
            def,
            positions: PosTree::parse(&text),
            sha256: crate::lock::sha256_hex(text.as_bytes()),
        }),
        Err(e) => {
            diags.push(yaml_diagnostic(file, &e));
            None
        }
    }
}

fn is_pack_id(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// A pack id may also hold dots between its parts, as in the version of a standard it
/// carries (`ubl-2.1-xsd`).
fn is_pack_name(s: &str) -> bool {
    !s.starts_with('.') && !s.ends_with('.') && !s.contains("..") && s.split('.').all(is_pack_id)
}

fn is_version(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'+'))
}

/// An XML NCName, loosely: a letter or `_` then letters, digits, `-`, `_`, `.`.
pub fn is_ncname(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A rule id: no white space, and not one of the ids the engine gives its own findings.
fn is_rule_id(s: &str) -> bool {
    !s.is_empty()
        && !s.chars().any(|c| c.is_whitespace())
        && s != crate::report::ENGINE_ERROR
        && s != crate::doctype::DOCTYPE_RULE
}

/// Load every pack and `profiles.yaml` under `root`. Never fails as a whole: what cannot
/// be loaded is reported in the diagnostics (empty when all is well).
pub fn load_dir(root: &Path) -> (SourceTree, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut tree = SourceTree {
        root: root.to_path_buf(),
        ..SourceTree::default()
    };
    let entries = match std::fs::read_dir(root) {
        Ok(e) => e,
        Err(e) => {
            diags.push(Diagnostic::file(
                root,
                format!("cannot read the rule-pack directory: {e}"),
            ));
            return (tree, diags);
        }
    };
    let mut pack_files = Vec::new();
    for id_dir in sorted_subdirs(entries) {
        let Ok(version_entries) = std::fs::read_dir(&id_dir) else {
            continue;
        };
        for version_dir in sorted_subdirs(version_entries) {
            let file = version_dir.join(PACK_FILE);
            if file.is_file() {
                pack_files.push((version_dir, file));
            }
        }
    }
    for (dir, file) in pack_files {
        match load_pack(&dir, &file, &mut diags) {
            Some(pack) => tree.packs.push(pack),
            None => tree.failed.push(dir_reference(&dir)),
        }
    }
    tree.packs.sort_by(|a, b| {
        (&a.pack.def.pack, &a.pack.def.version).cmp(&(&b.pack.def.pack, &b.pack.def.version))
    });
    check_duplicate_packs(&tree, &mut diags);

    let profiles_file = root.join(PROFILES_FILE);
    if profiles_file.is_file() {
        if let Some(p) = read_yaml::<ProfilesDef>(&profiles_file, &mut diags) {
            // A pack whose pack.yaml failed to load has its own diagnostic.
            let known = |r: &str| {
                tree.packs.iter().any(|s| s.reference() == r) || tree.failed.iter().any(|f| f == r)
            };
            check_profiles(&p, &known, &mut diags);
            tree.profiles = Some(p);
        }
    }
    (tree, diags)
}

/// Load `profiles.yaml` under `root` alone, checked as [`load_dir`] checks it, a pack
/// reference counting as known when its `pack.yaml` exists. For callers that load only
/// the packs they need ([`load_pack_at`]).
pub fn load_profiles(root: &Path) -> Result<Source<ProfilesDef>, LoadError> {
    let mut diags = Vec::new();
    let file = root.join(PROFILES_FILE);
    let loaded = read_yaml::<ProfilesDef>(&file, &mut diags);
    if let Some(p) = &loaded {
        let known = |r: &str| {
            split_reference(r)
                .is_some_and(|(id, version)| root.join(id).join(version).join(PACK_FILE).is_file())
        };
        check_profiles(p, &known, &mut diags);
    }
    match loaded {
        Some(p) if diags.is_empty() => Ok(p),
        _ => Err(LoadError { diagnostics: diags }),
    }
}

/// Load the pack `id@version` from `<root>/<id>/<version>`, checked as [`load_dir`]
/// checks each pack.
pub fn load_pack_at(root: &Path, reference: &str) -> Result<PackSource, LoadError> {
    let mut diags = Vec::new();
    let Some((id, version)) = split_reference(reference) else {
        return Err(LoadError {
            diagnostics: vec![Diagnostic::file(
                root,
                format!("`{reference}` is not a pack reference (`pack-id@version`)"),
            )],
        });
    };
    let dir = root.join(id).join(version);
    let loaded = load_pack(&dir, &dir.join(PACK_FILE), &mut diags);
    match loaded {
        Some(src) if diags.is_empty() => Ok(src),
        _ => Err(LoadError { diagnostics: diags }),
    }
}

/// `id@version` as the directory `<root>/<id>/<version>` names it.
fn dir_reference(dir: &Path) -> String {
    let name = |p: Option<&Path>| {
        p.and_then(Path::file_name)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    format!("{}@{}", name(dir.parent()), name(Some(dir)))
}

fn sorted_subdirs(entries: std::fs::ReadDir) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

fn check_duplicate_packs(tree: &SourceTree, diags: &mut Vec<Diagnostic>) {
    for w in tree.packs.windows(2) {
        if w[0].pack.def.pack == w[1].pack.def.pack
            && w[0].pack.def.version == w[1].pack.def.version
        {
            diags.push(w[1].pack.at(
                &[Seg::Key("pack")],
                format!(
                    "pack {} is also defined in {}",
                    w[1].reference(),
                    w[0].pack.file.display()
                ),
            ));
        }
    }
}

/// Load one pack directory (`pack.yaml` at `file`) and check what can be checked without
/// compiling expressions.
pub fn load_pack(dir: &Path, file: &Path, diags: &mut Vec<Diagnostic>) -> Option<PackSource> {
    let pack = read_yaml::<PackDef>(file, diags)?;
    let def = &pack.def;
    if !is_pack_name(&def.pack) {
        diags.push(pack.at(
            &[Seg::Key("pack")],
            format!(
                "pack id `{}` must consist of a-z, 0-9, `-` and single inner `.`",
                def.pack
            ),
        ));
    }
    if !is_version(&def.version) {
        diags.push(pack.at(
            &[Seg::Key("version")],
            format!("pack version `{}` is not a valid version", def.version),
        ));
    }
    let dir_version = dir.file_name().map(|s| s.to_string_lossy().into_owned());
    let dir_id = dir
        .parent()
        .and_then(Path::file_name)
        .map(|s| s.to_string_lossy().into_owned());
    if dir_id.as_deref() != Some(def.pack.as_str()) {
        diags.push(pack.at(
            &[Seg::Key("pack")],
            format!(
                "pack `{}` lives in directory `{}`: the directory must be named after the pack id",
                def.pack,
                dir_id.unwrap_or_default()
            ),
        ));
    }
    if dir_version.as_deref() != Some(def.version.as_str()) {
        diags.push(pack.at(
            &[Seg::Key("version")],
            format!(
                "pack version `{}` lives in directory `{}`: the directory must be named after the version",
                def.version,
                dir_version.unwrap_or_default()
            ),
        ));
    }
    for (prefix, uri) in def.namespaces.iter() {
        if !is_ncname(prefix) {
            diags.push(pack.at(
                &[Seg::Key("namespaces"), Seg::Key(prefix)],
                format!("`{prefix}` is not a valid namespace prefix"),
            ));
        }
        if uri.is_empty() {
            diags.push(pack.at(
                &[Seg::Key("namespaces"), Seg::Key(prefix)],
                format!("namespace prefix `{prefix}` is bound to an empty URI"),
            ));
        }
    }
    for (i, l) in def.lets.iter().enumerate() {
        if !is_ncname(&l.name) {
            diags.push(pack.at(
                &[Seg::Key("lets"), Seg::Index(i), Seg::Key("name")],
                format!("`{}` is not a valid variable name", l.name),
            ));
        }
    }

    // Pattern files.
    let mut patterns = Vec::new();
    let mut pattern_ids: HashMap<String, PathBuf> = HashMap::new();
    for (i, rel) in def.patterns.iter().enumerate() {
        let rel_path = Path::new(rel);
        let escapes = rel_path.is_absolute()
            || rel_path
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir));
        if escapes {
            diags.push(pack.at_value(
                &[Seg::Key("patterns"), Seg::Index(i)],
                format!("pattern file `{rel}` must be a relative path inside the pack directory"),
            ));
            continue;
        }
        let path = dir.join(rel_path);
        if !path.is_file() {
            diags.push(pack.at_value(
                &[Seg::Key("patterns"), Seg::Index(i)],
                format!("pattern file `{rel}` not found"),
            ));
            continue;
        }
        let Some(p) = read_yaml::<PatternDef>(&path, diags) else {
            continue;
        };
        if p.def.pattern.is_empty() || p.def.pattern.chars().any(char::is_whitespace) {
            diags.push(p.at(
                &[Seg::Key("pattern")],
                format!("`{}` is not a valid pattern id", p.def.pattern),
            ));
        }
        if let Some(first) = pattern_ids.get(&p.def.pattern) {
            diags.push(p.at(
                &[Seg::Key("pattern")],
                format!(
                    "pattern id `{}` is already used by {}",
                    p.def.pattern,
                    first.display()
                ),
            ));
        } else {
            pattern_ids.insert(p.def.pattern.clone(), p.file.clone());
        }
        patterns.push(p);
    }

    let schema = match &pack.def.schema {
        Some(def) => Some(schema::load(dir, &pack, def, diags)?),
        None => None,
    };
    let source = PackSource {
        dir: dir.to_path_buf(),
        pack,
        patterns,
        schema,
    };
    check_rules(&source, diags);
    check_overrides(&source, diags);
    Some(source)
}

/// Where a check sits: pattern index, rule index, `asserts`/`reports`, index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckAt {
    pub pattern: usize,
    pub rule: usize,
    pub kind: &'static str,
    pub index: usize,
}

impl CheckAt {
    /// The YAML path of this check's key `key` in its pattern file.
    pub fn path<'a>(&self, key: &'a str) -> [Seg<'a>; 5] {
        [
            Seg::Key("rules"),
            Seg::Index(self.rule),
            Seg::Key(self.kind),
            Seg::Index(self.index),
            Seg::Key(key),
        ]
    }
}

impl PackSource {
    /// Every assert and report of the pack, in order, with where it sits.
    pub fn checks(&self) -> Vec<(CheckAt, &CheckDef)> {
        let mut out = Vec::new();
        for (pi, p) in self.patterns.iter().enumerate() {
            for (ri, r) in p.def.rules.iter().enumerate() {
                for (kind, list) in [("asserts", &r.asserts), ("reports", &r.reports)] {
                    for (ci, c) in list.iter().enumerate() {
                        out.push((
                            CheckAt {
                                pattern: pi,
                                rule: ri,
                                kind,
                                index: ci,
                            },
                            c,
                        ));
                    }
                }
            }
        }
        out
    }
}

fn check_rules(source: &PackSource, diags: &mut Vec<Diagnostic>) {
    let mut ids: HashMap<&str, (PathBuf, usize)> = HashMap::new();
    let fixtures = source.fixtures_dir();
    for p in &source.patterns {
        for (li, l) in p.def.lets.iter().enumerate() {
            if !is_ncname(&l.name) {
                diags.push(p.at(
                    &[Seg::Key("lets"), Seg::Index(li), Seg::Key("name")],
                    format!("`{}` is not a valid variable name", l.name),
                ));
            }
        }
        for (ri, r) in p.def.rules.iter().enumerate() {
            for (li, l) in r.lets.iter().enumerate() {
                if !is_ncname(&l.name) {
                    diags.push(p.at(
                        &[
                            Seg::Key("rules"),
                            Seg::Index(ri),
                            Seg::Key("lets"),
                            Seg::Index(li),
                            Seg::Key("name"),
                        ],
                        format!("`{}` is not a valid variable name", l.name),
                    ));
                }
            }
            if r.asserts.is_empty() && r.reports.is_empty() {
                diags.push(p.at(
                    &[Seg::Key("rules"), Seg::Index(ri), Seg::Key("context")],
                    "a rule needs at least one assert or report",
                ));
            }
        }
    }
    for (at, c) in source.checks() {
        let p = &source.patterns[at.pattern];
        if !is_rule_id(&c.id) {
            diags.push(p.at(&at.path("id"), format!("`{}` is not a valid rule id", c.id)));
        }
        let pos = p.positions.locate(&at.path("id"));
        match ids.get(c.id.as_str()) {
            Some((file, line)) => diags.push(Diagnostic::new(
                &p.file,
                pos,
                format!(
                    "duplicate rule id `{}` (first defined at {}:{})",
                    c.id,
                    file.display(),
                    line
                ),
            )),
            None => {
                ids.insert(&c.id, (p.file.clone(), pos.line));
            }
        }
        for (key, list) in [("pass", &c.fixtures.pass), ("fail", &c.fixtures.fail)] {
            for (fi, name) in list.iter().enumerate() {
                let path = fixtures.join(name);
                if !path.is_file() {
                    let mut yaml_path = at.path("fixtures").to_vec();
                    yaml_path.push(Seg::Key(key));
                    yaml_path.push(Seg::Index(fi));
                    diags.push(p.at_value(
                        &yaml_path,
                        format!("fixture file `{}` not found", path.display()),
                    ));
                }
            }
        }
    }
}

fn check_overrides(source: &PackSource, diags: &mut Vec<Diagnostic>) {
    let pack = &source.pack;
    let own: HashMap<&str, ()> = source
        .checks()
        .into_iter()
        .map(|(_, c)| (c.id.as_str(), ()))
        .collect();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, o) in pack.def.overrides.iter().enumerate() {
        let at = |key: &'static str| [Seg::Key("overrides"), Seg::Index(i), Seg::Key(key)];
        if let Some(first) = seen.insert(&o.rule, i) {
            diags.push(pack.at(
                &at("rule"),
                format!(
                    "rule `{}` is already overridden by override #{}",
                    o.rule,
                    first + 1
                ),
            ));
        }
        match (o.action, o.flag) {
            (OverrideAction::Reflag, None) => diags.push(pack.at(
                &at("action"),
                format!("override of `{}`: `reflag` needs a `flag`", o.rule),
            )),
            (OverrideAction::Replace | OverrideAction::Disable, Some(_)) => diags.push(pack.at(
                &at("flag"),
                format!("override of `{}`: `flag` applies to `reflag` only", o.rule),
            )),
            _ => {}
        }
        let defines_it = own.contains_key(o.rule.as_str());
        match o.action {
            OverrideAction::Replace if !defines_it => diags.push(pack.at(
                &at("rule"),
                format!(
                    "override replaces `{}` but this pack defines no assert or report with that id",
                    o.rule
                ),
            )),
            OverrideAction::Reflag | OverrideAction::Disable if defines_it => diags.push(pack.at(
                &at("rule"),
                format!(
                    "override of `{}`: this pack defines that rule itself (use `replace`)",
                    o.rule
                ),
            )),
            _ => {}
        }
    }
}

/// Split `id@version`.
pub fn split_reference(r: &str) -> Option<(&str, &str)> {
    let (id, version) = r.split_once('@')?;
    if id.is_empty() || version.is_empty() {
        return None;
    }
    Some((id, version))
}

fn check_document_types(p: &Source<ProfilesDef>, diags: &mut Vec<Diagnostic>) {
    let mut ids: HashMap<&str, usize> = HashMap::new();
    let mut roots: HashMap<(&str, &str), usize> = HashMap::new();
    for (i, t) in p.def.document_types.iter().enumerate() {
        let at = |key: &'static str| [Seg::Key("document_types"), Seg::Index(i), Seg::Key(key)];
        if !is_pack_id(&t.id) {
            diags.push(p.at(
                &at("id"),
                format!(
                    "document type id `{}` must consist of a-z, 0-9 and `-`",
                    t.id
                ),
            ));
        }
        if ids.insert(&t.id, i).is_some() {
            diags.push(p.at(
                &at("id"),
                format!("document type `{}` is declared twice", t.id),
            ));
        }
        if !is_ncname(&t.root) {
            diags.push(p.at(
                &at("root"),
                format!("`{}` is not an element local name", t.root),
            ));
        }
        if t.namespace.chars().any(char::is_whitespace) {
            diags.push(p.at(
                &at("namespace"),
                format!("namespace `{}` contains white space", t.namespace),
            ));
        }
        if let Some(first) = roots.insert((&t.namespace, &t.root), i) {
            diags.push(p.at(
                &at("root"),
                format!(
                    "document type `{}` has the same document element {} as `{}`",
                    t.id,
                    t.clark(),
                    p.def.document_types[first].id
                ),
            ));
        }
        if t.unsupported
            .as_deref()
            .is_some_and(|u| u.trim().is_empty())
        {
            diags.push(p.at(
                &at("unsupported"),
                "`unsupported` must say why and what to send instead",
            ));
        }
    }
}

/// Profile detection must be able to tell every two profiles apart.
fn check_detection(p: &Source<ProfilesDef>, diags: &mut Vec<Diagnostic>) {
    let profiles = &p.def.profiles;
    for (i, a) in profiles.iter().enumerate() {
        let d = &a.detection;
        let at = |key: &'static str| {
            [
                Seg::Key("profiles"),
                Seg::Index(i),
                Seg::Key("detection"),
                Seg::Key(key),
            ]
        };
        for (key, c) in [
            ("seller_country", &d.seller_country),
            ("buyer_country", &d.buyer_country),
        ] {
            if let Some(c) = c {
                if c.len() != 2 || !c.bytes().all(|b| b.is_ascii_uppercase()) {
                    diags.push(p.at_value(
                        &at(key),
                        format!(
                            "`{c}` is not an ISO 3166-1 alpha-2 country code (two capital letters)"
                        ),
                    ));
                }
                if !d.auto {
                    diags.push(p.at(
                        &at(key),
                        format!(
                            "profile {} is never detected (`auto: false`): `{key}` has no effect",
                            a.reference()
                        ),
                    ));
                }
            }
        }
        // Versions of one profile share everything; detection picks the highest.
        for b in profiles[..i].iter().filter(|b| b.id != a.id) {
            let shared_doc = a.documents.iter().any(|x| b.documents.contains(x));
            let shared_id = a
                .customization_ids
                .iter()
                .find(|x| b.customization_ids.contains(x));
            let same_conditions = a.detection.seller_country == b.detection.seller_country
                && a.detection.buyer_country == b.detection.buyer_country;
            if let (true, Some(id), true, true, true) = (
                shared_doc,
                shared_id,
                same_conditions,
                a.detection.auto,
                b.detection.auto,
            ) {
                diags.push(p.at(
                    &[Seg::Key("profiles"), Seg::Index(i), Seg::Key("id")],
                    format!(
                        "profiles {} and {} both claim specification identifier `{id}` under the \
                         same conditions: detection cannot choose; give one `detection` \
                         conditions or `auto: false`",
                        b.reference(),
                        a.reference()
                    ),
                ));
            }
        }
    }
}

/// Check `profiles.yaml`; `known` says whether a pack reference names a pack there is.
fn check_profiles(
    p: &Source<ProfilesDef>,
    known: &dyn Fn(&str) -> bool,
    diags: &mut Vec<Diagnostic>,
) {
    check_document_types(p, diags);
    check_detection(p, diags);
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, prof) in p.def.profiles.iter().enumerate() {
        let at = |key: &'static str| [Seg::Key("profiles"), Seg::Index(i), Seg::Key(key)];
        let mut dates = Vec::new();
        for (key, value) in [
            ("valid_from", &prof.valid_from),
            ("valid_until", &prof.valid_until),
        ] {
            if let Some(v) = value {
                match parse_date(v) {
                    Some(d) => dates.push(d),
                    None => diags.push(p.at_value(
                        &at(key),
                        format!(
                            "{key} `{v}` of profile {} is not a date YYYY-MM-DD",
                            prof.reference()
                        ),
                    )),
                }
            }
        }
        if let [from, until] = dates[..] {
            if until < from {
                diags.push(p.at_value(
                    &at("valid_until"),
                    format!(
                        "profile {} would be in force until {until}, before it starts ({from})",
                        prof.reference()
                    ),
                ));
            }
        }
        if prof.documents.is_empty() {
            diags.push(p.at(
                &at("documents"),
                format!(
                    "profile {} names no document types: say which document elements it validates",
                    prof.reference()
                ),
            ));
        }
        for (j, d) in prof.documents.iter().enumerate() {
            let path = [
                Seg::Key("profiles"),
                Seg::Index(i),
                Seg::Key("documents"),
                Seg::Index(j),
            ];
            match p.def.document_types.iter().find(|t| t.id == *d) {
                None => diags.push(p.at_value(
                    &path,
                    format!(
                        "profile {} names unknown document type `{d}` (not in `document_types`)",
                        prof.reference()
                    ),
                )),
                Some(t) if t.unsupported.is_some() => diags.push(p.at_value(
                    &path,
                    format!(
                        "profile {} names document type `{d}`, which is declared `unsupported`",
                        prof.reference()
                    ),
                )),
                Some(_) => {}
            }
            if prof.documents[..j].contains(d) {
                diags.push(p.at_value(
                    &path,
                    format!(
                        "profile {} names document type `{d}` twice",
                        prof.reference()
                    ),
                ));
            }
        }
        for (j, c) in prof.customization_ids.iter().enumerate() {
            let path = [
                Seg::Key("profiles"),
                Seg::Index(i),
                Seg::Key("customization_ids"),
                Seg::Index(j),
            ];
            if c.is_empty() || c.chars().any(char::is_whitespace) {
                diags.push(p.at_value(
                    &path,
                    format!("`{c}` is not a specification identifier (empty or with white space)"),
                ));
            }
            if prof.customization_ids[..j].contains(c) {
                diags.push(p.at_value(
                    &path,
                    format!("profile {} lists `{c}` twice", prof.reference()),
                ));
            }
        }
        if !is_pack_id(&prof.id) {
            diags.push(p.at(
                &at("id"),
                format!("profile id `{}` must consist of a-z, 0-9 and `-`", prof.id),
            ));
        }
        if !is_version(&prof.version) {
            diags.push(p.at(
                &at("version"),
                format!("profile version `{}` is not a valid version", prof.version),
            ));
        }
        if seen.insert(prof.reference(), i).is_some() {
            diags.push(p.at(
                &at("id"),
                format!("profile {} is declared twice", prof.reference()),
            ));
        }
        if prof.packs.is_empty() {
            diags.push(p.at(
                &at("packs"),
                format!("profile {} lists no packs", prof.reference()),
            ));
        }
        let mut ids_in_profile: HashMap<&str, ()> = HashMap::new();
        for (j, r) in prof.packs.iter().enumerate() {
            let path = [
                Seg::Key("profiles"),
                Seg::Index(i),
                Seg::Key("packs"),
                Seg::Index(j),
            ];
            match split_reference(r) {
                None => diags.push(p.at_value(
                    &path,
                    format!("`{r}` is not a pack reference (`pack-id@version`)"),
                )),
                Some((id, _)) => {
                    if !known(r) {
                        diags.push(p.at_value(
                            &path,
                            format!(
                                "profile {} names unknown pack `{r}` (no {}/{}/pack.yaml)",
                                prof.reference(),
                                id,
                                r.split_once('@').map(|x| x.1).unwrap_or_default()
                            ),
                        ));
                    }
                    if ids_in_profile.insert(id, ()).is_some() {
                        diags.push(p.at_value(
                            &path,
                            format!(
                                "profile {} names pack `{id}` more than once",
                                prof.reference()
                            ),
                        ));
                    }
                }
            }
        }
    }
}

/// Compare two version strings numerically where both parts are numbers
/// (`2026.10` > `2026.9`), lexically otherwise.
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let mut ia = a.split(['.', '-']);
    let mut ib = b.split(['.', '-']);
    loop {
        match (ia.next(), ib.next()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => {
                let ord = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(x), Ok(y)) => x.cmp(&y),
                    _ => x.cmp(y),
                };
                if ord != std::cmp::Ordering::Equal {
                    return ord;
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
