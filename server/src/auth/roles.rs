//! Roles and who may call what.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The role of an API key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Everything, including key management and rule-pack reloads.
    Admin,
    /// Works with invoices: validation, conversion, sending, lookups.
    Accountant,
    /// Integrates systems: the same invoice routes as an accountant.
    Developer,
    /// Reads results, evidence and rule packs; changes nothing.
    Auditor,
}

pub const ALL_ROLES: [Role; 4] = [
    Role::Admin,
    Role::Accountant,
    Role::Developer,
    Role::Auditor,
];

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Accountant => "accountant",
            Role::Developer => "developer",
            Role::Auditor => "auditor",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        ALL_ROLES.into_iter().find(|r| r.as_str() == s)
    }
}

/// Roles allowed by a route.
pub mod allow {
    use super::Role;
    pub const ADMIN: &[Role] = &[Role::Admin];
    /// Routes that work with invoices.
    pub const INVOICE_WORK: &[Role] = &[Role::Admin, Role::Accountant, Role::Developer];
    /// Reviewing conversions (correct, approve, reject): administrators and accountants.
    pub const REVIEW: &[Role] = &[Role::Admin, Role::Accountant];
    /// Evidence packages: administrators and auditors.
    pub const AUDIT: &[Role] = &[Role::Admin, Role::Auditor];
    /// Routes that configure integrations (webhook endpoints).
    pub const INTEGRATION: &[Role] = &[Role::Admin, Role::Developer];
    /// Routes that only read.
    pub const READ: &[Role] = &[
        Role::Admin,
        Role::Accountant,
        Role::Developer,
        Role::Auditor,
    ];
}
