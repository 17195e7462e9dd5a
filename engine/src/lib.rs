//! invex rules engine: bytes → [`document::Document`] → compiled rule sets → findings.
//!
//! The engine knows nothing of HTTP, storage or tenants.

pub mod catalogue;
pub mod checks;
pub mod detect;
pub mod doctype;
pub mod document;
pub mod fixtures;
pub mod lock;
pub mod pack;
pub mod registry;
pub mod report;
pub mod rules;
pub mod schema;
pub mod xpath;
pub mod yaml;
