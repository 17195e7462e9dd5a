//! invex end to end, in one test binary (one link of the whole server instead of one per
//! file; the tests of every file share the harness): conformance against the official
//! artefacts, the rule catalogue, the real server on random ports spoken to over HTTP, SMTP,
//! SFTP, TLS, and storage on SQLite (on PostgreSQL with `--ignored` and
//! `INVEX_TEST_POSTGRES_URL`).

mod catalogue;
mod conformance;
mod console_accounts;
mod console_admin;
mod console_mail;
mod console_review;
mod console_sso;
mod problem_catalogue;
mod regions;
mod server_api;
mod server_batches;
mod server_company;
mod server_convert;
mod server_convert_limits;
mod server_doctype;
mod server_invoice_json;
mod server_partner;
mod server_peppol;
mod server_profiles;
mod server_reload;
mod server_rules;
mod server_schema;
mod server_sending;
mod server_sftp;
mod server_tls;
mod server_vat;
mod server_webhooks;
mod storage;
mod support;
