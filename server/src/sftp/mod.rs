//! SFTP drop folders: a tenant's accounts sign in with a public key and see `inbox/`,
//! `outbox/` and `archive/`. A file complete in `inbox/` becomes a batch (one document, or
//! a ZIP or NDJSON feed), processed like an HTTP batch; its outcome appears in `outbox/` and
//! the file itself in `archive/`. Everything shown is read from the database, so a restart
//! (or another instance) shows the same, and a SIGKILL loses only an upload whose close was
//! never answered.
//!
//! - [`accounts`]: accounts and their keys;
//! - [`folders`]: what the folders hold, named;
//! - [`deliver`]: a complete file into a batch, once per content;
//! - [`session`]: the SFTP requests of a session;
//! - [`listener`]: the SSH server.

pub mod accounts;
pub mod config;
pub mod deliver;
pub mod folders;
pub mod listener;
pub mod session;

pub use config::SftpConfig;
pub use listener::{start, SftpServer};
