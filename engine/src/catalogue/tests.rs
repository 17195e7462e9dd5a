use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::*;

/// The shipped packs' catalogue, built once for the module's tests.
fn shipped() -> &'static (Arc<Catalog>, Catalogue) {
    static SHIPPED: OnceLock<(Arc<Catalog>, Catalogue)> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rulepacks");
        let catalog = Arc::new(Catalog::load(&dir).expect("the shipped packs load"));
        let catalogue = Catalogue::of(&catalog);
        (catalog, catalogue)
    })
}

fn catalogue() -> &'static Catalogue {
    &shipped().1
}

fn packs(e: &RuleEntry) -> Vec<&str> {
    e.versions.iter().map(|v| v.rule.pack.as_str()).collect()
}

#[test]
fn every_rule_of_every_pack_version_is_in_it_once_by_id() {
    let (catalog, c) = shipped();
    let carried: usize = c.entries().iter().map(|e| e.versions.len()).sum();
    let defined: usize = catalog.packs.iter().map(|p| p.rule_count()).sum();
    assert_eq!(carried, defined);
    assert!(c.entries().windows(2).all(|w| w[0].id < w[1].id));
    assert!(c.get("BR-01").is_some());
    assert!(c.get("NO-SUCH-RULE").is_none());
}

#[test]
fn a_rule_the_new_release_dropped_names_the_version_that_dropped_it() {
    let e = catalogue().get("GR-R-001-5").expect("GR-R-001-5");
    assert_eq!(packs(e), ["peppol-bis3@2026.5"]);
    assert_eq!(e.removed_in, ["peppol-bis3@2026.11"]);
}

#[test]
fn a_changed_rule_names_its_previous_version_and_what_changed() {
    let e = catalogue().get("PEPPOL-COMMON-R054").expect("R054");
    assert_eq!(packs(e), ["peppol-bis3@2026.5", "peppol-bis3@2026.11"]);
    let first = &e.versions[0];
    assert_eq!(first.previous, None);
    assert!(first.changes.is_empty());
    let second = &e.versions[1];
    assert_eq!(second.previous.as_deref(), Some("peppol-bis3@2026.5"));
    assert_eq!(
        second.changes,
        [FieldChange {
            field: "flag",
            from: "warning".into(),
            to: "fatal".into()
        }]
    );
    assert!(e.removed_in.is_empty());
    assert_eq!(e.latest().flag, Severity::Fatal);
}

#[test]
fn a_rule_carried_by_two_packs_lists_both_with_the_profiles_running_each() {
    let e = catalogue().get("SK-R-001").expect("SK-R-001");
    assert_eq!(packs(e), ["peppol-bis3@2026.11", "sk-national@2027.1"]);
    // Changes are only counted within one pack.
    assert!(e.versions.iter().all(|v| v.previous.is_none()));
    // The newest definition is the one of a pack's newest version: sk-national@2027.2
    // dropped it.
    assert_eq!(e.latest().pack, "peppol-bis3@2026.11");
    assert_eq!(e.removed_in, ["sk-national@2027.2"]);
    let profiles = |i: usize| -> Vec<&str> {
        e.versions[i]
            .profiles
            .iter()
            .map(|p| p.profile.as_str())
            .collect()
    };
    assert!(
        profiles(0).contains(&"peppol-bis3@2026.11"),
        "{:?}",
        profiles(0)
    );
    assert!(
        profiles(0).contains(&"peppol-bis3-sk@2027.2"),
        "{:?}",
        profiles(0)
    );
    assert_eq!(
        profiles(1),
        ["peppol-bis3-sk@2027.1", "peppol-bis3-sk-strict@2027.1"]
    );
    let flag = |profile: &str| {
        e.versions[0]
            .profiles
            .iter()
            .find(|p| p.profile == profile)
            .map(|p| p.flag)
    };
    assert_eq!(flag("peppol-bis3-sk@2027.2"), Some(Severity::Warning));
}

#[test]
fn schema_rules_are_fatal_and_owned() {
    let layer = catalogue()
        .entries()
        .iter()
        .filter(|e| e.latest().kind == RuleKind::Schema)
        .collect::<Vec<_>>();
    assert!(!layer.is_empty());
    for e in layer {
        assert_eq!(e.latest().flag, Severity::Fatal, "{}", e.id);
        assert_eq!(
            e.latest().owner.as_deref(),
            Some("sender-mapping"),
            "{}",
            e.id
        );
    }
}

#[test]
fn filters_hold_for_one_and_the_same_version() {
    let c = catalogue();
    let ids = |f: &Filter| -> Vec<String> {
        c.search(f, None, usize::MAX)
            .hits
            .iter()
            .map(|h| h.entry.id.clone())
            .collect()
    };
    // By pack version: the dropped rule only in the old one.
    let old = Filter {
        pack: Some("peppol-bis3@2026.5".into()),
        ..Filter::default()
    };
    let new = Filter {
        pack: Some("peppol-bis3@2026.11".into()),
        ..Filter::default()
    };
    assert!(ids(&old).contains(&"GR-R-001-5".to_string()));
    assert!(!ids(&new).contains(&"GR-R-001-5".to_string()));
    // R054 was a warning in 2026.5 and is fatal in 2026.11: the fatal 2026.5 rules do not
    // include it, the warnings do.
    let fatal_old = Filter {
        severity: Some(Severity::Fatal),
        ..old.clone()
    };
    let warning_old = Filter {
        severity: Some(Severity::Warning),
        ..old
    };
    assert!(!ids(&fatal_old).contains(&"PEPPOL-COMMON-R054".to_string()));
    assert!(ids(&warning_old).contains(&"PEPPOL-COMMON-R054".to_string()));
    // By business term, any case; every hit guards the term in the version shown.
    let term = Filter {
        business_term: Some("bt-24".into()),
        ..Filter::default()
    };
    let page = c.search(&term, None, usize::MAX);
    assert!(!page.hits.is_empty());
    assert!(page
        .hits
        .iter()
        .all(|h| h.version.rule.business_terms.iter().any(|t| t == "BT-24")));
    // By owner and by text (id or message, any case).
    let owner = Filter {
        owner: Some("payment-settings".into()),
        ..Filter::default()
    };
    let page = c.search(&owner, None, usize::MAX);
    assert!(!page.hits.is_empty());
    assert!(page
        .hits
        .iter()
        .all(|h| h.version.rule.owner.as_deref() == Some("payment-settings")));
    let text = Filter {
        text: Some("sk-r-00".into()),
        ..Filter::default()
    };
    assert_eq!(
        ids(&text),
        ["SK-R-001", "SK-R-002", "SK-R-003", "SK-R-004", "SK-R-005", "SK-R-006", "SK-R-007"]
    );
    let nothing = Filter {
        owner: Some("nobody".into()),
        ..Filter::default()
    };
    assert_eq!(c.search(&nothing, None, 10).total, 0);
}

#[test]
fn pages_walk_every_match_once_in_id_order() {
    let c = catalogue();
    let filter = Filter {
        pack: Some("peppol-bis3".into()),
        ..Filter::default()
    };
    let all = c.search(&filter, None, usize::MAX);
    assert!(all.next.is_none());
    let mut walked = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = c.search(&filter, after.as_deref(), 7);
        assert_eq!(page.total, all.total);
        assert!(page.hits.len() <= 7);
        walked.extend(page.hits.iter().map(|h| h.entry.id.clone()));
        match page.next {
            Some(n) => {
                assert_eq!(Some(&n), walked.last());
                after = Some(n);
            }
            None => break,
        }
    }
    let expected: Vec<String> = all.hits.iter().map(|h| h.entry.id.clone()).collect();
    assert_eq!(walked, expected);
    // A page that ends exactly at the last match has no next.
    let exact = c.search(&filter, None, all.total);
    assert!(exact.next.is_none());
    assert_eq!(exact.hits.len(), all.total);
}

#[test]
fn the_cache_builds_once_per_catalog() {
    let (catalog, _) = shipped();
    let cache = CatalogueCache::new();
    let a = cache.get(catalog);
    let b = cache.get(catalog);
    assert!(Arc::ptr_eq(&a, &b));
    let other = Arc::new(Catalog::empty());
    let c = cache.get(&other);
    assert!(c.is_empty());
    assert!(!Arc::ptr_eq(&a, &cache.get(catalog)));
}
