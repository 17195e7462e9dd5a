//! Conversion of CSV, Excel and PDF invoices into Peppol BIS Billing 3.0 UBL, with a
//! confidence for every extracted value and a review gate for uncertain results.
//!
//! Extractors (`tabular`, `pdf`) fill a [`model::Draft`]; the UBL writer turns a draft
//! into XML; the engine validates it; the review gate decides `ready` or `needs_review`.

pub mod archive;
pub mod batch;
pub mod config;
pub mod extract;
pub mod gate;
pub mod isdoc;
pub mod model;
pub mod pdf;
pub mod pohoda;
pub mod review;
pub mod source;
pub mod structured;
pub mod tabular;
pub mod ubl;

#[cfg(test)]
pub(crate) mod roundtrip;
