//! The delivery worker: drains the outbox. Each entry is claimed with a lease (several
//! instances may run workers; an expired lease of a crashed one is taken over), handed to
//! the connection's partner with the invoice id as idempotency key, and its outcome —
//! status, events, the outbox entry done or rescheduled — written in one transaction.
//! An invoice accepted into the outbox is therefore delivered exactly once: a crash
//! before the write repeats the submission, which the partner recognises by its key.

use std::sync::Weak;
use std::time::Duration;

use chrono::{SecondsFormat, Utc};

use super::partner::{
    HttpPartner, HttpSettings, Partner, PartnerError, PartnerEventBody, SandboxPartner,
};
use super::states::Status;
use super::timeline;
use crate::store::{
    ConnectionRecord, InvoiceRecord, NewEvent, Notice, ScheduledEvent, Store, StoreError,
};

/// Delays before the 2nd, 3rd ... attempt; after the last, the invoice fails.
const RETRY_DELAYS_SECS: &[i64] = &[5, 30, 120, 600, 1800, 3600];
/// How long a claim holds before another worker may take the entry over.
const LEASE_SECS: i64 = 60;

pub struct Worker {
    store: Store,
    sandbox: SandboxPartner,
    http: reqwest::Client,
    response_timeout_secs: i64,
    /// How long after delivery the sandbox partner's later events (the simulated buyer's
    /// Invoice Response) are reported.
    later_after_ms: i64,
}

fn at(offset_secs: i64) -> String {
    (Utc::now() + chrono::Duration::seconds(offset_secs))
        .to_rfc3339_opts(SecondsFormat::Micros, true)
}

impl Worker {
    pub fn new(store: Store, config: &super::config::SendingConfig) -> Worker {
        let response_timeout_secs = config.response_timeout_secs;
        // A partner that does not answer within 30 s is retried later; the idempotency key
        // makes the retry safe.
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .connect_timeout(Duration::from_secs(5))
            .build()
            .unwrap_or_default();
        Worker {
            store,
            sandbox: SandboxPartner::default(),
            http,
            response_timeout_secs: i64::try_from(response_timeout_secs).unwrap_or(i64::MAX / 2),
            later_after_ms: i64::try_from(config.sandbox_response_delay_ms).unwrap_or(i64::MAX / 2),
        }
    }

    /// The partner adapter for a connection; None when its settings are unusable.
    fn partner_for(&self, c: &ConnectionRecord) -> Option<Partner<'_>> {
        match c.partner.as_str() {
            "sandbox" => Some(Partner::Sandbox(&self.sandbox)),
            "http" => {
                let settings: HttpSettings = serde_json::from_str(c.settings.as_deref()?).ok()?;
                Some(Partner::Http(HttpPartner {
                    client: &self.http,
                    settings,
                }))
            }
            _ => None,
        }
    }

    /// Report delivered invoices that got no further response within the timeout: an ACK
    /// is not acceptance, so someone has to follow up.
    pub async fn sweep_timeouts(&self) -> Result<usize, StoreError> {
        let overdue = self
            .store
            .overdue_deliveries(&at(-self.response_timeout_secs), 100)
            .await?;
        for invoice in &overdue {
            let hours = self.response_timeout_secs as f64 / 3600.0;
            let event = NewEvent {
                at: at(0),
                source: timeline::INVEX.to_string(),
                code: "response_timeout".to_string(),
                status: None,
                meaning: format!(
                    "no response from the receiver within {hours:.1} h of delivery: the invoice \
                     is delivered but not accepted; follow up with the buyer"
                ),
                correlation_id: invoice.id.clone(),
                detail: None,
            };
            let notice = super::notice(
                invoice,
                crate::webhooks::events::EventType::InvoiceAttentionNeeded,
                &event,
            );
            self.store
                .append_invoice_events(&invoice.tenant_id, &invoice.id, None, &[event], &[notice])
                .await?;
        }
        Ok(overdue.len())
    }

    /// Deliver every due entry; how many were handled.
    pub async fn drain(&self) -> Result<usize, StoreError> {
        let mut handled = 0;
        while let Some(id) = self.store.claim_outbox(&at(0), &at(LEASE_SECS)).await? {
            self.deliver(&id).await?;
            handled += 1;
        }
        Ok(handled)
    }

    async fn deliver(&self, invoice_id: &str) -> Result<(), StoreError> {
        let Some(invoice) = self.store.invoice_by_id(invoice_id).await? else {
            return Ok(());
        };
        let connection = match &invoice.connection_id {
            Some(c) => self.store.connection(&invoice.tenant_id, c).await?,
            None => None,
        };
        let partner = connection.as_ref().and_then(|c| self.partner_for(c));
        let Some(partner) = partner else {
            let why = "no delivery partner is available for the invoice's connection";
            return self.fail(&invoice, Vec::new(), why.into()).await;
        };
        let correlation = invoice_id;
        let mut events = vec![timeline::own(
            "sending",
            Status::Sending,
            format!("handed to the delivery partner {}", partner.name()),
            correlation,
        )];
        match partner.submit(&invoice, &invoice.id).await {
            Ok(submitted) => {
                let mut transmitted = timeline::own(
                    "transmitted",
                    Status::Transmitted,
                    format!(
                        "the delivery partner accepted the invoice for transmission (transmission id {})",
                        submitted.transmission_id
                    ),
                    &submitted.transmission_id,
                );
                transmitted.source = partner.name().to_string();
                events.push(transmitted);
                let mut status = advance(Status::Sending, Status::Transmitted, &invoice);
                for (response, reason) in submitted.responses {
                    let (meaning, next) = response.meaning(reason.as_deref());
                    let moved = next.filter(|n| status.can_move_to(*n));
                    if let (Some(n), None) = (next, moved) {
                        tracing::warn!(invoice = %invoice.id, from = status.as_str(), to = n.as_str(),
                            "a partner event asked for an illegal status transition; kept in the timeline, status unchanged");
                    }
                    if let Some(n) = moved {
                        status = n;
                    }
                    events.push(NewEvent {
                        at: at(0),
                        source: partner.name().to_string(),
                        code: response.code(),
                        status: moved.map(|s| s.as_str().to_string()),
                        meaning,
                        correlation_id: submitted.transmission_id.clone(),
                        detail: reason,
                    });
                }
                let notices = notices(&invoice, &events);
                let due = (Utc::now() + chrono::Duration::milliseconds(self.later_after_ms))
                    .to_rfc3339_opts(SecondsFormat::Micros, true);
                let later: Vec<ScheduledEvent> = submitted
                    .later
                    .into_iter()
                    .map(|(response, reason)| {
                        let body = PartnerEventBody::of(response, reason);
                        ScheduledEvent {
                            invoice_id: invoice.id.clone(),
                            seq: 0,
                            due_at: due.clone(),
                            source: partner.name().to_string(),
                            kind: body.kind,
                            code: body.code,
                            reason: body.reason,
                        }
                    })
                    .collect();
                self.store
                    .record_delivery(
                        &invoice.tenant_id,
                        invoice_id,
                        status.as_str(),
                        Some(&submitted.transmission_id),
                        &events,
                        None,
                        &at(0),
                        &notices,
                        &later,
                    )
                    .await
            }
            Err(PartnerError::Retryable(why)) => {
                let attempts = self.store.outbox_attempts(invoice_id).await?;
                let index = usize::try_from(attempts.max(1) - 1).unwrap_or(usize::MAX);
                match RETRY_DELAYS_SECS.get(index) {
                    Some(delay) => {
                        events.push(timeline::own(
                            "retry_scheduled",
                            Status::Queued,
                            format!("the delivery partner cannot take it now ({why}); retrying in {delay} s"),
                            correlation,
                        ));
                        self.store
                            .record_delivery(
                                &invoice.tenant_id,
                                invoice_id,
                                Status::Queued.as_str(),
                                None,
                                &events,
                                Some((&at(*delay), &why)),
                                &at(0),
                                &[],
                                &[],
                            )
                            .await
                    }
                    None => {
                        self.fail(
                            &invoice,
                            events,
                            format!("delivery failed after {attempts} attempts: {why}"),
                        )
                        .await
                    }
                }
            }
            Err(PartnerError::Final(why)) => {
                self.fail(
                    &invoice,
                    events,
                    format!("the delivery partner refused the invoice: {why}"),
                )
                .await
            }
        }
    }

    /// End the delivery of `invoice_id` as failed, after `events`.
    async fn fail(
        &self,
        invoice: &InvoiceRecord,
        mut events: Vec<NewEvent>,
        why: String,
    ) -> Result<(), StoreError> {
        events.push(timeline::own("failed", Status::Failed, why, &invoice.id));
        let notices = notices(invoice, &events);
        self.store
            .record_delivery(
                &invoice.tenant_id,
                &invoice.id,
                Status::Failed.as_str(),
                None,
                &events,
                None,
                &at(0),
                &notices,
                &[],
            )
            .await
    }

    /// Apply the partner events that have come due (the sandbox's simulated buyer); how
    /// many. Each is claimed under a lease and removed once applied; applying one twice
    /// (after a crash) changes nothing, as with a repeated callback.
    pub async fn apply_due_events(&self) -> Result<usize, StoreError> {
        let due = self
            .store
            .claim_due_partner_events(&at(0), &at(LEASE_SECS), 100)
            .await?;
        for e in &due {
            let body = PartnerEventBody {
                kind: e.kind.clone(),
                code: e.code.clone(),
                reason: e.reason.clone(),
            };
            if let (Some(response), Some(invoice)) = (
                body.response(),
                self.store.invoice_by_id(&e.invoice_id).await?,
            ) {
                super::apply_response(&self.store, &invoice, response, body.reason, &e.source)
                    .await?;
            }
            self.store.drop_partner_event(&e.invoice_id, e.seq).await?;
        }
        Ok(due.len())
    }
}

/// The webhook events the status changes among `events` call for.
fn notices(invoice: &InvoiceRecord, events: &[NewEvent]) -> Vec<Notice> {
    events
        .iter()
        .flat_map(|e| super::notices_for(invoice, e))
        .collect()
}

fn advance(from: Status, to: Status, invoice: &InvoiceRecord) -> Status {
    if from.can_move_to(to) {
        to
    } else {
        tracing::warn!(invoice = %invoice.id, from = from.as_str(), to = to.as_str(), "illegal status transition refused");
        from
    }
}

/// Run the worker every `every` (and whenever woken) until it is dropped.
pub async fn run(worker: Weak<Worker>, every: Duration, wake: std::sync::Arc<tokio::sync::Notify>) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = wake.notified() => {}
        }
        let Some(w) = worker.upgrade() else { return };
        if let Err(e) = w.drain().await {
            tracing::warn!(error = %e, "the delivery worker could not drain the outbox; retrying");
        }
        if let Err(e) = w.apply_due_events().await {
            tracing::warn!(error = %e, "the delivery worker could not apply due partner events");
        }
        if let Err(e) = w.sweep_timeouts().await {
            tracing::warn!(error = %e, "the delivery worker could not report response timeouts");
        }
    }
}
