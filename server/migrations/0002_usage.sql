-- Metered calls per tenant, per calendar month (UTC), per meter (e.g. 'vat_verify').
-- Instances add their counts with an upsert, so several instances can share the table.
CREATE TABLE usage_counters (
    tenant_id  TEXT NOT NULL,
    -- 'YYYY-MM', UTC
    period     TEXT NOT NULL,
    meter      TEXT NOT NULL,
    calls      BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, period, meter)
);
