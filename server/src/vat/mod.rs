//! EU VAT numbers: local format and check-digit checks (answered without a register).

pub mod local;
