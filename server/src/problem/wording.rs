//! The texts axum's extractors answer with (JSON bodies, query strings) quote serde, and
//! through it Rust: "invalid type: floating point `1.5`, expected usize", "data did not
//! match any variant of untagged enum BatchRequest", "expected struct ApproveBody". Every
//! such rejection passes here on its way to becoming a problem, and is said in the
//! service's words, naming the member at fault.

/// The detail in the service's words, and the member at fault when the text names one.
pub fn own_words(text: &str) -> (String, Option<String>) {
    let (what, rest) = if let Some(rest) =
        text.strip_prefix("Failed to deserialize the JSON body into the target type: ")
    {
        ("the JSON body", rest)
    } else if let Some(rest) = text.strip_prefix("Failed to parse the request body as JSON: ") {
        return (
            format!("the body is not valid JSON: {}", position_words(rest)),
            None,
        );
    } else if let Some(rest) = text.strip_prefix("Failed to deserialize query string: ") {
        ("the query string", rest)
    } else if text.starts_with("Expected request with `Content-Type: application/json`") {
        return (
            "send the body as JSON with `Content-Type: application/json`".to_string(),
            None,
        );
    } else {
        return (text.to_string(), None);
    };
    // serde_path_to_error prefixes the member's path: `remove_lines[0]: invalid type ...`.
    let (field, message) = match rest.split_once(": ") {
        Some((path, message)) if is_path(path) => (Some(path.to_string()), message),
        _ => (None, rest),
    };
    let (message, at) = match message.find(" at line ") {
        Some(i) => (&message[..i], format!(", at{}", &message[i + 3..])),
        None => (message, String::new()),
    };
    let message = format!("{}{at}", plain(message));
    let detail = match &field {
        Some(f) => format!("{what}: `{f}`: {message}"),
        None => format!("{what}: {message}"),
    };
    let field = field.or_else(|| quoted_after(message.as_str(), "the member `"));
    (detail, field)
}

/// A member path as serde_path_to_error writes it: names, dots and indexes.
fn is_path(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']' | '-'))
}

/// serde's phrases, in words a client developer (not a Rust developer) reads.
fn plain(message: &str) -> String {
    if let Some(name) = between(message, "missing field `", "`") {
        return format!("the member `{name}` is missing");
    }
    if let Some(name) = between(message, "unknown field `", "`") {
        let expected = message
            .split_once("expected one of ")
            .map(|(_, e)| format!("; known members: {e}"))
            .unwrap_or_default();
        return format!("the member `{name}` is not known{expected}");
    }
    if let Some(name) = between(message, "unknown variant `", "`") {
        let expected = message
            .split_once("expected one of ")
            .or_else(|| message.split_once("expected "))
            .map(|(_, e)| format!("; one of {e}"))
            .unwrap_or_default();
        return format!("`{name}` is not an allowed value{expected}");
    }
    if message.starts_with("data did not match any variant of untagged enum") {
        return "the body is not one of the shapes this operation takes".to_string();
    }
    if let Some(rest) = message.strip_prefix("invalid type: ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            return format!(
                "a value has the wrong type: {} where {} was expected",
                kind(found),
                kind(expected)
            );
        }
    }
    if let Some(rest) = message.strip_prefix("invalid value: ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            return format!(
                "{} is not allowed here: expected {}",
                kind(found),
                kind(expected)
            );
        }
    }
    message.to_string()
}

/// A serde type description as a JSON type.
fn kind(s: &str) -> String {
    let s = s.trim();
    let words = [
        ("struct ", "an object"),
        ("a sequence", "an array"),
        ("sequence", "an array"),
        ("a map", "an object"),
        ("map", "an object"),
        ("usize", "a whole number of at least 0"),
        ("u64", "a whole number of at least 0"),
        ("u32", "a whole number of at least 0"),
        ("u16", "a whole number of at least 0"),
        ("u8", "a whole number of at least 0"),
        ("i64", "a whole number"),
        ("i32", "a whole number"),
        ("f64", "a number"),
        ("f32", "a number"),
        ("a boolean", "true or false"),
        ("boolean", "true or false"),
        ("unit value", "null"),
        ("null", "null"),
        ("floating point", "the number"),
        ("integer", "the whole number"),
        ("string", "the text"),
    ];
    for (serde, json) in words {
        if let Some(rest) = s.strip_prefix(serde) {
            // `struct ApproveBody`: the Rust name says nothing to the caller.
            if serde == "struct " {
                return json.to_string();
            }
            return format!("{json}{rest}");
        }
    }
    s.to_string()
}

/// "at line 1 column 88" stays (it locates the fault in the body), said once.
fn position_words(message: &str) -> String {
    message.replace(" at line ", ", at line ")
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = s.find(start)? + start.len();
    let to = from + s[from..].find(end)?;
    Some(&s[from..to])
}

fn quoted_after(s: &str, start: &str) -> Option<String> {
    between(s, start, "`").map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::own_words;

    /// The texts issue 16 found in answers, and their kin: no Rust names, no serde phrases.
    #[test]
    fn serde_phrases_become_the_services_words() {
        for (text, field) in [
            (
                "Failed to deserialize the JSON body into the target type: data did not match any variant of untagged enum BatchRequest at line 1 column 2",
                None,
            ),
            (
                "Failed to deserialize the JSON body into the target type: missing field `vat` at line 1 column 2",
                Some("vat"),
            ),
            (
                "Failed to deserialize the JSON body into the target type: remove_lines[0]: invalid type: floating point `38878.0`, expected usize at line 1 column 88",
                Some("remove_lines[0]"),
            ),
            (
                "Failed to deserialize the JSON body into the target type: invalid type: null, expected struct ApproveBody at line 1 column 4",
                None,
            ),
            (
                "Failed to deserialize query string: status: unknown variant `lost`, expected one of `ready`, `sent`",
                Some("status"),
            ),
        ] {
            let (detail, got) = own_words(text);
            for rust in ["untagged enum", "BatchRequest", "usize", "struct ", "ApproveBody", "Failed to deserialize", "variant"] {
                assert!(!detail.contains(rust), "`{rust}` in: {detail}");
            }
            assert_eq!(got.as_deref(), field, "{detail}");
        }
        let (detail, _) = own_words(
            "Failed to deserialize the JSON body into the target type: missing field `vat` at line 1 column 2",
        );
        assert_eq!(
            detail,
            "the JSON body: the member `vat` is missing, at line 1 column 2"
        );
    }

    #[test]
    fn other_texts_are_kept() {
        assert_eq!(own_words("no such route").0, "no such route");
    }
}
