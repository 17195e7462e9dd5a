//! Command logic behind `invex validate` and `invex rules lint|test|snapshot`.
