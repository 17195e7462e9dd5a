//! The business terms of an EN 16931 invoice: read from UBL ([`read()`]), written as
//! Peppol BIS Billing 3.0 UBL ([`write()`]) and exchanged as JSON ([`json`]). The PDF
//! rendition, the sending checks and the JSON feeds all use this one model, so each term
//! has one reading everywhere.

mod checked;
pub mod json;
pub mod model;
mod read;
pub mod write;

pub use model::*;
pub use read::{from_document, read, ReadError};
pub use write::write;

#[cfg(test)]
mod tests;
