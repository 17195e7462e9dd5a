//! Single sign-on for the console: each tenant may name its OpenID provider; people of the
//! tenant's e-mail domains then sign in there (OpenID Connect authorization code flow with
//! PKCE), and their role follows a claim the provider sends.
//!
//! This module speaks the protocol and checks what the provider answers; which account a
//! verified identity opens is [`crate::people`]'s decision, and [`crate::store`] keeps the
//! settings, the sign-ins under way and the identities. It knows no HTTP server: the
//! console's routes carry `state` in a cookie and the provider's answer in a query.

pub mod config;
pub mod flow;
pub mod http;
pub mod manage;
pub mod roles;
pub mod settings;

pub use config::SsoConfig;
pub use flow::{Callback, Identity, SingleSignOn, SsoError, Started};
pub use manage::ManageError;
pub use settings::{SettingsError, SsoForm, SsoSettings};
