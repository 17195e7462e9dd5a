//! Tenants: every key and every stored result belongs to one.

use super::{text, Store, StoreError};
use crate::clock::now;
use crate::ids::new_id;

/// The tenant created on first start, owner of the bootstrap key.
pub const OPERATOR_TENANT_ID: &str = "ten_operator";

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TenantKind {
    /// Runs the service; its admins may create tenants.
    Operator,
    Customer,
}

impl TenantKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TenantKind::Operator => "operator",
            TenantKind::Customer => "customer",
        }
    }

    fn parse(s: &str) -> TenantKind {
        if s == "operator" {
            TenantKind::Operator
        } else {
            TenantKind::Customer
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Tenant {
    pub id: String,
    pub name: String,
    pub kind: TenantKind,
    pub created_at: String,
}

impl Tenant {
    fn from_row(row: &sqlx::any::AnyRow) -> Result<Tenant, sqlx::Error> {
        Ok(Tenant {
            id: text(row, "id")?,
            name: text(row, "name")?,
            kind: TenantKind::parse(&text(row, "kind")?),
            created_at: text(row, "created_at")?,
        })
    }
}

impl Store {
    pub async fn create_tenant(&self, name: &str) -> Result<Tenant, StoreError> {
        let tenant = Tenant {
            id: new_id("ten"),
            name: name.to_string(),
            kind: TenantKind::Customer,
            created_at: now(),
        };
        sqlx::query("INSERT INTO tenants (id, name, kind, created_at) VALUES ($1, $2, $3, $4)")
            .bind(&tenant.id)
            .bind(&tenant.name)
            .bind(tenant.kind.as_str())
            .bind(&tenant.created_at)
            .execute(self.pool())
            .await?;
        Ok(tenant)
    }

    pub async fn tenant(&self, id: &str) -> Result<Option<Tenant>, StoreError> {
        let row = sqlx::query("SELECT id, name, kind, created_at FROM tenants WHERE id = $1")
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.as_ref().map(Tenant::from_row).transpose()?)
    }

    /// A page of every tenant, newest first: at most `limit`, older than `before`.
    pub async fn tenants(
        &self,
        before: Option<&str>,
        limit: i64,
    ) -> Result<Vec<Tenant>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, name, kind, created_at FROM tenants WHERE id < $1 \
             ORDER BY id DESC LIMIT $2",
        )
        .bind(before.unwrap_or("~"))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .iter()
            .map(Tenant::from_row)
            .collect::<Result<_, _>>()?)
    }

    /// A write transaction that holds the tenant's lock until it ends: what it reads of the
    /// tenant's rows cannot change under it, and two such transactions of one tenant (on any
    /// instance sharing the database) run one after the other. This is what makes a rule
    /// spanning several rows atomic (the last admin key, the endpoint cap): a conditional
    /// statement with a `COUNT(*)` subquery is not, since under PostgreSQL's READ COMMITTED
    /// two transactions each count the other's row as still there.
    ///
    /// PostgreSQL locks the tenant row (`FOR UPDATE`); later statements of the transaction
    /// see everything the previous holder committed. SQLite has one writer at a time and
    /// `BEGIN IMMEDIATE` takes the write lock before the first read (a deferred transaction
    /// would read first and fail to upgrade, or read a snapshot another writer then changes).
    pub(super) async fn tenant_transaction(
        &self,
        tenant_id: &str,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, StoreError> {
        match self.backend() {
            super::Backend::Sqlite => Ok(self.pool().begin_with("BEGIN IMMEDIATE").await?),
            super::Backend::Postgres => {
                let mut tx = self.pool().begin().await?;
                sqlx::query("SELECT id FROM tenants WHERE id = $1 FOR UPDATE")
                    .bind(tenant_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                Ok(tx)
            }
        }
    }

    /// On an empty database, create the operator tenant and its first admin key (`key`,
    /// already hashed) in one transaction. Returns false when the database was not empty
    /// (another instance may have bootstrapped it first: the insert is conflict-safe).
    pub async fn bootstrap(&self, key: &super::KeyRecord) -> Result<bool, StoreError> {
        let mut tx = self.pool().begin().await?;
        let existing: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM tenants")
            .fetch_one(&mut *tx)
            .await?;
        if existing > 0 {
            return Ok(false);
        }
        let created = sqlx::query(
            "INSERT INTO tenants (id, name, kind, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(OPERATOR_TENANT_ID)
        .bind("operator")
        .bind(TenantKind::Operator.as_str())
        .bind(now())
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if created == 0 {
            return Ok(false);
        }
        super::keys::insert_key(&mut *tx, key).await?;
        tx.commit().await?;
        Ok(true)
    }
}
