//! API keys as stored: the lookup prefix and the SHA-256 of the key, never the key.

use sqlx::Any;

use super::{opt_text, text, Store, StoreError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRecord {
    pub id: String,
    pub tenant_id: String,
    pub name: String,
    pub role: String,
    pub prefix: String,
    /// Lowercase hex SHA-256 of the whole key.
    pub hash: String,
    pub created_at: String,
    pub revoked_at: Option<String>,
}

const COLUMNS: &str = "id, tenant_id, name, role, prefix, hash, created_at, revoked_at";

impl KeyRecord {
    fn from_row(row: &sqlx::any::AnyRow) -> Result<KeyRecord, sqlx::Error> {
        Ok(KeyRecord {
            id: text(row, "id")?,
            tenant_id: text(row, "tenant_id")?,
            name: text(row, "name")?,
            role: text(row, "role")?,
            prefix: text(row, "prefix")?,
            hash: text(row, "hash")?,
            created_at: text(row, "created_at")?,
            revoked_at: opt_text(row, "revoked_at")?,
        })
    }
}

pub(super) async fn insert_key<'c, E>(executor: E, key: &KeyRecord) -> Result<(), StoreError>
where
    E: sqlx::Executor<'c, Database = Any>,
{
    sqlx::query(
        "INSERT INTO api_keys (id, tenant_id, name, role, prefix, hash, created_at, revoked_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&key.id)
    .bind(&key.tenant_id)
    .bind(&key.name)
    .bind(&key.role)
    .bind(&key.prefix)
    .bind(&key.hash)
    .bind(&key.created_at)
    .bind(key.revoked_at.as_deref())
    .execute(executor)
    .await?;
    Ok(())
}

/// What revoking a key did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RevokeOutcome {
    Now,
    Already,
    NotFound,
    /// Refused: the tenant would be left without an active admin key.
    LastAdmin,
}

impl Store {
    pub async fn insert_key(&self, key: &KeyRecord) -> Result<(), StoreError> {
        insert_key(self.pool(), key).await
    }

    /// The key with this lookup prefix, revoked or not.
    pub async fn key_by_prefix(&self, prefix: &str) -> Result<Option<KeyRecord>, StoreError> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM api_keys WHERE prefix = $1"))
            .bind(prefix)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.as_ref().map(KeyRecord::from_row).transpose()?)
    }

    /// A tenant's keys, oldest first.
    /// A page of the tenant's keys, newest first: at most `limit`, older than `before`.
    pub async fn keys(
        &self,
        tenant_id: &str,
        before: Option<&str>,
        limit: i64,
    ) -> Result<Vec<KeyRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM api_keys WHERE tenant_id = $1 AND id < $2 \
             ORDER BY id DESC LIMIT $3"
        ))
        .bind(tenant_id)
        // Ids are time-ordered; "~" sorts after every id.
        .bind(before.unwrap_or("~"))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .iter()
            .map(KeyRecord::from_row)
            .collect::<Result<_, _>>()?)
    }

    pub async fn key(&self, tenant_id: &str, id: &str) -> Result<Option<KeyRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM api_keys WHERE tenant_id = $1 AND id = $2"
        ))
        .bind(tenant_id)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(KeyRecord::from_row).transpose()?)
    }

    /// Active keys of a role in a tenant.
    pub async fn active_keys_with_role(
        &self,
        tenant_id: &str,
        role: &str,
    ) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM api_keys WHERE tenant_id = $1 AND role = $2 AND revoked_at IS NULL",
        )
        .bind(tenant_id)
        .bind(role)
        .fetch_one(self.pool())
        .await?)
    }

    /// Revoke a key of `tenant_id` (keys of other tenants are "not found"), unless it is the
    /// tenant's last active admin key. The check and the change are one transaction under
    /// the tenant's lock, so concurrent revocations (on any instance) cannot each see another
    /// admin key still active and together leave none.
    pub async fn revoke_key(&self, tenant_id: &str, id: &str) -> Result<RevokeOutcome, StoreError> {
        let admin = crate::auth::Role::Admin.as_str();
        let mut tx = self.tenant_transaction(tenant_id).await?;
        let row = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM api_keys WHERE tenant_id = $1 AND id = $2"
        ))
        .bind(tenant_id)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(key) = row.as_ref().map(KeyRecord::from_row).transpose()? else {
            return Ok(RevokeOutcome::NotFound);
        };
        if key.revoked_at.is_some() {
            return Ok(RevokeOutcome::Already);
        }
        if key.role == admin {
            let admins: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM api_keys \
                 WHERE tenant_id = $1 AND role = $2 AND revoked_at IS NULL",
            )
            .bind(tenant_id)
            .bind(admin)
            .fetch_one(&mut *tx)
            .await?;
            if admins <= 1 {
                return Ok(RevokeOutcome::LastAdmin);
            }
        }
        sqlx::query("UPDATE api_keys SET revoked_at = $1 WHERE tenant_id = $2 AND id = $3")
            .bind(crate::clock::now())
            .bind(tenant_id)
            .bind(id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(RevokeOutcome::Now)
    }
}
