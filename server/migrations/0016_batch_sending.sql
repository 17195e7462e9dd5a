-- Batches that send (issue 20). Before a batch in mode `send` is accepted for sending, the
-- identifiers of every document are checked (status `checking`): `checked` holds a
-- document's failed identifiers as a JSON array, `[]` when all passed, NULL while not yet
-- checked. Only a batch none of whose documents failed goes on to send.
ALTER TABLE batch_documents ADD COLUMN checked TEXT;

-- What an SFTP account's deliveries become: batches of this mode (`validate`, `convert`,
-- `send`), against this profile when set (else detected per document).
ALTER TABLE sftp_accounts ADD COLUMN mode TEXT NOT NULL DEFAULT 'validate';
ALTER TABLE sftp_accounts ADD COLUMN profile TEXT;
