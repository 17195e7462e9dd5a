use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::pack::tests::{pack_yaml, profiles_yaml, write};
use crate::report::{to_svrl, Verdict};

/// Build `root/<id>/<version>` with one pattern file per `(name, text)`.
fn pack(root: &Path, id: &str, version: &str, patterns: &[(&str, &str)], extra: &str) {
    let files: Vec<String> = patterns
        .iter()
        .map(|(name, _)| format!("patterns/{name}.yaml"))
        .collect();
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    write(
        root,
        &format!("{id}/{version}/pack.yaml"),
        &pack_yaml(id, version, &refs, extra),
    );
    for (name, text) in patterns {
        write(root, &format!("{id}/{version}/patterns/{name}.yaml"), text);
    }
}

fn compiled(root: &Path) -> Compilation {
    let c = compile_dir(root);
    assert!(c.is_ok(), "{:#?}", c.diagnostics);
    c
}

fn single(root: &Path, reference: &str) -> RuleSet {
    let c = compiled(root);
    RuleSet::single(c.pack(reference).expect("pack").clone())
}

fn ids(r: &Report) -> Vec<&str> {
    r.findings.iter().map(|f| f.rule_id.as_str()).collect()
}

fn count(r: &Report, id: &str) -> usize {
    r.findings.iter().filter(|f| f.rule_id == id).count()
}

const DOC: &str = r#"<Doc xmlns="urn:test:doc">
  <Line amount="1"/>
  <Sub>
    <Line amount="2"/>
  </Sub>
  <Line amount="3"/>
</Doc>"#;

#[test]
fn first_matching_rule_claims_a_node_within_a_pattern_only() {
    let dir = tempfile::tempdir().unwrap();
    let shadowing = "pattern: shadow
rules:
  - context: t:Sub/t:Line
    reports:
      - id: INNER
        flag: warning
        test: true()
        message: inner line
  - context: t:Line
    reports:
      - id: ANY
        flag: warning
        test: true()
        message: a line not inside Sub
";
    let independent = "pattern: other
rules:
  - context: t:Line
    reports:
      - id: OTHER
        flag: information
        test: true()
        message: every line
";
    pack(
        dir.path(),
        "p",
        "1",
        &[("shadow", shadowing), ("other", independent)],
        "",
    );
    let rs = single(dir.path(), "p@1");
    let r = rs.validate_bytes(DOC.as_bytes()).unwrap();
    assert_eq!(count(&r, "INNER"), 1, "{:#?}", r.findings);
    assert_eq!(count(&r, "ANY"), 2, "{:#?}", r.findings);
    assert_eq!(count(&r, "OTHER"), 3, "{:#?}", r.findings);
    let any_paths: Vec<&str> = r
        .findings
        .iter()
        .filter(|f| f.rule_id == "ANY")
        .map(|f| f.location.path.as_str())
        .collect();
    assert_eq!(any_paths, ["/t:Doc/t:Line", "/t:Doc/t:Line[2]"]);
    assert_eq!(r.verdict, Verdict::Valid);
    assert_eq!(r.counts.warning, 3);
    assert_eq!(r.counts.information, 3);
}

#[test]
fn asserts_fire_when_false_reports_when_true() {
    let dir = tempfile::tempdir().unwrap();
    let p = "pattern: main
rules:
  - context: /t:Doc
    asserts:
      - id: A-TRUE
        flag: fatal
        test: count(.//t:Line) = 3
        message: never
      - id: A-FALSE
        flag: fatal
        test: count(.//t:Line) = 2
        message: The document has {count} lines.
        remediation: Remove a line.
        business_terms: [BG-25, BT-126]
        owner: line-items
    reports:
      - id: R-TRUE
        flag: warning
        test: exists(t:Sub)
        message: There is a Sub.
      - id: R-FALSE
        flag: warning
        test: exists(t:Nothing)
        message: never
";
    pack(dir.path(), "p", "1", &[("main", p)], "");
    let rs = single(dir.path(), "p@1");
    let r = rs.validate_bytes(DOC.as_bytes()).unwrap();
    assert_eq!(ids(&r), ["A-FALSE", "R-TRUE"]);
    let f = &r.findings[0];
    assert_eq!(f.severity, Severity::Fatal);
    assert_eq!(f.location.path, "/t:Doc");
    assert_eq!((f.location.line, f.location.column), (1, 1));
    assert_eq!(f.remediation, "Remove a line.");
    assert_eq!(f.business_terms, ["BG-25", "BT-126"]);
    assert_eq!(f.owner.as_deref(), Some("line-items"));
    assert_eq!(f.pack, "p@1");
    assert_eq!(r.verdict, Verdict::Invalid);
    assert_eq!(r.profile, "p@1");
    assert_eq!(r.rules_version, ["p@1"]);
}

#[test]
fn lets_global_pattern_and_rule_level() {
    let dir = tempfile::tempdir().unwrap();
    let p = "pattern: main
lets:
  - name: lines
    value: count(//t:Line)
rules:
  - context: t:Line
    lets:
      - name: amount
        value: xs:decimal(@amount)
      - name: twice
        value: $amount * 2
    asserts:
      - id: L-1
        flag: fatal
        test: $twice < $lines * 2 or $threshold = 0
        message: amount too large
";
    pack(
        dir.path(),
        "p",
        "1",
        &[("main", p)],
        "lets:\n  - name: threshold\n    value: 1\n",
    );
    let rs = single(dir.path(), "p@1");
    let r = rs.validate_bytes(DOC.as_bytes()).unwrap();
    // twice = 2, 4, 6 against lines * 2 = 6: only the third line fires.
    assert_eq!(ids(&r), ["L-1"]);
    assert_eq!(r.findings[0].location.path, "/t:Doc/t:Line[2]");
    assert_eq!(r.findings[0].location.line, 6);
}

#[test]
fn dynamic_error_becomes_engine_error_and_validation_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let p = "pattern: main
rules:
  - context: t:Line
    asserts:
      - id: E-1
        flag: fatal
        test: xs:decimal(@amount) > 0
        message: amount must be positive
      - id: E-2
        flag: warning
        test: false()
        message: always
  - context: /t:Doc
    reports:
      - id: E-3
        flag: information
        test: true()
        message: document seen
  - context: t:Sub
    lets:
      - name: bad
        value: xs:integer('x')
    asserts:
      - id: E-4
        flag: warning
        test: $bad = 1
        message: never evaluated
";
    pack(dir.path(), "p", "1", &[("main", p)], "");
    let rs = single(dir.path(), "p@1");
    let doc = r#"<Doc xmlns="urn:test:doc"><Line amount="1"/><Line amount="abc"/><Line amount="2"/><Sub/></Doc>"#;
    let r = rs.validate_bytes(doc.as_bytes()).unwrap();
    let errors: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.rule_id == ENGINE_ERROR)
        .collect();
    assert_eq!(errors.len(), 2, "{:#?}", r.findings);
    let e1 = errors[0];
    assert_eq!(e1.severity, Severity::Fatal);
    assert_eq!(e1.about_rule.as_deref(), Some("E-1"));
    assert_eq!(e1.location.path, "/t:Doc/t:Line[2]");
    assert!(e1.message.contains("FORG0001"), "{}", e1.message);
    assert!(e1.message.contains("E-1"), "{}", e1.message);
    assert_eq!(e1.pack, "p@1");
    let e4 = errors[1];
    assert_eq!(e4.about_rule.as_deref(), Some("E-4"));
    assert!(e4.message.contains("let $bad"), "{}", e4.message);
    // The other rules still ran on every node.
    assert_eq!(count(&r, "E-2"), 3);
    assert_eq!(count(&r, "E-3"), 1);
    assert_eq!(count(&r, "E-1"), 0);
    assert_eq!(r.verdict, Verdict::Invalid);
}

#[test]
fn global_let_error_surfaces_in_the_rules_that_use_it() {
    // Global lets are evaluated on first use (XSLT semantics): the rule using a failing
    // variable gets an engine-error, a rule that does not use it runs normally, and a
    // failing variable nobody reads reports nothing.
    let dir = tempfile::tempdir().unwrap();
    let p = "pattern: main
rules:
  - context: /t:Doc
    asserts:
      - id: G-1
        flag: warning
        test: empty($broken)
        message: uses the failing variable
      - id: G-2
        flag: warning
        test: false()
        message: independent of it
";
    pack(
        dir.path(),
        "p",
        "1",
        &[("main", p)],
        "lets:\n  - name: broken\n    value: xs:decimal('1,5')\n  - name: unused\n    value: xs:decimal('x')\n",
    );
    let rs = single(dir.path(), "p@1");
    let r = rs.validate_bytes(DOC.as_bytes()).unwrap();
    assert_eq!(ids(&r), [ENGINE_ERROR, "G-2"]);
    assert_eq!(r.findings[0].about_rule.as_deref(), Some("G-1"));
    assert!(
        r.findings[0].message.contains("FORG0001"),
        "{}",
        r.findings[0].message
    );
}

#[test]
fn an_error_in_a_context_predicate_means_no_match_for_that_node() {
    // XSLT pattern semantics: a dynamic error while matching a node makes the pattern not
    // match that node; other nodes still match, and later rules of the pattern see it.
    let dir = tempfile::tempdir().unwrap();
    let p = "pattern: main
rules:
  - context: t:Line[xs:decimal(@amount) > 1]
    asserts:
      - id: C-1
        flag: fatal
        test: false()
        message: big line
  - context: t:Line
    asserts:
      - id: C-2
        flag: warning
        test: false()
        message: other line
";
    pack(dir.path(), "p", "1", &[("main", p)], "");
    let rs = single(dir.path(), "p@1");
    let doc = "<Doc xmlns='urn:test:doc'><Line amount='x'/><Line amount='3'/></Doc>";
    let r = rs.validate_bytes(doc.as_bytes()).unwrap();
    let mut got = ids(&r);
    got.sort();
    assert_eq!(got, ["C-1", "C-2"]);
}

#[test]
fn attribute_contexts_are_located_with_their_element_index() {
    let dir = tempfile::tempdir().unwrap();
    let p = "pattern: main
rules:
  - context: t:Line/@amount
    asserts:
      - id: AT-1
        flag: fatal
        test: . != '3'
        message: not three
";
    pack(dir.path(), "p", "1", &[("main", p)], "");
    let rs = single(dir.path(), "p@1");
    let r = rs.validate_bytes(DOC.as_bytes()).unwrap();
    assert_eq!(ids(&r), ["AT-1"]);
    assert_eq!(r.findings[0].location.path, "/t:Doc/t:Line[2]/@amount");
    assert_eq!(r.findings[0].location.line, 6);
}

const LOWER: &str = "pattern: base
rules:
  - context: /t:Doc
    asserts:
      - id: A
        flag: fatal
        test: false()
        message: A from the lower pack
      - id: B
        flag: fatal
        test: false()
        message: B from the lower pack
      - id: C
        flag: warning
        test: false()
        message: C from the lower pack
      - id: D
        flag: fatal
        test: false()
        message: D from the lower pack
";

const UPPER: &str = "pattern: national
rules:
  - context: /t:Doc
    asserts:
      - id: A
        flag: warning
        test: false()
        message: A as the upper pack has it
";

#[test]
fn overrides_replace_reflag_disable() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path(), "low", "1", &[("base", LOWER)], "");
    let overrides = "overrides:
  - rule: A
    action: replace
  - rule: B
    action: reflag
    flag: warning
  - rule: C
    action: disable
";
    pack(dir.path(), "high", "2", &[("national", UPPER)], overrides);
    write(
        dir.path(),
        "profiles.yaml",
        &profiles_yaml(&[
            ("stack", "1", &["low@1", "high@2"]),
            ("base", "1", &["low@1"]),
        ]),
    );
    let c = compiled(dir.path());
    let stack = c
        .profiles
        .iter()
        .find(|p| p.reference() == "stack@1")
        .unwrap();
    let r = stack.rules.validate_bytes(DOC.as_bytes()).unwrap();
    let got: Vec<(&str, Severity, &str)> = r
        .findings
        .iter()
        .map(|f| (f.rule_id.as_str(), f.severity, f.pack.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("B", Severity::Warning, "low@1"),
            ("D", Severity::Fatal, "low@1"),
            ("A", Severity::Warning, "high@2"),
        ]
    );
    assert_eq!(r.rules_version, ["low@1", "high@2"]);
    assert_eq!(r.profile, "stack@1");
    assert_eq!(stack.rules.effective_flag("low@1", "C"), None);
    assert_eq!(
        stack.rules.effective_flag("low@1", "B"),
        Some(Severity::Warning)
    );
    // The lower pack alone is untouched.
    let base = c
        .profiles
        .iter()
        .find(|p| p.reference() == "base@1")
        .unwrap();
    let r = base.rules.validate_bytes(DOC.as_bytes()).unwrap();
    assert_eq!(ids(&r), ["A", "B", "C", "D"]);
}

#[test]
fn a_disabled_rule_still_shadows_later_rules_of_its_pattern() {
    let dir = tempfile::tempdir().unwrap();
    let lower = "pattern: lines
rules:
  - context: t:Sub/t:Line
    asserts:
      - id: X
        flag: fatal
        test: false()
        message: inner line
  - context: t:Line
    asserts:
      - id: Y
        flag: fatal
        test: false()
        message: any other line
";
    pack(dir.path(), "low", "1", &[("lines", lower)], "");
    pack(
        dir.path(),
        "high",
        "1",
        &[("national", UPPER)],
        "overrides:\n  - rule: X\n    action: disable\n",
    );
    write(
        dir.path(),
        "profiles.yaml",
        &profiles_yaml(&[("stack", "1", &["low@1", "high@1"])]),
    );
    let c = compiled(dir.path());
    let r = c.profiles[0].rules.validate_bytes(DOC.as_bytes()).unwrap();
    assert_eq!(count(&r, "X"), 0);
    assert_eq!(count(&r, "Y"), 2, "{:#?}", r.findings);
}

#[test]
fn unknown_override_target_is_located() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path(), "low", "1", &[("base", LOWER)], "");
    let overrides =
        "overrides:\n  - rule: A\n    action: replace\n  - rule: ZZ\n    action: disable\n";
    pack(dir.path(), "high", "2", &[("national", UPPER)], overrides);
    write(
        dir.path(),
        "profiles.yaml",
        &profiles_yaml(&[("stack", "1", &["low@1", "high@2"])]),
    );
    let c = compile_dir(dir.path());
    assert_eq!(c.diagnostics.len(), 1, "{:#?}", c.diagnostics);
    let d = &c.diagnostics[0];
    assert!(d.file.ends_with("high/2/pack.yaml"), "{d}");
    assert_eq!((d.line, d.column), (11, 5), "{d}");
    assert!(d.message.contains("`ZZ`"), "{d}");
    assert!(c.into_result().is_err());
}

#[test]
fn xpath_errors_are_located_at_their_key() {
    let dir = tempfile::tempdir().unwrap();
    let p = "pattern: main
rules:
  - context: /t:Doc
    lets:
      - name: x
        value: count(
    asserts:
      - id: X-1
        flag: fatal
        test: nope:thing = 1
        message: unknown prefix
  - context: /t:Doc[
    asserts:
      - id: X-2
        flag: fatal
        test: true()
        message: bad context
";
    pack(dir.path(), "p", "1", &[("main", p)], "");
    let c = compile_dir(dir.path());
    let got: Vec<(usize, usize)> = c.diagnostics.iter().map(|d| (d.line, d.column)).collect();
    assert_eq!(got, [(6, 9), (10, 9), (12, 5)], "{:#?}", c.diagnostics);
    assert!(c.diagnostics.iter().all(|d| d.file.ends_with("main.yaml")));
    assert!(c.diagnostics[1].message.contains("nope:thing"));
    assert!(c.packs.is_empty());
}

#[test]
fn svrl_of_a_report_is_well_formed_and_complete() {
    let dir = tempfile::tempdir().unwrap();
    let p = "pattern: main
title: Main & <rules>
rules:
  - context: t:Line
    asserts:
      - id: S-1
        flag: fatal
        test: \"@amount != '3' and 1 < 2\"
        message: Line amount is 3 & that is \"bad\" <here>.
    reports:
      - id: S-2
        flag: information
        test: true()
        message: line seen
";
    pack(dir.path(), "p", "1", &[("main", p)], "");
    let rs = single(dir.path(), "p@1");
    let r = rs.validate_bytes(DOC.as_bytes()).unwrap();
    assert_eq!(count(&r, "S-1"), 1);
    assert_eq!(count(&r, "S-2"), 3);
    for svrl in [to_svrl(&r, Some(&rs)), to_svrl(&r, None)] {
        let mut reader = quick_xml::Reader::from_str(&svrl);
        let (mut failed, mut successful, mut fired, mut patterns) = (0, 0, 0, 0);
        let mut texts = Vec::new();
        loop {
            use quick_xml::events::Event;
            match reader.read_event().expect("well-formed") {
                Event::Eof => break,
                Event::Start(e) | Event::Empty(e) => match e.name().as_ref() {
                    b"svrl:failed-assert" => failed += 1,
                    b"svrl:successful-report" => successful += 1,
                    b"svrl:fired-rule" => fired += 1,
                    b"svrl:active-pattern" => patterns += 1,
                    _ => {}
                },
                Event::Text(t) => texts.push(t.unescape().unwrap().into_owned()),
                _ => {}
            }
        }
        assert!(patterns >= 1);
        assert!(fired >= 1);
        assert!(texts
            .iter()
            .any(|t| t == "Line amount is 3 & that is \"bad\" <here>."));
        if svrl.contains("active-pattern id=\"main\"") {
            assert_eq!((failed, successful), (1, 3), "{svrl}");
            assert!(
                svrl.contains("test=\"@amount != '3' and 1 &lt; 2\""),
                "{svrl}"
            );
            assert!(svrl.contains("name=\"Main &amp; &lt;rules&gt;\""), "{svrl}");
        } else {
            assert_eq!(failed + successful, 4, "{svrl}");
        }
        assert!(svrl.contains("location=\"/t:Doc/t:Line[2]\""), "{svrl}");
    }
}

#[test]
fn parse_errors_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path(), "p", "1", &[("base", LOWER)], "");
    let rs = single(dir.path(), "p@1");
    assert!(matches!(
        rs.validate_bytes(b"<Doc><unclosed></Doc>"),
        Err(ValidateError::Parse(_))
    ));
    assert!(rs.validate_bytes(b"").is_err());
}

#[test]
fn rule_sets_are_shared_between_threads() {
    let dir = tempfile::tempdir().unwrap();
    pack(dir.path(), "p", "1", &[("base", LOWER)], "");
    let rs = Arc::new(single(dir.path(), "p@1"));
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let rs = rs.clone();
            std::thread::spawn(move || {
                (0..20)
                    .map(|_| rs.validate_bytes(DOC.as_bytes()).unwrap().findings.len())
                    .sum::<usize>()
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 80);
    }
}

/// Contexts selected region by region (named descendants, then child steps) give the same
/// findings as one selection over the whole document, also where an element is nested in
/// another of its name (selections out of document order across regions) and where two
/// alternatives of a context reach the same node (a node selected twice).
#[test]
fn contexts_selected_by_region_match_the_whole_selection() {
    let dir = tempfile::tempdir().unwrap();
    let p = "pattern: nested
rules:
  - context: t:Box/t:Item | t:Shelf/t:Box/t:Item
    reports:
      - id: ITEM
        flag: warning
        test: true()
        message: an item in a box
  - context: /self::node()[exists(//t:Box)] //t:Box[t:Item/@n = '2']/t:Label
    reports:
      - id: LABEL
        flag: information
        test: true()
        message: label of a box holding item 2
";
    pack(dir.path(), "p", "1", &[("nested", p)], "");
    let rs = single(dir.path(), "p@1");
    let doc = r#"<Doc xmlns="urn:test:doc">
  <Shelf>
    <Box>
      <Box>
        <Item n="1"/>
        <Box><Item n="2"/><Label/></Box>
        <Label/>
      </Box>
      <Item n="2"/>
      <Label/>
    </Box>
  </Shelf>
  <Box><Item n="3"/></Box>
</Doc>"#;
    let d = Document::parse(doc.as_bytes()).unwrap();
    let whole = rs.validate(&d);
    let located = |r: &Report| -> Vec<(String, String)> {
        r.findings
            .iter()
            .map(|f| (f.rule_id.clone(), f.location.path.clone()))
            .collect()
    };
    assert_eq!(count(&whole, "ITEM"), 4, "{:#?}", whole.findings);
    assert_eq!(count(&whole, "LABEL"), 2, "{:#?}", whole.findings);
    for size in 1..=d.len() {
        let r = rs.validate_in_regions(&d, size);
        assert_eq!(located(&r), located(&whole), "region size {size}");
    }
}

/// A document that breaks a rule a million times gets a report of bounded size: the first
/// findings are listed, the rest counted, and they all decide the verdict.
#[test]
fn findings_beyond_the_listing_limit_are_counted_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    let p = "pattern: main
rules:
  - context: t:Line
    asserts:
      - id: NO-LINES
        flag: warning
        test: false()
        message: A line.
  - context: t:Sub
    asserts:
      - id: NO-SUB
        flag: fatal
        test: false()
        message: A sub.
";
    pack(dir.path(), "p", "1", &[("main", p)], "");
    let rs = single(dir.path(), "p@1");
    let lines: String = (0..500).map(|_| "<Line/>").collect();
    let xml = format!("<Doc xmlns=\"urn:test:doc\">{lines}<Sub/></Doc>");
    let doc = Document::parse(xml.as_bytes()).unwrap();
    let all = rs.validate(&doc);
    assert_eq!(all.findings.len(), 501);
    assert!(all.omitted.is_zero());
    let listed = rs.validate_listing(&doc, 100);
    assert_eq!(listed.findings.len(), 100);
    assert_eq!(listed.counts, all.counts);
    assert_eq!(listed.omitted.total(), 401);
    assert_eq!(
        listed.omitted.fatal, 1,
        "the fatal finding came last and was counted"
    );
    assert_eq!(listed.verdict, Verdict::Invalid);
    assert_eq!(listed.findings[..], all.findings[..100]);
    let json = serde_json::to_value(&listed).unwrap();
    assert_eq!(json["omitted"]["warning"], 400);
    assert!(serde_json::to_value(&all).unwrap().get("omitted").is_none());
}

/// Columns of findings on a very long line cost no more than on a short one (the whole
/// document may be one line).
#[test]
fn findings_on_one_long_line_take_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let p = "pattern: main
rules:
  - context: t:Line
    asserts:
      - id: L
        flag: warning
        test: false()
        message: A line.
";
    pack(dir.path(), "p", "1", &[("main", p)], "");
    let rs = single(dir.path(), "p@1");
    let time = |n: usize| {
        let lines: String = (0..n).map(|_| "<Line/>").collect();
        let xml = format!("<Doc xmlns=\"urn:test:doc\">{lines}</Doc>");
        let doc = Document::parse(xml.as_bytes()).unwrap();
        let start = Instant::now();
        let r = rs.validate(&doc);
        assert_eq!(r.findings.len(), n);
        assert_eq!(r.findings[n - 1].location.column as usize, 27 + 7 * (n - 1));
        start.elapsed().as_secs_f64()
    };
    // The fastest of three runs of each size, so that a busy machine (the test binary runs
    // tests in parallel, CI shares its cores) cannot pass for quadratic work: eight times the
    // findings are eight times the work when linear, sixty-four times if each column were
    // counted from the line start; the bound sits halfway (in ratio) between the two.
    let fastest = |n: usize| (0..3).map(|_| time(n)).fold(f64::INFINITY, f64::min);
    time(1_000);
    let small = fastest(5_000);
    let large = fastest(40_000);
    assert!(
        large < small * 22.0 + 0.05,
        "5k: {small:.3}s, 40k: {large:.3}s"
    );
}

/// Every expression of every shipped pack (rule contexts, tests, lets) comes back from the
/// expression memo's encoding exactly as compiled, and a truncated entry is refused.
#[test]
fn shipped_expressions_survive_the_memo_encoding() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rulepacks");
    let c = compiled(&root);
    let mut checked = 0;
    let mut check = |what: &str, e: &crate::xpath::Expr| {
        if let Err(problem) = e.memo_round_trip() {
            panic!("{what} `{}`: {problem}", e.source());
        }
        checked += 1;
    };
    for pack in &c.packs {
        for l in &pack.global_lets {
            check(&pack.id, &l.expr);
        }
        for rule in pack.patterns.iter().flat_map(|p| &p.rules) {
            check(&pack.id, &rule.context);
            for l in &rule.lets {
                check(&pack.id, &l.expr);
            }
            for ch in &rule.checks {
                check(&pack.id, &ch.test);
            }
        }
    }
    assert!(checked > 1_500, "only {checked} expressions checked");
}
