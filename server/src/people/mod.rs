//! People who use the console: accounts in a tenant with one of the roles API keys have,
//! passwords (Argon2id), one-time links (invitations, the first admin's sign-in) and
//! server-side sessions with idle and absolute expiry and a CSRF token each.
//!
//! This module decides; [`crate::store`] keeps. It knows no HTTP: the console's routes
//! carry its tokens in cookies and forms.

pub mod email;
pub mod mail;
pub mod password;
pub mod service;
pub mod session;
pub mod sso;
pub mod token;

pub use service::{Accounts, AccountsError, Invitation, SignIn, SignedIn};
pub use session::SessionPolicy;
