use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use super::*;
use crate::pack::yamlpos::{PosTree, Seg};

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct Doc {
    name: String,
    #[serde(default)]
    flag: bool,
    #[serde(default)]
    items: Vec<String>,
}

#[test]
fn reads_scalars_as_the_fields_want_them() {
    let d: Doc = from_str("name: 2026.10\nflag: True\nitems: [1.0, 007, 'x', yes]\n").unwrap();
    assert_eq!(
        d,
        Doc {
            name: "2026.10".into(),
            flag: true,
            items: vec!["1.0".into(), "007".into(), "x".into(), "yes".into()],
        }
    );
    // A plain null-like scalar in a string field is its text.
    assert_eq!(from_str::<Doc>("name:\n").unwrap().name, "");
    assert_eq!(from_str::<Doc>("name: ~\n").unwrap().name, "~");
    assert_eq!(from_str::<Doc>("name: null\n").unwrap().name, "null");
    // Only true and false are booleans.
    let e = from_str::<Doc>("name: a\nflag: yes\n").unwrap_err();
    assert_eq!(e.location(), Some((2, 7)), "{e}");
}

#[test]
fn errors_carry_a_location_apart_from_the_message() {
    let e = from_str::<Doc>("name: a\nitems:\n  - b\n  nme: c\n").unwrap_err();
    let (line, column) = e.location().expect("located");
    assert!(line >= 3, "{e}");
    assert!(column >= 1, "{e}");
    assert!(!e.message().contains(" at line "), "{e}");
    assert_eq!(
        e.to_string(),
        format!("{} at line {line} column {column}", e.message())
    );

    let e = from_str::<Doc>("name: a\nnmae: b\n").unwrap_err();
    assert!(e.message().contains("unknown field `nmae`"), "{e}");
    assert_eq!(e.location(), Some((2, 1)), "{e}");

    let e = from_str::<Doc>("flag: true\n").unwrap_err();
    assert!(e.message().contains("missing field `name`"), "{e}");
}

#[test]
fn duplicate_keys_merge_keys_and_documents() {
    let e = from_str::<Doc>("name: a\nname: b\n").unwrap_err();
    assert_eq!(e.location(), Some((2, 1)), "{e}");
    assert!(e.message().contains("name"), "{e}");
    let e = from_str::<BTreeMap<String, String>>("a: x\nb: y\na: z\n").unwrap_err();
    assert_eq!(e.location().map(|l| l.0), Some(3), "{e}");
    // `<<` is an ordinary key, so a field no struct has.
    let e = from_str::<Doc>("base: &b {name: a}\n<<: *b\n").unwrap_err();
    assert!(e.message().contains("unknown field"), "{e}");
    // One document per file.
    assert!(from_str::<Doc>("name: a\n---\nname: b\n").is_err());
}

#[test]
fn an_alias_bomb_is_refused() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..10 {
        let prev = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
        ));
    }
    let started = std::time::Instant::now();
    assert!(from_str::<IgnoredAny>(&text).is_err());
    assert!(from_str::<BTreeMap<String, Vec<IgnoredAny>>>(&text).is_err());
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    // Positions do not expand aliases.
    let t = PosTree::parse(&text);
    assert_eq!(t.locate(&[Seg::Key("a9"), Seg::Index(9)]).line, 10);
}

#[test]
fn nesting_is_bounded() {
    let ok = format!("{}{}", "[".repeat(32), "]".repeat(32));
    assert!(from_str::<IgnoredAny>(&ok).is_ok());
    for depth in [MAX_DEPTH + 1, 100_000] {
        let flow = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(from_str::<IgnoredAny>(&flow).is_err(), "flow {depth}");
        let block = format!("{}x\n", "- ".repeat(depth));
        assert!(from_str::<IgnoredAny>(&block).is_err(), "block {depth}");
        // The position tree of such a text is empty, and building it does not overflow.
        let t = PosTree::parse(&block);
        assert_eq!(
            t.locate(&[Seg::Index(0)]),
            crate::pack::yamlpos::Pos { line: 1, column: 1 }
        );
        let _ = PosTree::parse(&flow);
    }
}

#[test]
fn hostile_bytes_do_not_panic() {
    for text in [
        "\u{0}",
        "a: \"\\",
        "? [\n",
        "- &a\n- *b\n",
        "a: !!binary ###\n",
        "%YAML 9.9\n--- x",
        "{a: [}",
        "\u{feff}\u{feff}a: b",
        "a: |\n  x\n y\n",
        "'",
        "\t- x",
    ] {
        let _ = from_str::<IgnoredAny>(text);
        let _ = from_str::<Doc>(text);
        let _ = PosTree::parse(text);
    }
}

#[derive(Serialize)]
struct Out<'a> {
    values: Vec<&'a str>,
    number: usize,
    empty: Vec<String>,
    nested: Vec<Inner<'a>>,
}

#[derive(Serialize)]
struct Inner<'a> {
    id: &'a str,
    text: Option<&'a str>,
}

/// What serde_yaml 0.9 wrote for the same value (the output of the files committed before).
#[test]
fn writes_as_serde_yaml_did() {
    let out = Out {
        values: vec![
            "1.3.16",
            "2026.5",
            "2027",
            "007",
            "0x1F",
            "1e5",
            ".inf",
            "",
            "~",
            "null",
            "true",
            "True",
            "yes",
            "*[empty(*)][normalize-space(.) = \"\"]",
            "/ubl:Invoice[$x = 'SK'] | /cn:CreditNote",
            "a: b",
            "a:b",
            "trailing:",
            "a #b",
            "a#b",
            "- x",
            "-x",
            "---x",
            " lead",
            "trail ",
            "Slovenské národné pravidlá",
            "tab\there",
            "two\nlines",
            "two\nlines\n",
            "Peppol BIS Billing 3.0 rules (PEPPOL layer), May 2026 release 3.0.21, and a long tail of text",
        ],
        number: 20,
        empty: Vec::new(),
        nested: vec![
            Inner {
                id: "T-01",
                text: Some("ok"),
            },
            Inner { id: "2", text: None },
        ],
    };
    assert_eq!(to_string(&out).unwrap(), EXPECTED_OUT);
}

const EXPECTED_OUT: &str = r#"values:
- 1.3.16
- '2026.5'
- '2027'
- '007'
- '0x1F'
- '1e5'
- '.inf'
- ''
- '~'
- 'null'
- 'true'
- 'True'
- yes
- '*[empty(*)][normalize-space(.) = ""]'
- /ubl:Invoice[$x = 'SK'] | /cn:CreditNote
- 'a: b'
- a:b
- 'trailing:'
- 'a #b'
- a#b
- '- x'
- -x
- '---x'
- ' lead'
- 'trail '
- Slovenské národné pravidlá
- "tab\there"
- |-
  two
  lines
- |
  two
  lines
- Peppol BIS Billing 3.0 rules (PEPPOL layer), May 2026 release 3.0.21, and a long tail of text
number: 20
empty: []
nested:
- id: T-01
  text: ok
- id: '2'
  text: null
"#;
