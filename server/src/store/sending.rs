//! Sending as stored: connections, invoices with their hash-chained event timeline, the
//! outbox the delivery worker drains, and idempotency keys. Everything that must happen
//! together (an invoice, its first events and its outbox row) is one transaction.

use sha2::{Digest, Sha256};
use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::{opt_text, text, Store, StoreError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionRecord {
    pub id: String,
    pub tenant_id: String,
    pub partner: String,
    pub name: String,
    pub status: String,
    pub created_at: String,
    pub activated_at: Option<String>,
    /// Partner settings, JSON (`{"base_url", "api_key"}` for `http`).
    pub settings: Option<String>,
    /// The Standard Webhooks secret the partner signs its callbacks with.
    pub callback_secret: Option<String>,
}

impl ConnectionRecord {
    fn from_row(row: &AnyRow) -> Result<ConnectionRecord, sqlx::Error> {
        Ok(ConnectionRecord {
            id: text(row, "id")?,
            tenant_id: text(row, "tenant_id")?,
            partner: text(row, "partner")?,
            name: text(row, "name")?,
            status: text(row, "status")?,
            created_at: text(row, "created_at")?,
            activated_at: opt_text(row, "activated_at")?,
            settings: opt_text(row, "settings")?,
            callback_secret: opt_text(row, "callback_secret")?,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvoiceRecord {
    pub id: String,
    pub tenant_id: String,
    pub connection_id: Option<String>,
    pub status: String,
    pub document_id: Option<String>,
    pub buyer_endpoint: Option<String>,
    pub sha256: String,
    pub payload: String,
    pub validation_id: String,
    pub profile: String,
    pub rules_version: String,
    pub summary: String,
    pub findings: String,
    pub scenario: Option<String>,
    pub transmission_id: Option<String>,
    pub resubmission_of: Option<String>,
    pub environment: String,
    pub created_at: String,
    pub updated_at: String,
    /// BT-2 as written.
    pub issue_date: Option<String>,
    /// The seller's identifiers, normalised, space-separated (see `sending::document`).
    pub seller_ids: String,
}

const CONNECTION_COLUMNS: &str =
    "id, tenant_id, partner, name, status, created_at, activated_at, settings, callback_secret";

const INVOICE_COLUMNS: &str = "id, tenant_id, connection_id, status, document_id, buyer_endpoint, \
     sha256, payload, validation_id, profile, rules_version, summary, findings, scenario, \
     transmission_id, resubmission_of, environment, created_at, updated_at, issue_date, \
     seller_ids";

/// The invoice columns a list reads: all but the document and its findings.
const INVOICE_LIST_COLUMNS: &str = "id, tenant_id, connection_id, status, document_id, \
     buyer_endpoint, sha256, '' AS payload, validation_id, profile, rules_version, summary, \
     '[]' AS findings, scenario, transmission_id, resubmission_of, environment, created_at, \
     updated_at, issue_date, seller_ids";

/// What `GET /v1/invoices` filters on; `None` matches everything.
#[derive(Clone, Debug, Default)]
pub struct InvoiceFilter<'a> {
    pub tenant_id: &'a str,
    /// Only invoices older than this id (the cursor).
    pub before: Option<&'a str>,
    pub limit: i64,
    pub status: Option<&'a str>,
    pub document_id: Option<&'a str>,
    /// The buyer's electronic address, `scheme:value`.
    pub counterparty: Option<&'a str>,
    /// Issue dates, `YYYY-MM-DD`, inclusive.
    pub issued_from: Option<&'a str>,
    pub issued_to: Option<&'a str>,
    /// Changed at or after this RFC 3339 time (to catch up on missed webhooks).
    pub updated_since: Option<&'a str>,
}

/// Invoices that correct `id` (`resubmission_of = id`), oldest first.
pub(crate) const RESUBMISSIONS_SQL: &str =
    "SELECT id FROM invoices WHERE tenant_id = $1 AND resubmission_of = $2 ORDER BY id";

impl InvoiceRecord {
    fn from_row(row: &AnyRow) -> Result<InvoiceRecord, sqlx::Error> {
        Ok(InvoiceRecord {
            id: text(row, "id")?,
            tenant_id: text(row, "tenant_id")?,
            connection_id: opt_text(row, "connection_id")?,
            status: text(row, "status")?,
            document_id: opt_text(row, "document_id")?,
            buyer_endpoint: opt_text(row, "buyer_endpoint")?,
            sha256: text(row, "sha256")?,
            payload: text(row, "payload")?,
            validation_id: text(row, "validation_id")?,
            profile: text(row, "profile")?,
            rules_version: text(row, "rules_version")?,
            summary: text(row, "summary")?,
            findings: text(row, "findings")?,
            scenario: opt_text(row, "scenario")?,
            transmission_id: opt_text(row, "transmission_id")?,
            resubmission_of: opt_text(row, "resubmission_of")?,
            environment: text(row, "environment")?,
            created_at: text(row, "created_at")?,
            updated_at: text(row, "updated_at")?,
            issue_date: opt_text(row, "issue_date")?,
            seller_ids: opt_text(row, "seller_ids")?.unwrap_or_default(),
        })
    }
}

/// A timeline entry to append (seq and hashes are assigned when stored).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEvent {
    pub at: String,
    pub source: String,
    pub code: String,
    pub status: Option<String>,
    pub meaning: String,
    pub correlation_id: String,
    pub detail: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventRecord {
    pub seq: i64,
    pub at: String,
    pub source: String,
    pub code: String,
    pub status: Option<String>,
    pub meaning: String,
    pub correlation_id: String,
    pub detail: Option<String>,
    pub prev_hash: String,
    pub hash: String,
}

/// The chain's starting value: 64 zeros.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The hash of one entry: SHA-256 over the previous hash and the entry's fields, each
/// followed by a newline (absent optional fields as empty lines). `invex evidence verify`
/// recomputes it the same way.
pub fn entry_hash(prev_hash: &str, seq: i64, e: &NewEvent) -> String {
    let mut h = Sha256::new();
    for part in [
        prev_hash,
        &seq.to_string(),
        &e.at,
        &e.source,
        &e.code,
        e.status.as_deref().unwrap_or(""),
        &e.meaning,
        &e.correlation_id,
        e.detail.as_deref().unwrap_or(""),
    ] {
        h.update(part.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

/// A webhook event to queue in the same transaction as the change it reports.
#[derive(Clone, Debug)]
pub struct Notice {
    pub event_type: crate::webhooks::events::EventType,
    pub data: serde_json::Value,
}

/// Queue `notices` of `tenant_id` in `tx`, correlated with `invoice_id` (or a batch id).
pub(super) async fn queue_notices(
    tx: &mut Transaction<'static, Any>,
    tenant_id: &str,
    invoice_id: &str,
    notices: &[Notice],
) -> Result<(), StoreError> {
    for n in notices {
        crate::webhooks::events::emit(
            &mut *tx,
            tenant_id,
            n.event_type,
            Some(invoice_id),
            n.data.clone(),
        )
        .await?;
    }
    Ok(())
}

/// What claiming an idempotency key found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdempotencyClaim {
    /// The key is ours under `token`: run the request. Only the holder of the current
    /// token can complete or release the key.
    New { token: String },
    /// Another request with this key is still running.
    Running,
    /// The key was used with a different request.
    Mismatch,
    /// The first request completed: replay its answer.
    Completed {
        status: u16,
        content_type: String,
        body: String,
    },
}

/// The answer a send request stores for its idempotency key.
pub struct KeyCompletion<'a> {
    pub key: &'a str,
    pub token: &'a str,
    pub status: u16,
    pub content_type: &'a str,
    pub body: &'a str,
}

/// Everything a new invoice is stored with (see [`Store::insert_invoice`]).
pub struct NewInvoice<'a> {
    pub invoice: &'a InvoiceRecord,
    pub events: &'a [NewEvent],
    pub queue_at: Option<&'a str>,
    pub notices: &'a [Notice],
    /// The conversion the document came from: marked sent, linked to the invoice.
    pub conversion_id: Option<&'a str>,
    pub completion: KeyCompletion<'a>,
}

impl Store {
    /// Invoices of the tenant with this number and issue date (few: the same number is
    /// normally sent once), newest first, for matching by business identity.
    pub async fn invoices_by_number(
        &self,
        tenant_id: &str,
        document_id: &str,
        issue_date: &str,
    ) -> Result<Vec<InvoiceRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {INVOICE_COLUMNS} FROM invoices \
             WHERE tenant_id = $1 AND document_id = $2 AND issue_date = $3 \
             ORDER BY created_at DESC LIMIT 50"
        ))
        .bind(tenant_id)
        .bind(document_id)
        .bind(issue_date)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .iter()
            .map(InvoiceRecord::from_row)
            .collect::<Result<_, _>>()?)
    }

    pub async fn insert_connection(&self, c: &ConnectionRecord) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO connections ({CONNECTION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        ))
        .bind(&c.id)
        .bind(&c.tenant_id)
        .bind(&c.partner)
        .bind(&c.name)
        .bind(&c.status)
        .bind(&c.created_at)
        .bind(c.activated_at.as_deref())
        .bind(c.settings.as_deref())
        .bind(c.callback_secret.as_deref())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    pub async fn connection(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<Option<ConnectionRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {CONNECTION_COLUMNS} FROM connections WHERE tenant_id = $1 AND id = $2"
        ))
        .bind(tenant_id)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(ConnectionRecord::from_row).transpose()?)
    }

    /// A page of the tenant's connections, newest first: at most `limit`, older than `before`.
    pub async fn connections(
        &self,
        tenant_id: &str,
        before: Option<&str>,
        limit: i64,
    ) -> Result<Vec<ConnectionRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {CONNECTION_COLUMNS} FROM connections WHERE tenant_id = $1 AND id < $2 \
             ORDER BY id DESC LIMIT $3"
        ))
        .bind(tenant_id)
        .bind(before.unwrap_or("~"))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .iter()
            .map(ConnectionRecord::from_row)
            .collect::<Result<_, _>>()?)
    }

    /// Activate a pending connection; false when it was not pending.
    pub async fn activate_connection(
        &self,
        tenant_id: &str,
        id: &str,
        at: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE connections SET status = 'active', activated_at = $3 \
             WHERE tenant_id = $1 AND id = $2 AND status = 'pending'",
        )
        .bind(tenant_id)
        .bind(id)
        .bind(at)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// A connection by id alone (partner callbacks, authenticated by signature).
    pub async fn connection_by_id(&self, id: &str) -> Result<Option<ConnectionRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {CONNECTION_COLUMNS} FROM connections WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(ConnectionRecord::from_row).transpose()?)
    }

    /// The invoice a partner's transmission id names, on one connection.
    pub async fn invoice_by_transmission(
        &self,
        connection_id: &str,
        transmission_id: &str,
    ) -> Result<Option<InvoiceRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {INVOICE_COLUMNS} FROM invoices WHERE connection_id = $1 AND transmission_id = $2"
        ))
        .bind(connection_id)
        .bind(transmission_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(InvoiceRecord::from_row).transpose()?)
    }

    /// The tenant's first active connection.
    pub async fn active_connection(
        &self,
        tenant_id: &str,
    ) -> Result<Option<ConnectionRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {CONNECTION_COLUMNS} FROM connections WHERE tenant_id = $1 \
             AND status = 'active' ORDER BY activated_at LIMIT 1"
        ))
        .bind(tenant_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(ConnectionRecord::from_row).transpose()?)
    }

    /// Claim `key` for a request whose hash is `request_hash`, under the new `token`. A
    /// `running` claim older than `stale_before` (its server died mid-request) is taken
    /// over: the token changes, so the old holder, should it still be alive, can no longer
    /// complete the key or store an invoice for it.
    #[allow(clippy::too_many_arguments)]
    pub async fn claim_idempotency_key(
        &self,
        tenant_id: &str,
        key: &str,
        request_hash: &str,
        token: &str,
        now: &str,
        expires_at: &str,
        stale_before: &str,
    ) -> Result<IdempotencyClaim, StoreError> {
        // Expired keys are forgotten first, so a key may be used again after its period.
        sqlx::query(
            "DELETE FROM idempotency_keys WHERE tenant_id = $1 AND idem_key = $2 AND expires_at < $3",
        )
        .bind(tenant_id)
        .bind(key)
        .bind(now)
        .execute(self.pool())
        .await?;
        let inserted = sqlx::query(
            "INSERT INTO idempotency_keys (tenant_id, idem_key, request_hash, state, created_at, expires_at, claim_token) \
             VALUES ($1, $2, $3, 'running', $4, $5, $6) ON CONFLICT (tenant_id, idem_key) DO NOTHING",
        )
        .bind(tenant_id)
        .bind(key)
        .bind(request_hash)
        .bind(now)
        .bind(expires_at)
        .bind(token)
        .execute(self.pool())
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(IdempotencyClaim::New {
                token: token.to_string(),
            });
        }
        let row = sqlx::query(
            "SELECT request_hash, state, status_code, content_type, response, created_at \
             FROM idempotency_keys WHERE tenant_id = $1 AND idem_key = $2",
        )
        .bind(tenant_id)
        .bind(key)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else {
            // Deleted between our insert and select (expired just now): try once more.
            return Ok(IdempotencyClaim::Running);
        };
        if text(&row, "request_hash")? != request_hash {
            return Ok(IdempotencyClaim::Mismatch);
        }
        if text(&row, "state")? == "completed" {
            return Ok(IdempotencyClaim::Completed {
                status: u16::try_from(row.try_get::<i64, _>("status_code")?).unwrap_or(500),
                content_type: opt_text(&row, "content_type")?.unwrap_or_default(),
                body: opt_text(&row, "response")?.unwrap_or_default(),
            });
        }
        let taken = sqlx::query(
            "UPDATE idempotency_keys SET created_at = $3, claim_token = $5 \
             WHERE tenant_id = $1 AND idem_key = $2 AND state = 'running' AND created_at < $4",
        )
        .bind(tenant_id)
        .bind(key)
        .bind(now)
        .bind(stale_before)
        .bind(token)
        .execute(self.pool())
        .await?;
        Ok(if taken.rows_affected() == 1 {
            IdempotencyClaim::New {
                token: token.to_string(),
            }
        } else {
            IdempotencyClaim::Running
        })
    }

    /// Give a claimed key up (the request failed before it changed anything), so a retry
    /// with the same key runs again. Only the current holder (`token`) can.
    pub async fn release_idempotency_key(
        &self,
        tenant_id: &str,
        key: &str,
        token: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "DELETE FROM idempotency_keys \
             WHERE tenant_id = $1 AND idem_key = $2 AND state = 'running' AND claim_token = $3",
        )
        .bind(tenant_id)
        .bind(key)
        .bind(token)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Store a new invoice with everything that belongs to it — all or nothing: its first
    /// events, its outbox row (when `queue_at` is given), its webhook notices, the
    /// conversion it came from, and the completion of the idempotency key that asked for
    /// it. The key is completed only if `completion.token` still holds it; otherwise
    /// nothing is stored and [`StoreError::ClaimLost`] is returned.
    pub async fn insert_invoice(&self, new: NewInvoice<'_>) -> Result<(), StoreError> {
        let NewInvoice {
            invoice: inv,
            events,
            queue_at,
            notices,
            conversion_id,
            completion,
        } = new;
        let mut tx = self.pool().begin().await?;
        let completed = sqlx::query(
            "UPDATE idempotency_keys SET state = 'completed', status_code = $3, content_type = $4, response = $5 \
             WHERE tenant_id = $1 AND idem_key = $2 AND state = 'running' AND claim_token = $6",
        )
        .bind(&inv.tenant_id)
        .bind(completion.key)
        .bind(i64::from(completion.status))
        .bind(completion.content_type)
        .bind(completion.body)
        .bind(completion.token)
        .execute(&mut *tx)
        .await?;
        if completed.rows_affected() != 1 {
            tx.rollback().await?;
            return Err(StoreError::ClaimLost);
        }
        sqlx::query(&format!(
            "INSERT INTO invoices ({INVOICE_COLUMNS}) VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)"
        ))
        .bind(&inv.id)
        .bind(&inv.tenant_id)
        .bind(inv.connection_id.as_deref())
        .bind(&inv.status)
        .bind(inv.document_id.as_deref())
        .bind(inv.buyer_endpoint.as_deref())
        .bind(&inv.sha256)
        .bind(&inv.payload)
        .bind(&inv.validation_id)
        .bind(&inv.profile)
        .bind(&inv.rules_version)
        .bind(&inv.summary)
        .bind(&inv.findings)
        .bind(inv.scenario.as_deref())
        .bind(inv.transmission_id.as_deref())
        .bind(inv.resubmission_of.as_deref())
        .bind(&inv.environment)
        .bind(&inv.created_at)
        .bind(&inv.updated_at)
        .bind(inv.issue_date.as_deref())
        .bind(&inv.seller_ids)
        .execute(&mut *tx)
        .await?;
        append_events(&mut tx, &inv.id, events).await?;
        if let Some(conversion) = conversion_id {
            super::conversions::mark_sent(
                &mut *tx,
                &inv.tenant_id,
                conversion,
                &inv.id,
                &inv.created_at,
            )
            .await?;
        }
        if let Some(at) = queue_at {
            sqlx::query(
                "INSERT INTO outbox (invoice_id, attempts, next_attempt_at) VALUES ($1, 0, $2)",
            )
            .bind(&inv.id)
            .bind(at)
            .execute(&mut *tx)
            .await?;
        }
        queue_notices(&mut tx, &inv.tenant_id, &inv.id, notices).await?;
        tx.commit().await?;
        if !notices.is_empty() {
            crate::webhooks::worker::wake();
        }
        Ok(())
    }

    pub async fn invoice(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<Option<InvoiceRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {INVOICE_COLUMNS} FROM invoices WHERE tenant_id = $1 AND id = $2"
        ))
        .bind(tenant_id)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(InvoiceRecord::from_row).transpose()?)
    }

    /// A page of the tenant's invoices, newest first, filtered. The document and its
    /// findings are not read (a list shows summaries): `payload` and `findings` are empty.
    pub async fn invoices(
        &self,
        filter: &InvoiceFilter<'_>,
    ) -> Result<Vec<InvoiceRecord>, StoreError> {
        // Only the filters given become conditions, each with its own parameter: one plan
        // per combination, and no `$n IS NULL` (PostgreSQL cannot type an unused NULL).
        let mut conditions = vec!["tenant_id = $1".to_string(), "id < $2".to_string()];
        let mut values: Vec<&str> = vec![filter.tenant_id, filter.before.unwrap_or("~")];
        let optional = [
            ("status = ", filter.status),
            ("document_id = ", filter.document_id),
            ("buyer_endpoint = ", filter.counterparty),
            ("issue_date >= ", filter.issued_from),
            ("issue_date <= ", filter.issued_to),
            ("updated_at >= ", filter.updated_since),
        ];
        for (condition, value) in optional {
            if let Some(v) = value {
                values.push(v);
                conditions.push(format!("{condition}${}", values.len()));
            }
        }
        let sql = format!(
            "SELECT {INVOICE_LIST_COLUMNS} FROM invoices WHERE {} ORDER BY id DESC LIMIT ${}",
            conditions.join(" AND "),
            values.len() + 1
        );
        let mut query = sqlx::query(&sql);
        for v in values {
            query = query.bind(v);
        }
        let rows = query.bind(filter.limit).fetch_all(self.pool()).await?;
        Ok(rows
            .iter()
            .map(InvoiceRecord::from_row)
            .collect::<Result<_, _>>()?)
    }

    /// The invoices that name `id` as the one they correct (`resubmitted_as`).
    pub async fn resubmissions(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query(RESUBMISSIONS_SQL)
            .bind(tenant_id)
            .bind(id)
            .fetch_all(self.pool())
            .await?;
        Ok(rows
            .iter()
            .map(|r| text(r, "id"))
            .collect::<Result<_, _>>()?)
    }

    /// An invoice by id alone (the delivery worker).
    pub async fn invoice_by_id(&self, id: &str) -> Result<Option<InvoiceRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {INVOICE_COLUMNS} FROM invoices WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(InvoiceRecord::from_row).transpose()?)
    }

    /// Invoices of a tenant with this document hash (duplicate detection, tests).
    pub async fn invoice_count(&self, tenant_id: &str) -> Result<i64, StoreError> {
        let row = sqlx::query("SELECT COUNT(*) AS n FROM invoices WHERE tenant_id = $1")
            .bind(tenant_id)
            .fetch_one(self.pool())
            .await?;
        Ok(row.try_get::<i64, _>("n")?)
    }

    pub async fn invoice_events(&self, invoice_id: &str) -> Result<Vec<EventRecord>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, at, source, code, status, meaning, correlation_id, detail, prev_hash, hash \
             FROM invoice_events WHERE invoice_id = $1 ORDER BY seq",
        )
        .bind(invoice_id)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(EventRecord {
                    seq: r.try_get::<i64, _>("seq")?,
                    at: text(r, "at")?,
                    source: text(r, "source")?,
                    code: text(r, "code")?,
                    status: opt_text(r, "status")?,
                    meaning: text(r, "meaning")?,
                    correlation_id: text(r, "correlation_id")?,
                    detail: opt_text(r, "detail")?,
                    prev_hash: text(r, "prev_hash")?,
                    hash: text(r, "hash")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StoreError::from)
    }

    /// Claim the next due outbox entry until `lease_until`; its invoice id. A claim is a
    /// compare-and-set on the row, so two workers (two instances) never hold one entry.
    pub async fn claim_outbox(
        &self,
        now: &str,
        lease_until: &str,
    ) -> Result<Option<String>, StoreError> {
        let candidates = sqlx::query(
            "SELECT invoice_id FROM outbox WHERE done_at IS NULL AND next_attempt_at <= $1 \
             AND (claimed_until IS NULL OR claimed_until < $1) ORDER BY next_attempt_at LIMIT 8",
        )
        .bind(now)
        .fetch_all(self.pool())
        .await?;
        for row in candidates {
            let id = text(&row, "invoice_id")?;
            let claimed = sqlx::query(
                "UPDATE outbox SET claimed_until = $2, attempts = attempts + 1 \
                 WHERE invoice_id = $1 AND done_at IS NULL \
                 AND (claimed_until IS NULL OR claimed_until < $3)",
            )
            .bind(&id)
            .bind(lease_until)
            .bind(now)
            .execute(self.pool())
            .await?;
            if claimed.rows_affected() == 1 {
                return Ok(Some(id));
            }
        }
        Ok(None)
    }

    /// Delivered invoices with no further event since `cutoff` and no timeout recorded yet.
    pub async fn overdue_deliveries(
        &self,
        cutoff: &str,
        limit: i64,
    ) -> Result<Vec<InvoiceRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {INVOICE_COLUMNS} FROM invoices WHERE status = 'delivered' AND updated_at < $1 \
             AND NOT EXISTS (SELECT 1 FROM invoice_events e \
                             WHERE e.invoice_id = invoices.id AND e.code = 'response_timeout') \
             ORDER BY updated_at LIMIT $2"
        ))
        .bind(cutoff)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .iter()
            .map(InvoiceRecord::from_row)
            .collect::<Result<_, _>>()?)
    }

    /// Append events, the status they lead to (if any) and their webhook notices, in one
    /// transaction.
    pub async fn append_invoice_events(
        &self,
        tenant_id: &str,
        invoice_id: &str,
        status: Option<&str>,
        events: &[NewEvent],
        notices: &[Notice],
    ) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        // Write first: SQLite takes its write lock at once (no failed lock upgrade later).
        sqlx::query(
            "UPDATE invoices SET status = COALESCE($2, status), updated_at = $3 WHERE id = $1",
        )
        .bind(invoice_id)
        .bind(status)
        .bind(crate::clock::now())
        .execute(&mut *tx)
        .await?;
        append_events(&mut tx, invoice_id, events).await?;
        queue_notices(&mut tx, tenant_id, invoice_id, notices).await?;
        tx.commit().await?;
        if !notices.is_empty() {
            crate::webhooks::worker::wake();
        }
        Ok(())
    }

    /// Attempts made so far for an outbox entry.
    pub async fn outbox_attempts(&self, invoice_id: &str) -> Result<i64, StoreError> {
        let row = sqlx::query("SELECT attempts FROM outbox WHERE invoice_id = $1")
            .bind(invoice_id)
            .fetch_one(self.pool())
            .await?;
        Ok(row.try_get::<i64, _>("attempts")?)
    }

    /// Record the outcome of a delivery attempt: new status, events, transmission id, and
    /// the outbox entry done (or rescheduled at `retry_at`) — one transaction.
    #[allow(clippy::too_many_arguments)]
    pub async fn record_delivery(
        &self,
        tenant_id: &str,
        invoice_id: &str,
        status: &str,
        transmission_id: Option<&str>,
        events: &[NewEvent],
        retry_at: Option<(&str, &str)>,
        now: &str,
        notices: &[Notice],
        later: &[ScheduledEvent],
    ) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query(
            "UPDATE invoices SET status = $2, transmission_id = COALESCE($3, transmission_id), updated_at = $4 \
             WHERE id = $1",
        )
        .bind(invoice_id)
        .bind(status)
        .bind(transmission_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        append_events(&mut tx, invoice_id, events).await?;
        match retry_at {
            Some((at, error)) => {
                sqlx::query(
                    "UPDATE outbox SET next_attempt_at = $2, claimed_until = NULL, last_error = $3 \
                     WHERE invoice_id = $1",
                )
                .bind(invoice_id)
                .bind(at)
                .bind(error)
                .execute(&mut *tx)
                .await?;
            }
            None => {
                sqlx::query(
                    "UPDATE outbox SET done_at = $2, claimed_until = NULL WHERE invoice_id = $1",
                )
                .bind(invoice_id)
                .bind(now)
                .execute(&mut *tx)
                .await?;
            }
        }
        for (seq, e) in later.iter().enumerate() {
            sqlx::query(
                "INSERT INTO partner_events_due (invoice_id, seq, due_at, source, kind, code, reason) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(invoice_id)
            .bind(seq as i64)
            .bind(&e.due_at)
            .bind(&e.source)
            .bind(&e.kind)
            .bind(&e.code)
            .bind(e.reason.as_deref())
            .execute(&mut *tx)
            .await?;
        }
        queue_notices(&mut tx, tenant_id, invoice_id, notices).await?;
        tx.commit().await?;
        if !notices.is_empty() {
            crate::webhooks::worker::wake();
        }
        Ok(())
    }

    /// Claim up to `limit` scheduled partner events due at `now` until `lease`: events
    /// claimed by a crashed worker come back when their lease ends.
    pub async fn claim_due_partner_events(
        &self,
        now: &str,
        lease: &str,
        limit: i64,
    ) -> Result<Vec<ScheduledEvent>, StoreError> {
        let rows = sqlx::query(
            "SELECT invoice_id, seq, due_at, source, kind, code, reason FROM partner_events_due \
             WHERE due_at <= $1 AND (claimed_until IS NULL OR claimed_until < $1) \
             ORDER BY due_at, invoice_id, seq LIMIT $2",
        )
        .bind(now)
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        let mut claimed = Vec::new();
        for row in rows {
            let e = ScheduledEvent {
                invoice_id: text(&row, "invoice_id")?,
                seq: row.try_get::<i64, _>("seq")?,
                due_at: text(&row, "due_at")?,
                source: text(&row, "source")?,
                kind: text(&row, "kind")?,
                code: text(&row, "code")?,
                reason: opt_text(&row, "reason")?,
            };
            // Only one worker wins a row: the update sees the claim of a concurrent one.
            let won = sqlx::query(
                "UPDATE partner_events_due SET claimed_until = $1 WHERE invoice_id = $2 \
                 AND seq = $3 AND (claimed_until IS NULL OR claimed_until < $4)",
            )
            .bind(lease)
            .bind(&e.invoice_id)
            .bind(e.seq)
            .bind(now)
            .execute(self.pool())
            .await?
            .rows_affected()
                == 1;
            if won {
                claimed.push(e);
            }
        }
        Ok(claimed)
    }

    /// Remove a scheduled partner event once applied.
    pub async fn drop_partner_event(&self, invoice_id: &str, seq: i64) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM partner_events_due WHERE invoice_id = $1 AND seq = $2")
            .bind(invoice_id)
            .bind(seq)
            .execute(self.pool())
            .await?;
        Ok(())
    }
}

/// A response event a partner will report later (see migration 0007).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduledEvent {
    /// Set when read back; ignored when recording a delivery.
    pub invoice_id: String,
    pub seq: i64,
    pub due_at: String,
    pub source: String,
    pub kind: String,
    pub code: String,
    pub reason: Option<String>,
}

/// Append events after the invoice's last one, continuing the hash chain.
async fn append_events(
    tx: &mut Transaction<'static, Any>,
    invoice_id: &str,
    events: &[NewEvent],
) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    let last = sqlx::query(
        "SELECT seq, hash FROM invoice_events WHERE invoice_id = $1 ORDER BY seq DESC LIMIT 1",
    )
    .bind(invoice_id)
    .fetch_optional(&mut **tx)
    .await?;
    let (mut seq, mut prev) = match last {
        Some(r) => (r.try_get::<i64, _>("seq")?, text(&r, "hash")?),
        None => (0, GENESIS_HASH.to_string()),
    };
    for e in events {
        seq += 1;
        let hash = entry_hash(&prev, seq, e);
        sqlx::query(
            "INSERT INTO invoice_events (invoice_id, seq, at, source, code, status, meaning, \
             correlation_id, detail, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(invoice_id)
        .bind(seq)
        .bind(&e.at)
        .bind(&e.source)
        .bind(&e.code)
        .bind(e.status.as_deref())
        .bind(&e.meaning)
        .bind(&e.correlation_id)
        .bind(e.detail.as_deref())
        .bind(&prev)
        .bind(&hash)
        .execute(&mut **tx)
        .await?;
        prev = hash;
    }
    Ok(())
}
