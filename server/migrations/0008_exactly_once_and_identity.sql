-- Exactly-once sends: the token of the request that holds an idempotency key. Only that
-- request can complete the key, in the same transaction that stores its invoice, so a
-- request taken over after a crash can never store a second invoice for the key.
ALTER TABLE idempotency_keys ADD COLUMN claim_token TEXT;

-- The business identity of a document (number, issue date, seller identifiers) beside its
-- bytes: a conversion held for review is found however its XML was altered, and a second
-- send of an invoice number is noticed. seller_ids: normalised ids, space-separated.
ALTER TABLE conversions ADD COLUMN issue_date TEXT;
ALTER TABLE conversions ADD COLUMN seller_ids TEXT;
CREATE INDEX conversions_identity ON conversions (tenant_id, document_id, issue_date);

ALTER TABLE invoices ADD COLUMN issue_date TEXT;
ALTER TABLE invoices ADD COLUMN seller_ids TEXT;
CREATE INDEX invoices_identity ON invoices (tenant_id, document_id, issue_date);
