//! Tests of pack loading, and helpers to build rule-pack trees in temporary directories
//! (shared with the rules and registry tests).

use std::path::{Path, PathBuf};

use super::*;

/// Write `content` to `root/rel`, creating directories.
pub(crate) fn write(root: &Path, rel: &str, content: &str) -> PathBuf {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create dirs");
    }
    std::fs::write(&path, content).expect("write file");
    path
}

/// Namespaces of the small test vocabulary.
pub(crate) const T_NS: &str = "urn:test:doc";

/// A `pack.yaml` for pack `id@version` with the `t` namespace and the given pattern files.
pub(crate) fn pack_yaml(id: &str, version: &str, patterns: &[&str], extra: &str) -> String {
    let mut s = format!(
        "pack: {id}\nversion: {version}\ntitle: Test pack {id}\nnamespaces:\n  t: {T_NS}\n"
    );
    s.push_str("patterns:\n");
    for p in patterns {
        s.push_str(&format!("  - {p}\n"));
    }
    s.push_str(extra);
    s
}

/// The document type of the test vocabulary, `{urn:test:doc}Doc`, as `profiles.yaml`
/// declares it (id `t-doc`).
pub(crate) const T_DOCUMENT_TYPES: &str = "document_types:
  - id: t-doc
    namespace: urn:test:doc
    root: Doc
    title: Test document
";

/// A profiles.yaml with `(id, version, packs)` entries, each taking `t-doc` documents.
pub(crate) fn profiles_yaml(profiles: &[(&str, &str, &[&str])]) -> String {
    let mut s = format!("{T_DOCUMENT_TYPES}profiles:\n");
    for (id, version, packs) in profiles {
        s.push_str(&format!(
            "  - id: {id}\n    version: {version}\n    title: Profile {id}\n    packs: [{}]\n    documents: [t-doc]\n",
            packs.join(", ")
        ));
    }
    s
}

fn load(root: &Path) -> (SourceTree, Vec<Diagnostic>) {
    load_dir(root)
}

fn only(diags: &[Diagnostic]) -> &Diagnostic {
    assert_eq!(diags.len(), 1, "expected one diagnostic, got {diags:#?}");
    &diags[0]
}

const GOOD_PATTERN: &str = "pattern: main
title: Main rules
rules:
  - context: /t:Doc
    asserts:
      - id: T-01
        flag: fatal
        test: exists(t:Line)
        message: A document has lines.
        remediation: Add a line.
        business_terms: [BG-25]
        owner: line-items
        fixtures:
          pass: [ok.xml]
          fail: [bad.xml]
";

fn good_tree(root: &Path) {
    write(
        root,
        "p/1.0/pack.yaml",
        &pack_yaml("p", "1.0", &["patterns/main.yaml"], ""),
    );
    write(root, "p/1.0/patterns/main.yaml", GOOD_PATTERN);
    write(
        root,
        "p/1.0/fixtures/ok.xml",
        "<Doc xmlns='urn:test:doc'><Line/></Doc>",
    );
    write(
        root,
        "p/1.0/fixtures/bad.xml",
        "<Doc xmlns='urn:test:doc'/>",
    );
    write(
        root,
        "profiles.yaml",
        &profiles_yaml(&[("prof", "1", &["p@1.0"])]),
    );
}

#[test]
fn loads_a_good_tree() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    let (tree, diags) = load(dir.path());
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(tree.packs.len(), 1);
    let p = &tree.packs[0];
    assert_eq!(p.reference(), "p@1.0");
    assert_eq!(p.patterns.len(), 1);
    assert_eq!(p.patterns[0].def.rules[0].asserts[0].id, "T-01");
    assert_eq!(
        p.patterns[0].def.rules[0].asserts[0].owner.as_deref(),
        Some("line-items")
    );
    let profiles = tree.profiles.as_ref().unwrap();
    assert_eq!(profiles.def.profiles[0].reference(), "prof@1");
}

#[test]
fn versions_that_look_like_numbers_stay_strings() {
    let def: PackDef = crate::yaml::from_str(
        "pack: a\nversion: 2026.10\ntitle: x\nnamespaces: {z: 'urn:z', a: 'urn:a', m: 'urn:m'}\n",
    )
    .unwrap();
    assert_eq!(def.version, "2026.10");
    let order: Vec<&str> = def.namespaces.iter().map(|(p, _)| p).collect();
    assert_eq!(order, ["z", "a", "m"]);
}

#[test]
fn yaml_syntax_error_has_file_line_column() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    let file = write(
        dir.path(),
        "p/1.0/patterns/main.yaml",
        "pattern: main\nrules:\n  - context: /t:Doc\n    asserts: [\n",
    );
    let (_, diags) = load(dir.path());
    let d = only(&diags);
    assert_eq!(d.file, file);
    assert!(d.line >= 4, "{d}");
    assert!(d.column >= 1);
    let shown = d.to_string();
    assert!(
        shown.starts_with(&format!("{}:{}:{}: ", file.display(), d.line, d.column)),
        "{shown}"
    );
}

#[test]
fn unknown_field_is_located() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    let text = GOOD_PATTERN.replace("        owner: line-items\n", "        ownr: line-items\n");
    let file = write(dir.path(), "p/1.0/patterns/main.yaml", &text);
    let (_, diags) = load(dir.path());
    let d = only(&diags);
    assert_eq!(d.file, file);
    assert_eq!(d.line, 12, "{d}");
    assert!(d.message.contains("unknown field `ownr`"), "{d}");
    assert!(!d.message.contains(" at line "), "{d}");
}

#[test]
fn schema_errors_name_the_path_and_point_at_the_node() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    let file = dir.path().join("p/1.0/patterns/main.yaml");
    let cases = [
        // A value of the wrong type: at the value.
        (
            GOOD_PATTERN.replace("business_terms: [BG-25]", "business_terms: {a: b}"),
            (11, 25),
            "rules[0].asserts[0].business_terms: ",
        ),
        (
            GOOD_PATTERN.replace("flag: fatal", "flag: [fatal]"),
            (7, 15),
            "rules[0].asserts[0].flag: ",
        ),
        // A missing field: at the mapping that lacks it.
        (
            GOOD_PATTERN.replace("        message: A document has lines.\n", ""),
            (6, 9),
            "rules[0].asserts[0]: missing field `message`",
        ),
        // A repeated key: at the repetition.
        (
            GOOD_PATTERN.replace(
                "        owner: line-items\n",
                "        owner: line-items\n        owner: amounts\n",
            ),
            (13, 9),
            "rules[0].asserts[0]: duplicate mapping key `owner`",
        ),
        // Two documents: at the second.
        (
            format!("{GOOD_PATTERN}---\npattern: x\n"),
            (17, 1),
            "document",
        ),
    ];
    for (text, (line, column), message) in cases {
        write(dir.path(), "p/1.0/patterns/main.yaml", &text);
        let (_, diags) = load(dir.path());
        let d = only(&diags);
        assert_eq!(d.file, file);
        assert_eq!((d.line, d.column), (line, column), "{d}");
        assert!(d.message.contains(message), "{d}");
        assert!(!d.message.contains(" at line "), "{d}");
    }
}

#[test]
fn blank_lists_and_mappings_read_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    let text = GOOD_PATTERN
        .replace("business_terms: [BG-25]", "business_terms:")
        .replace(
            "        fixtures:\n          pass: [ok.xml]\n          fail: [bad.xml]\n",
            "        fixtures:\n",
        )
        .replace("title: Main rules\n", "title: Main rules\nlets: ~\n");
    write(dir.path(), "p/1.0/patterns/main.yaml", &text);
    let (tree, diags) = load(dir.path());
    assert!(diags.is_empty(), "{diags:#?}");
    let check = &tree.packs[0].patterns[0].def.rules[0].asserts[0];
    assert!(check.business_terms.is_empty());
    assert_eq!(check.fixtures, FixturesDef::default());
    assert!(tree.packs[0].patterns[0].def.lets.is_empty());
    // A blank `packs:` is an empty list, which the loader refuses by name.
    let diags = load_with_profiles(&format!(
        "{T_DOCUMENT_TYPES}profiles:\n  - id: prof\n    version: '1'\n    packs:\n    documents: [t-doc]\n"
    ));
    assert!(!diags.is_empty());
    assert!(
        diags.iter().all(|d| !d.message.contains("expected")),
        "{diags:#?}"
    );
}

#[test]
fn bad_flag_is_located() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    let text = GOOD_PATTERN.replace("flag: fatal", "flag: fatl");
    write(dir.path(), "p/1.0/patterns/main.yaml", &text);
    let (_, diags) = load(dir.path());
    let d = only(&diags);
    assert_eq!(d.line, 7, "{d}");
    assert!(d.message.contains("fatl"), "{d}");
}

#[test]
fn duplicate_rule_id_points_at_the_second() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    let text = format!(
        "{GOOD_PATTERN}  - context: t:Line
    reports:
      - id: T-01
        flag: warning
        test: true()
        message: again
"
    );
    let file = write(dir.path(), "p/1.0/patterns/main.yaml", &text);
    let (_, diags) = load(dir.path());
    let d = only(&diags);
    assert_eq!(d.file, file);
    assert_eq!((d.line, d.column), (18, 9), "{d}");
    assert!(d.message.contains("duplicate rule id `T-01`"), "{d}");
    assert!(d.message.contains(":6"), "names the first definition: {d}");
}

#[test]
fn missing_fixture_points_at_its_name() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    std::fs::remove_file(dir.path().join("p/1.0/fixtures/bad.xml")).unwrap();
    let (_, diags) = load(dir.path());
    let d = only(&diags);
    assert_eq!((d.line, d.column), (15, 18), "{d}");
    assert!(d.message.contains("bad.xml"), "{d}");
}

#[test]
fn missing_pattern_file_points_at_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    let file = write(
        dir.path(),
        "p/1.0/pack.yaml",
        &pack_yaml(
            "p",
            "1.0",
            &["patterns/main.yaml", "patterns/nope.yaml"],
            "",
        ),
    );
    let (_, diags) = load(dir.path());
    let d = only(&diags);
    assert_eq!(d.file, file);
    assert_eq!((d.line, d.column), (8, 5), "{d}");
}

#[test]
fn pack_identity_must_match_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    write(
        dir.path(),
        "p/1.0/pack.yaml",
        &pack_yaml("p", "1.1", &["patterns/main.yaml"], ""),
    );
    let (_, diags) = load(dir.path());
    // The version differs from the directory; profiles.yaml then names an unknown pack.
    assert!(diags
        .iter()
        .any(|d| d.line == 2 && d.message.contains("directory")));
    assert!(diags
        .iter()
        .any(|d| d.file.ends_with("profiles.yaml") && d.message.contains("unknown pack `p@1.0`")));
}

#[test]
fn bad_overrides_are_located() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    let extra = "overrides:
  - rule: X-1
    action: reflag
  - rule: X-2
    action: disable
    flag: warning
  - rule: X-3
    action: replace
  - rule: T-01
    action: disable
";
    write(
        dir.path(),
        "p/1.0/pack.yaml",
        &pack_yaml("p", "1.0", &["patterns/main.yaml"], extra),
    );
    let (_, diags) = load(dir.path());
    assert_eq!(diags.len(), 4, "{diags:#?}");
    assert_eq!(diags[0].line, 10, "reflag without flag at `action`");
    assert_eq!(diags[1].line, 13, "flag on disable at `flag`");
    assert_eq!(diags[2].line, 14, "replace of an id the pack lacks");
    assert_eq!(diags[3].line, 16, "disable of the pack's own rule");
    let bad_action = pack_yaml(
        "p",
        "1.0",
        &["patterns/main.yaml"],
        "overrides:\n  - rule: X\n    action: remove\n",
    );
    write(dir.path(), "p/1.0/pack.yaml", &bad_action);
    let (_, diags) = load(dir.path());
    assert_eq!(only(&diags).line, 10);
}

#[test]
fn unknown_profile_pack_is_located() {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    write(
        dir.path(),
        "profiles.yaml",
        &profiles_yaml(&[("prof", "1", &["p@1.0", "q@2"])]),
    );
    let (_, diags) = load(dir.path());
    let d = only(&diags);
    assert!(d.file.ends_with("profiles.yaml"));
    assert_eq!((d.line, d.column), (10, 20), "{d}");
    assert!(d.message.contains("q@2"));
}

/// The good tree with `profiles` as its profiles.yaml; the diagnostics of loading it.
fn load_with_profiles(profiles: &str) -> Vec<Diagnostic> {
    let dir = tempfile::tempdir().unwrap();
    good_tree(dir.path());
    write(dir.path(), "profiles.yaml", profiles);
    load(dir.path()).1
}

#[test]
fn a_profile_must_name_its_document_types() {
    let diags = load_with_profiles(&format!(
        "{T_DOCUMENT_TYPES}profiles:\n  - id: prof\n    version: '1'\n    packs: [p@1.0]\n"
    ));
    let d = only(&diags);
    assert!(d.message.contains("missing field `documents`"), "{d}");
    let diags = load_with_profiles(&format!(
        "{T_DOCUMENT_TYPES}profiles:\n  - id: prof\n    version: '1'\n    packs: [p@1.0]\n    documents: []\n"
    ));
    assert!(
        only(&diags).message.contains("names no document types"),
        "{diags:?}"
    );
}

#[test]
fn document_types_are_checked_where_they_are_named() {
    let types = format!(
        "{T_DOCUMENT_TYPES}  - id: cii
    namespace: urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100
    root: CrossIndustryInvoice
    title: CII
    unsupported: not yet
  - id: t-doc-again
    namespace: urn:test:doc
    root: Doc
    title: Same element
  - id: Bad_Id
    namespace: urn:x
    root: 'x:y'
    title: Bad
"
    );
    let diags = load_with_profiles(&format!(
        "{types}profiles:
  - id: prof
    version: '1'
    packs: [p@1.0]
    documents: [t-doc, nope, cii, t-doc]
    customization_ids: ['urn:a', 'urn:a', 'with space']
"
    ));
    let messages: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
    let has = |line: usize, text: &str| {
        assert!(
            diags
                .iter()
                .any(|d| d.line == line && d.message.contains(text)),
            "no `{text}` at line {line}: {messages:#?}"
        )
    };
    has(13, "same document element {urn:test:doc}Doc as `t-doc`");
    has(15, "document type id `Bad_Id`");
    has(17, "`x:y` is not an element local name");
    has(23, "unknown document type `nope`");
    has(23, "`cii`, which is declared `unsupported`");
    has(23, "names document type `t-doc` twice");
    has(24, "lists `urn:a` twice");
    has(24, "`with space` is not a specification identifier");
    assert_eq!(diags.len(), 8, "{messages:#?}");
}

#[test]
fn detection_must_tell_profiles_apart() {
    let profile = |id: &str, detection: &str| {
        format!(
            "  - id: {id}\n    version: '1'\n    packs: [p@1.0]\n    documents: [t-doc]\n    customization_ids: ['urn:a']\n{detection}"
        )
    };
    // Same identifier, same (no) conditions: ambiguous.
    let diags = load_with_profiles(&format!(
        "{T_DOCUMENT_TYPES}profiles:\n{}{}",
        profile("one", ""),
        profile("two", "")
    ));
    let d = only(&diags);
    assert!(
        d.message
            .contains("profiles one@1 and two@1 both claim specification identifier `urn:a`"),
        "{d}"
    );
    // Conditions or `auto: false` tell them apart.
    let diags = load_with_profiles(&format!(
        "{T_DOCUMENT_TYPES}profiles:\n{}{}{}",
        profile("one", ""),
        profile("two", "    detection: {seller_country: SK}\n"),
        profile("three", "    detection: {auto: false}\n")
    ));
    assert!(diags.is_empty(), "{diags:#?}");
    let diags = load_with_profiles(&format!(
        "{T_DOCUMENT_TYPES}profiles:\n{}",
        profile("one", "    detection: {auto: false, buyer_country: sk}\n")
    ));
    let messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(diags.len(), 2, "{messages:#?}");
    assert!(
        messages[0].contains("`sk` is not an ISO 3166-1 alpha-2"),
        "{messages:?}"
    );
    assert!(
        messages[1].contains("`buyer_country` has no effect"),
        "{messages:?}"
    );
}

#[test]
fn the_engines_own_rule_ids_are_reserved() {
    for id in ["engine-error", "INVEX-DOCTYPE"] {
        let dir = tempfile::tempdir().unwrap();
        good_tree(dir.path());
        write(
            dir.path(),
            "p/1.0/patterns/main.yaml",
            &GOOD_PATTERN.replace("id: T-01", &format!("id: {id}")),
        );
        let (_, diags) = load(dir.path());
        let d = only(&diags);
        assert_eq!(d.message, format!("`{id}` is not a valid rule id"), "{d}");
    }
}

#[test]
fn version_ordering() {
    use std::cmp::Ordering::*;
    assert_eq!(compare_versions("2026.10", "2026.9"), Greater);
    assert_eq!(compare_versions("1.3.16", "1.3.16"), Equal);
    assert_eq!(compare_versions("1.3", "1.3.1"), Less);
}
