//! From a provider's claims to a role: the administrator maps values of one claim (a string
//! or an array of strings, such as `groups`) to roles; a person whose values map to several
//! roles gets the one that may do most.

use serde_json::{Map, Value};

use crate::auth::Role;

/// Roles from most to least able: where several values map, the first of these wins.
const PRECEDENCE: [Role; 4] = [
    Role::Admin,
    Role::Accountant,
    Role::Developer,
    Role::Auditor,
];

/// The values of `claim` in `claims`: a claim named exactly so (providers use names with
/// dots and slashes, `https://firma.sk/roles`), else a path through nested objects
/// (`realm_access.roles`). A string is one value; an array gives its strings.
pub fn values<'c>(claims: &'c Map<String, Value>, claim: &str) -> Vec<&'c str> {
    let found = claims.get(claim).or_else(|| {
        let mut parts = claim.split('.');
        let first = claims.get(parts.next()?)?;
        parts.try_fold(first, |v, part| v.as_object()?.get(part))
    });
    match found {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The role of a person with `claims`: the ablest role any of their values maps to, else
/// `default` (None: the person gets no account).
pub fn role_of(
    claims: &Map<String, Value>,
    claim: &str,
    map: &[(String, Role)],
    default: Option<Role>,
) -> Option<Role> {
    let have = values(claims, claim);
    let mapped: Vec<Role> = map
        .iter()
        .filter(|(value, _)| have.contains(&value.as_str()))
        .map(|(_, role)| *role)
        .collect();
    PRECEDENCE
        .into_iter()
        .find(|r| mapped.contains(r))
        .or(default)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn map() -> Vec<(String, Role)> {
        vec![
            ("invex-auditors".into(), Role::Auditor),
            ("invex-admins".into(), Role::Admin),
            ("invex-accountants".into(), Role::Accountant),
        ]
    }

    #[test]
    fn the_ablest_mapped_role_wins_and_unmapped_people_get_the_default() {
        let c = claims(json!({"groups": ["staff", "invex-auditors", "invex-accountants"]}));
        assert_eq!(role_of(&c, "groups", &map(), None), Some(Role::Accountant));
        let c = claims(json!({"groups": "invex-admins"}));
        assert_eq!(role_of(&c, "groups", &map(), None), Some(Role::Admin));
        let c = claims(json!({"groups": ["staff"]}));
        assert_eq!(role_of(&c, "groups", &map(), None), None);
        assert_eq!(
            role_of(&c, "groups", &map(), Some(Role::Auditor)),
            Some(Role::Auditor)
        );
        // Not a string: nothing maps.
        let c = claims(json!({"groups": [1, {"invex-admins": true}]}));
        assert_eq!(role_of(&c, "groups", &map(), None), None);
    }

    #[test]
    fn claims_are_found_by_exact_name_before_a_nested_path() {
        let c = claims(json!({
            "realm_access": {"roles": ["invex-admins"]},
            "https://firma.sk/roles": ["invex-auditors"],
        }));
        assert_eq!(values(&c, "realm_access.roles"), vec!["invex-admins"]);
        assert_eq!(values(&c, "https://firma.sk/roles"), vec!["invex-auditors"]);
        assert!(values(&c, "realm_access.missing").is_empty());
        assert!(values(&c, "").is_empty());
    }
}
