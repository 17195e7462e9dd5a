-- Every list pages newest first by id (ids are time-ordered) with `?before=`: conversions,
-- optionally of one status (the review queue), and the small per-tenant lists.
CREATE INDEX conversions_tenant_id ON conversions (tenant_id, id);
CREATE INDEX conversions_tenant_status_id ON conversions (tenant_id, status, id);
CREATE INDEX api_keys_tenant_id ON api_keys (tenant_id, id);
CREATE INDEX connections_tenant_id ON connections (tenant_id, id);
CREATE INDEX webhook_endpoints_tenant_id ON webhook_endpoints (tenant_id, id);
