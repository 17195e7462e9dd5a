-- GET /v1/invoices pages a tenant's invoices newest first by id (ids are time-ordered) and
-- filters by status; a resubmission is found from the invoice it corrects.
CREATE INDEX invoices_tenant_id ON invoices (tenant_id, id);
CREATE INDEX invoices_tenant_status ON invoices (tenant_id, status, id);
CREATE INDEX invoices_resubmission ON invoices (tenant_id, resubmission_of);
