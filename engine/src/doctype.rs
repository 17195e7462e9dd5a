//! The document-type gate: a profile validates only the document elements it declares
//! (`documents` in `profiles.yaml`); any other document gets one fatal finding,
//! [`DOCTYPE_RULE`], instead of rules that would find nothing to check in it and call it
//! valid.

use std::sync::Arc;

use crate::document::Document;
use crate::pack::DocumentTypeDef;
use crate::report::{Finding, FindingLayer, Location, Severity};

/// The rule id of the finding for a document no profile in use takes.
pub const DOCTYPE_RULE: &str = "INVEX-DOCTYPE";

/// `{namespace}local`, or `local` without a namespace.
pub fn clark(namespace: &str, local: &str) -> String {
    if namespace.is_empty() {
        local.to_string()
    } else {
        format!("{{{namespace}}}{local}")
    }
}

/// The namespace and local name of `doc`'s document element.
pub fn root_name(doc: &Document) -> (&str, &str) {
    match doc.name(doc.document_element()).map(|n| doc.qname(n)) {
        Some(q) => (q.namespace.as_str(), q.local.as_str()),
        None => ("", ""),
    }
}

/// Whose document types a gate holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// A profile, `id@version`: it validates the documents of its types.
    Profile(String),
    /// Detection found no installed profile for the document: the types are those every
    /// installed profile takes, and nothing passes.
    Installed,
}

/// The profile of a report when no installed profile takes the document.
pub const NO_PROFILE: &str = "none";

/// The document types a rule set accepts, and every type `profiles.yaml` declares (to
/// name a recognised but unsupported one in the refusal).
#[derive(Clone, Debug)]
pub struct DocumentGate {
    pub scope: Scope,
    pub accepted: Vec<DocumentTypeDef>,
    pub declared: Arc<[DocumentTypeDef]>,
}

impl DocumentGate {
    /// Whether the rule set validates `doc`.
    pub fn admits(&self, doc: &Document) -> bool {
        match self.scope {
            Scope::Installed => false,
            Scope::Profile(_) => {
                let (ns, local) = root_name(doc);
                self.accepted
                    .iter()
                    .any(|t| t.namespace == ns && t.root == local)
            }
        }
    }

    /// The finding for `doc`, which the gate does not admit.
    pub fn refusal(&self, doc: &Document) -> Finding {
        let (ns, local) = root_name(doc);
        let found = clark(ns, local);
        let known = self
            .declared
            .iter()
            .find(|t| t.namespace == ns && t.root == local);
        let found_desc = match known {
            Some(t) => format!("{found} ({})", t.title),
            None if ns.is_empty() => format!("{found} (no namespace)"),
            None => found.clone(),
        };
        let takes = if self.accepted.is_empty() {
            "none".to_string()
        } else {
            self.accepted
                .iter()
                .map(|t| format!("{} ({})", t.clark(), t.title))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (by, who, pack) = match &self.scope {
            Scope::Profile(p) => (format!("profile {p}"), "it takes", p.as_str()),
            Scope::Installed => ("any installed profile".to_string(), "they take", NO_PROFILE),
        };
        let mut message = format!(
            "The document element {found_desc} is not a document type {by} validates; \
             {who}: {takes}. The rules were not run."
        );
        if let Some(why) = known.and_then(|t| t.unsupported.as_deref()) {
            message.push(' ');
            message.push_str(why.trim());
        }
        let remediation = if self.accepted.is_empty() {
            "Install a profile for this document type.".to_string()
        } else {
            let mut titles: Vec<&str> = self.accepted.iter().map(|t| t.title.as_str()).collect();
            titles.dedup();
            format!(
                "Send the invoice as a {}; an invoice in another format must be converted first.",
                titles.join(" or ")
            )
        };
        let (line, column) = doc.line_column(doc.document_element());
        Finding {
            rule_id: DOCTYPE_RULE.to_string(),
            severity: Severity::Fatal,
            location: Location {
                path: "/".to_string(),
                line,
                column,
            },
            message,
            remediation,
            business_terms: Vec::new(),
            pack: pack.to_string(),
            owner: Some("sender-mapping".to_string()),
            about_rule: None,
            layer: FindingLayer::Document,
        }
    }
}

#[cfg(test)]
mod tests;
