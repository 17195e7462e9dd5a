//! Conversion settings.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConvertConfig {
    /// A field whose confidence is under this value (0.0 – 1.0) holds its conversion for
    /// review.
    pub confidence_threshold: f32,
    /// At most this many invoices per upload (a larger file is refused with 413).
    pub max_invoices: usize,
}

impl Default for ConvertConfig {
    fn default() -> Self {
        ConvertConfig {
            confidence_threshold: 0.8,
            max_invoices: 500,
        }
    }
}
