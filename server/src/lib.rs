//! invex server: the HTTP API over the rules engine, with storage, API keys and roles.
//!
//! Handlers are thin: they extract typed input, call a module (`validation`, `store`,
//! `auth`) and answer JSON or problem+json. The engine knows nothing of HTTP.

pub mod admission;
pub mod artifacts;
pub mod auth;
pub mod batches;
pub mod clock;
pub mod company;
pub mod config;
pub mod context;
pub mod convert;
pub mod fleet;
pub mod ids;
pub mod invoice;
pub mod limits;
pub mod listener;
pub mod mail;
pub mod metrics;
pub mod openapi;
pub mod people;
pub mod peppol;
pub mod problem;
pub mod routes;
pub mod sandbox;
pub mod sending;
pub mod server;
pub mod settings;
pub mod sftp;
pub mod special_ip;
pub mod sso;
pub mod state;
pub mod store;
pub mod tls;
pub mod usage;
pub mod validation;
pub mod vat;
pub mod webhooks;
pub mod xmltree;
pub mod xmlwrite;

pub use config::Config;
pub use server::{start, Running};
pub use settings::Mode;
