//! Single sign-on: each tenant's OpenID provider and e-mail domains, the sign-ins under way
//! (by the hash of their `state`), and the identities people are known by at providers.

use super::people::{insert_person, PersonRecord, PERSON};
use super::{opt_text, text, Invited, Store, StoreError};

/// A tenant's OpenID provider, as its administrator set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SsoRecord {
    pub tenant_id: String,
    pub issuer: String,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub scopes: String,
    pub role_claim: String,
    /// JSON array of `[claim value, role]` pairs.
    pub role_map: String,
    pub default_role: Option<String>,
    pub required: bool,
    pub updated_at: String,
    pub updated_by: String,
}

/// A sign-in under way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SsoAttempt {
    /// SHA-256 of the `state`, lowercase hex.
    pub hash: String,
    pub tenant_id: String,
    pub nonce: String,
    pub verifier: String,
    pub created_at: String,
    pub expires_at: String,
}

/// What saving a tenant's provider did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SsoSaved {
    Saved,
    /// The domain leads to another tenant already: nothing was saved.
    DomainTaken(String),
}

const SSO: &str = "tenant_id, issuer, client_id, client_secret, scopes, role_claim, role_map, \
                   default_role, required, updated_at, updated_by";

impl SsoRecord {
    fn from_row(row: &sqlx::any::AnyRow) -> Result<SsoRecord, sqlx::Error> {
        use sqlx::Row;
        Ok(SsoRecord {
            tenant_id: text(row, "tenant_id")?,
            issuer: text(row, "issuer")?,
            client_id: text(row, "client_id")?,
            client_secret: opt_text(row, "client_secret")?,
            scopes: text(row, "scopes")?,
            role_claim: text(row, "role_claim")?,
            role_map: text(row, "role_map")?,
            default_role: opt_text(row, "default_role")?,
            required: row.try_get::<i64, _>("required")? != 0,
            updated_at: text(row, "updated_at")?,
            updated_by: text(row, "updated_by")?,
        })
    }
}

fn is_unique_violation(e: &StoreError) -> bool {
    matches!(e, StoreError::Database(sqlx::Error::Database(d)) if d.is_unique_violation())
}

impl Store {
    /// The tenant's provider, if it has one.
    pub async fn sso_settings(&self, tenant_id: &str) -> Result<Option<SsoRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {SSO} FROM tenant_sso WHERE tenant_id = $1"
        ))
        .bind(tenant_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(SsoRecord::from_row).transpose()?)
    }

    /// The e-mail domains that lead to the tenant's provider, sorted.
    pub async fn sso_domains(&self, tenant_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT domain FROM sso_domains WHERE tenant_id = $1 ORDER BY domain",
        )
        .bind(tenant_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// The tenant an e-mail domain leads to.
    pub async fn sso_tenant_of_domain(&self, domain: &str) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar("SELECT tenant_id FROM sso_domains WHERE domain = $1")
                .bind(domain)
                .fetch_optional(self.pool())
                .await?,
        )
    }

    /// Save the tenant's provider and its domains (replacing the ones before), in one
    /// transaction: a domain of another tenant saves nothing.
    pub async fn put_sso_settings(
        &self,
        s: &SsoRecord,
        domains: &[String],
    ) -> Result<SsoSaved, StoreError> {
        let mut tx = self.tenant_transaction(&s.tenant_id).await?;
        sqlx::query("DELETE FROM sso_domains WHERE tenant_id = $1")
            .bind(&s.tenant_id)
            .execute(&mut *tx)
            .await?;
        for d in domains {
            let owner: Option<String> =
                sqlx::query_scalar("SELECT tenant_id FROM sso_domains WHERE domain = $1")
                    .bind(d)
                    .fetch_optional(&mut *tx)
                    .await?;
            if owner.is_some() {
                return Ok(SsoSaved::DomainTaken(d.clone()));
            }
            let inserted =
                sqlx::query("INSERT INTO sso_domains (domain, tenant_id) VALUES ($1, $2)")
                    .bind(d)
                    .bind(&s.tenant_id)
                    .execute(&mut *tx)
                    .await
                    .map_err(StoreError::from);
            match inserted {
                Ok(_) => {}
                // Another tenant took it at the same moment.
                Err(e) if is_unique_violation(&e) => return Ok(SsoSaved::DomainTaken(d.clone())),
                Err(e) => return Err(e),
            }
        }
        sqlx::query("DELETE FROM tenant_sso WHERE tenant_id = $1")
            .bind(&s.tenant_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query(&format!(
            "INSERT INTO tenant_sso ({SSO}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
        ))
        .bind(&s.tenant_id)
        .bind(&s.issuer)
        .bind(&s.client_id)
        .bind(s.client_secret.as_deref())
        .bind(&s.scopes)
        .bind(&s.role_claim)
        .bind(&s.role_map)
        .bind(s.default_role.as_deref())
        .bind(i64::from(s.required))
        .bind(&s.updated_at)
        .bind(&s.updated_by)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(SsoSaved::Saved)
    }

    /// Remove the tenant's provider and its domains (people keep their accounts).
    pub async fn delete_sso_settings(&self, tenant_id: &str) -> Result<(), StoreError> {
        let mut tx = self.tenant_transaction(tenant_id).await?;
        for table in ["sso_domains", "tenant_sso"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE tenant_id = $1"))
                .bind(tenant_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Keep a sign-in under way (and forget those long expired).
    pub async fn insert_sso_attempt(&self, a: &SsoAttempt) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM sso_attempts WHERE expires_at < $1")
            .bind(&a.created_at)
            .execute(self.pool())
            .await?;
        sqlx::query(
            "INSERT INTO sso_attempts (hash, tenant_id, nonce, verifier, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&a.hash)
        .bind(&a.tenant_id)
        .bind(&a.nonce)
        .bind(&a.verifier)
        .bind(&a.created_at)
        .bind(&a.expires_at)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Use a sign-in under way: mark it used if unused and not expired at `now`, and
    /// answer it. Of two uses of one `state`, exactly one gets it.
    pub async fn take_sso_attempt(
        &self,
        hash: &str,
        now: &str,
    ) -> Result<Option<SsoAttempt>, StoreError> {
        let row = sqlx::query(
            "UPDATE sso_attempts SET used_at = $2 \
             WHERE hash = $1 AND used_at IS NULL AND expires_at > $2 \
             RETURNING hash, tenant_id, nonce, verifier, created_at, expires_at",
        )
        .bind(hash)
        .bind(now)
        .fetch_optional(self.pool())
        .await?;
        let Some(row) = row else { return Ok(None) };
        Ok(Some(SsoAttempt {
            hash: text(&row, "hash")?,
            tenant_id: text(&row, "tenant_id")?,
            nonce: text(&row, "nonce")?,
            verifier: text(&row, "verifier")?,
            created_at: text(&row, "created_at")?,
            expires_at: text(&row, "expires_at")?,
        }))
    }

    /// The person known at `issuer` as `subject`.
    pub async fn person_by_identity(
        &self,
        issuer: &str,
        subject: &str,
    ) -> Result<Option<PersonRecord>, StoreError> {
        let columns = PERSON
            .split(", ")
            .map(|c| format!("p.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let row = sqlx::query(&format!(
            "SELECT {columns} FROM people p JOIN person_identities i ON i.person_id = p.id \
             WHERE i.issuer = $1 AND i.subject = $2"
        ))
        .bind(issuer)
        .bind(subject)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(PersonRecord::from_row).transpose()?)
    }

    /// Whether the person is bound to an identity at a provider.
    pub async fn has_identity(&self, person_id: &str) -> Result<bool, StoreError> {
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM person_identities WHERE person_id = $1")
                .bind(person_id)
                .fetch_one(self.pool())
                .await?;
        Ok(n > 0)
    }

    /// The people of a tenant bound to an identity at a provider.
    pub async fn people_with_identity(
        &self,
        tenant_id: &str,
    ) -> Result<std::collections::HashSet<String>, StoreError> {
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT i.person_id FROM person_identities i \
             JOIN people p ON p.id = i.person_id WHERE p.tenant_id = $1",
        )
        .bind(tenant_id)
        .fetch_all(self.pool())
        .await?;
        Ok(ids.into_iter().collect())
    }

    /// Bind an identity to an existing person; false when the identity is bound already.
    pub async fn bind_identity(
        &self,
        person_id: &str,
        issuer: &str,
        subject: &str,
        now: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO person_identities (issuer, subject, person_id, created_at) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(issuer)
        .bind(subject)
        .bind(person_id)
        .bind(now)
        .execute(self.pool())
        .await
        .map_err(StoreError::from);
        match done {
            Ok(_) => Ok(true),
            Err(e) if is_unique_violation(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// A new person (without a password) bound to an identity, in one transaction; an
    /// address or identity already taken stores nothing.
    pub async fn insert_person_with_identity(
        &self,
        person: &PersonRecord,
        issuer: &str,
        subject: &str,
    ) -> Result<Invited, StoreError> {
        let mut tx = self.pool().begin().await?;
        let person_stored = insert_person(&mut *tx, person).await;
        let stored = match person_stored {
            Ok(()) => sqlx::query(
                "INSERT INTO person_identities (issuer, subject, person_id, created_at) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(issuer)
            .bind(subject)
            .bind(&person.id)
            .bind(&person.created_at)
            .execute(&mut *tx)
            .await
            .map(|_| ())
            .map_err(StoreError::from),
            Err(e) => Err(e),
        };
        match stored {
            Ok(()) => {}
            // The transaction is rolled back when dropped.
            Err(e) if is_unique_violation(&e) => return Ok(Invited::EmailTaken),
            Err(e) => return Err(e),
        }
        tx.commit().await?;
        Ok(Invited::Created)
    }
}
