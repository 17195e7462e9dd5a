//! Conversions and their review trail.

use sqlx::any::AnyRow;
use sqlx::Row;

use super::{opt_text, text, Store, StoreError};

/// A conversion as stored. JSON columns stay text here; `convert::review` owns their shape.
#[derive(Clone, Debug, PartialEq)]
pub struct ConversionRecord {
    pub id: String,
    pub tenant_id: String,
    pub batch_id: String,
    pub position: i64,
    pub status: String,
    pub file_name: Option<String>,
    pub input_format: String,
    pub input_sha256: String,
    pub document_id: Option<String>,
    pub draft: String,
    pub xml: String,
    pub xml_sha256: String,
    pub report: String,
    pub confidence: f64,
    pub reasons: String,
    pub cross_checks: String,
    pub changes: String,
    pub needed_review: bool,
    pub approved_by: Option<String>,
    pub approved_at: Option<String>,
    pub review_note: Option<String>,
    pub invoice_id: Option<String>,
    pub environment: String,
    pub created_at: String,
    pub updated_at: String,
    /// BT-2 of the generated document, for matching by business identity.
    pub issue_date: Option<String>,
    /// The seller's identifiers, normalised, space-separated (see `sending::document`).
    pub seller_ids: String,
}

const COLUMNS: &str = "id, tenant_id, batch_id, position, status, file_name, input_format, \
     input_sha256, document_id, draft, xml, xml_sha256, report, confidence, reasons, \
     cross_checks, changes, needed_review, approved_by, approved_at, review_note, invoice_id, \
     environment, created_at, updated_at, issue_date, seller_ids";

/// Columns a list answers (the XML and report stay out of lists).
const SUMMARY_COLUMNS: &str = "id, tenant_id, batch_id, position, status, file_name, \
     input_format, input_sha256, document_id, '' AS draft, '' AS xml, xml_sha256, '' AS report, \
     confidence, reasons, '[]' AS cross_checks, '[]' AS changes, needed_review, approved_by, \
     approved_at, review_note, invoice_id, environment, created_at, updated_at, issue_date, \
     seller_ids";

impl ConversionRecord {
    fn from_row(row: &AnyRow) -> Result<ConversionRecord, sqlx::Error> {
        Ok(ConversionRecord {
            id: text(row, "id")?,
            tenant_id: text(row, "tenant_id")?,
            batch_id: text(row, "batch_id")?,
            position: row.try_get::<i64, _>("position")?,
            status: text(row, "status")?,
            file_name: opt_text(row, "file_name")?,
            input_format: text(row, "input_format")?,
            input_sha256: text(row, "input_sha256")?,
            document_id: opt_text(row, "document_id")?,
            draft: text(row, "draft")?,
            xml: text(row, "xml")?,
            xml_sha256: text(row, "xml_sha256")?,
            report: text(row, "report")?,
            confidence: row.try_get::<f64, _>("confidence")?,
            reasons: text(row, "reasons")?,
            cross_checks: text(row, "cross_checks")?,
            changes: text(row, "changes")?,
            needed_review: row.try_get::<i64, _>("needed_review")? != 0,
            approved_by: opt_text(row, "approved_by")?,
            approved_at: opt_text(row, "approved_at")?,
            review_note: opt_text(row, "review_note")?,
            invoice_id: opt_text(row, "invoice_id")?,
            environment: text(row, "environment")?,
            created_at: text(row, "created_at")?,
            updated_at: text(row, "updated_at")?,
            issue_date: opt_text(row, "issue_date")?,
            seller_ids: opt_text(row, "seller_ids")?.unwrap_or_default(),
        })
    }
}

/// A file conversions were read from (see migration 0012).
#[derive(Clone, Debug, PartialEq)]
pub struct InputRecord {
    pub tenant_id: String,
    /// SHA-256 of `content`, lowercase hex (the conversions' `input_sha256`).
    pub sha256: String,
    pub file_name: Option<String>,
    pub format: String,
    pub content: Vec<u8>,
    pub created_at: String,
}

impl Store {
    /// Store the conversions of one upload with the files they were read from, all or
    /// nothing. A file the tenant uploaded before is kept once.
    pub async fn insert_conversions(
        &self,
        records: &[ConversionRecord],
        inputs: &[InputRecord],
    ) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        insert_conversions_in(&mut tx, records, inputs).await?;
        tx.commit().await?;
        Ok(())
    }

    /// The file a conversion of the tenant was read from, by its SHA-256.
    pub async fn conversion_input(
        &self,
        tenant_id: &str,
        sha256: &str,
    ) -> Result<Option<InputRecord>, StoreError> {
        use base64::Engine as _;
        let row = sqlx::query(
            "SELECT tenant_id, sha256, file_name, format, content, created_at \
             FROM conversion_inputs WHERE tenant_id = $1 AND sha256 = $2",
        )
        .bind(tenant_id)
        .bind(sha256)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let content = base64::engine::general_purpose::STANDARD
            .decode(text(&row, "content")?)
            .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
        Ok(Some(InputRecord {
            tenant_id: text(&row, "tenant_id")?,
            sha256: text(&row, "sha256")?,
            file_name: opt_text(&row, "file_name")?,
            format: text(&row, "format")?,
            content,
            created_at: text(&row, "created_at")?,
        }))
    }

    pub async fn conversion(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<Option<ConversionRecord>, StoreError> {
        self.first_conversion("tenant_id = $1 AND id = $2", tenant_id, id)
            .await
    }

    /// The tenant's conversions, newest first, optionally of one status; without the XML,
    /// draft and report (fetch one for those).
    pub async fn conversions(
        &self,
        tenant_id: &str,
        status: Option<&str>,
        batch_id: Option<&str>,
        before: Option<&str>,
        limit: i64,
    ) -> Result<Vec<ConversionRecord>, StoreError> {
        // Ids are time-ordered; "~" sorts after every id. Only the filters given become
        // conditions, each with its own parameter (not `$n = '' OR ...`), so that each form
        // has an index to walk.
        let mut conditions = vec!["tenant_id = $1", "id < $2"];
        let mut values = vec![tenant_id, before.unwrap_or("~")];
        if let Some(status) = status {
            conditions.push("status = $3");
            values.push(status);
        }
        if let Some(batch_id) = batch_id {
            conditions.push(if values.len() == 2 {
                "batch_id = $3"
            } else {
                "batch_id = $4"
            });
            values.push(batch_id);
        }
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM conversions WHERE {} ORDER BY id DESC LIMIT ${}",
            conditions.join(" AND "),
            values.len() + 1
        );
        let mut query = sqlx::query(&sql);
        for value in values {
            query = query.bind(value);
        }
        let rows = query.bind(limit).fetch_all(self.pool()).await?;
        Ok(rows
            .iter()
            .map(ConversionRecord::from_row)
            .collect::<Result<_, _>>()?)
    }

    /// The newest conversion of the tenant that produced exactly this XML.
    pub async fn conversion_by_xml(
        &self,
        tenant_id: &str,
        xml_sha256: &str,
    ) -> Result<Option<ConversionRecord>, StoreError> {
        self.first_conversion("tenant_id = $1 AND xml_sha256 = $2", tenant_id, xml_sha256)
            .await
    }

    /// Conversions of the tenant whose document has this number and issue date, newest
    /// first (the caller compares the sellers).
    pub async fn conversions_by_number(
        &self,
        tenant_id: &str,
        document_id: &str,
        issue_date: &str,
    ) -> Result<Vec<ConversionRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM conversions \
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
            .map(ConversionRecord::from_row)
            .collect::<Result<_, _>>()?)
    }

    /// The newest conversion matching `condition` on two text parameters.
    async fn first_conversion(
        &self,
        condition: &str,
        first: &str,
        second: &str,
    ) -> Result<Option<ConversionRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM conversions WHERE {condition} ORDER BY created_at DESC LIMIT 1"
        ))
        .bind(first)
        .bind(second)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|r| ConversionRecord::from_row(&r)).transpose()?)
    }

    /// Write a reviewed conversion back, only if nobody changed it since it was read
    /// (`expected_updated_at`): two reviewers never overwrite each other silently.
    /// Returns false when the conversion changed in between.
    pub async fn update_conversion(
        &self,
        c: &ConversionRecord,
        expected_updated_at: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE conversions SET status = $1, document_id = $2, draft = $3, xml = $4, \
             xml_sha256 = $5, report = $6, confidence = $7, reasons = $8, cross_checks = $9, \
             changes = $10, approved_by = $11, approved_at = $12, review_note = $13, \
             invoice_id = $14, updated_at = $15, issue_date = $19, seller_ids = $20 \
             WHERE tenant_id = $16 AND id = $17 AND updated_at = $18",
        )
        .bind(&c.status)
        .bind(c.document_id.as_deref())
        .bind(&c.draft)
        .bind(&c.xml)
        .bind(&c.xml_sha256)
        .bind(&c.report)
        .bind(c.confidence)
        .bind(&c.reasons)
        .bind(&c.cross_checks)
        .bind(&c.changes)
        .bind(c.approved_by.as_deref())
        .bind(c.approved_at.as_deref())
        .bind(c.review_note.as_deref())
        .bind(c.invoice_id.as_deref())
        .bind(&c.updated_at)
        .bind(&c.tenant_id)
        .bind(&c.id)
        .bind(expected_updated_at)
        .bind(c.issue_date.as_deref())
        .bind(&c.seller_ids)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }
}

/// Record that a conversion went out as `invoice_id` (the first send wins the link), inside
/// the transaction that stores the invoice.
pub(super) async fn mark_sent<'c, E>(
    executor: E,
    tenant_id: &str,
    id: &str,
    invoice_id: &str,
    at: &str,
) -> Result<(), StoreError>
where
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    sqlx::query(
        "UPDATE conversions SET status = 'sent', invoice_id = $1, updated_at = $2 \
         WHERE tenant_id = $3 AND id = $4 AND invoice_id IS NULL",
    )
    .bind(invoice_id)
    .bind(at)
    .bind(tenant_id)
    .bind(id)
    .execute(executor)
    .await?;
    Ok(())
}

/// Insert conversions and their inputs in `tx` (a batch records them with the document's
/// result, in its transaction).
pub(super) async fn insert_conversions_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    records: &[ConversionRecord],
    inputs: &[InputRecord],
) -> Result<(), StoreError> {
    use base64::Engine as _;
    for i in inputs {
        sqlx::query(
            "INSERT INTO conversion_inputs (tenant_id, sha256, file_name, format, size_bytes, \
                 content, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 ON CONFLICT (tenant_id, sha256) DO NOTHING",
        )
        .bind(&i.tenant_id)
        .bind(&i.sha256)
        .bind(i.file_name.as_deref())
        .bind(&i.format)
        .bind(i.content.len() as i64)
        .bind(base64::engine::general_purpose::STANDARD.encode(&i.content))
        .bind(&i.created_at)
        .execute(&mut **tx)
        .await?;
    }
    for c in records {
        sqlx::query(&format!(
                "INSERT INTO conversions ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
                 $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27)"
            ))
            .bind(&c.id)
            .bind(&c.tenant_id)
            .bind(&c.batch_id)
            .bind(c.position)
            .bind(&c.status)
            .bind(c.file_name.as_deref())
            .bind(&c.input_format)
            .bind(&c.input_sha256)
            .bind(c.document_id.as_deref())
            .bind(&c.draft)
            .bind(&c.xml)
            .bind(&c.xml_sha256)
            .bind(&c.report)
            .bind(c.confidence)
            .bind(&c.reasons)
            .bind(&c.cross_checks)
            .bind(&c.changes)
            .bind(i64::from(c.needed_review))
            .bind(c.approved_by.as_deref())
            .bind(c.approved_at.as_deref())
            .bind(c.review_note.as_deref())
            .bind(c.invoice_id.as_deref())
            .bind(&c.environment)
            .bind(&c.created_at)
            .bind(&c.updated_at)
            .bind(c.issue_date.as_deref())
            .bind(&c.seller_ids)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
