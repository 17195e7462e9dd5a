-- Connections to HTTP delivery partners: their endpoint and key (JSON), and the secret the
-- partner signs its status callbacks with.
ALTER TABLE connections ADD COLUMN settings TEXT;
ALTER TABLE connections ADD COLUMN callback_secret TEXT;
CREATE INDEX invoices_transmission ON invoices (connection_id, transmission_id);
