-- Response events a partner will report later (the sandbox partner simulates the buyer's
-- Invoice Response some time after delivery). Written in the transaction that records the
-- delivery; the delivery worker applies each when due, under a lease, then removes it.
CREATE TABLE partner_events_due (
    invoice_id     TEXT NOT NULL REFERENCES invoices (id),
    seq            BIGINT NOT NULL,
    due_at         TEXT NOT NULL,
    -- the partner's name, as the timeline shows it
    source         TEXT NOT NULL,
    -- MLS | IR, the code and the reason, as a partner callback carries them
    kind           TEXT NOT NULL,
    code           TEXT NOT NULL,
    reason         TEXT,
    claimed_until  TEXT,
    PRIMARY KEY (invoice_id, seq)
);

CREATE INDEX partner_events_due_at ON partner_events_due (due_at);
