//! Snapshot of the rule catalogue, one snapshot per pack: any change to a rule's id, flag,
//! pattern, context or test shows up in review (`cargo insta review`, or
//! `INSTA_UPDATE=always cargo test -p invex-tests --test integration catalogue::` to accept).

use invex_tests::rulepacks;
use invex_tools::snapshot::catalogue;

#[test]
fn every_pack_matches_its_catalogue_snapshot() {
    let cat = catalogue(&rulepacks()).expect("shipped rule packs load");
    assert!(!cat.packs.is_empty());
    for pack in &cat.packs {
        let yaml = invex_engine::yaml::to_string(pack).expect("catalogue serialises");
        insta::assert_snapshot!(format!("{}@{}", pack.pack, pack.version), yaml);
    }
}

#[test]
fn profiles_match_their_snapshot() {
    let cat = catalogue(&rulepacks()).expect("shipped rule packs load");
    let yaml = invex_engine::yaml::to_string(&cat.profiles).expect("profiles serialise");
    insta::assert_snapshot!("profiles", yaml);
}
