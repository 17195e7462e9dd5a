//! People (console accounts), their one-time links and their sessions. Tokens are stored
//! as SHA-256 hashes, passwords as Argon2id strings; neither is ever stored as given.

use sqlx::Any;

use super::{opt_text, text, Store, StoreError};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersonRecord {
    pub id: String,
    pub tenant_id: String,
    /// Lowercase.
    pub email: String,
    pub role: String,
    /// Argon2id PHC string; `None` until set.
    pub password_hash: Option<String>,
    pub created_at: String,
    pub disabled_at: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkRecord {
    /// SHA-256 of the token, lowercase hex.
    pub hash: String,
    pub person_id: String,
    pub purpose: String,
    pub created_at: String,
    pub expires_at: String,
    pub used_at: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionRecord {
    /// SHA-256 of the cookie's token, lowercase hex.
    pub hash: String,
    pub person_id: String,
    pub tenant_id: String,
    pub csrf: String,
    pub created_at: String,
    pub last_seen_at: String,
    /// The absolute end.
    pub expires_at: String,
    pub revoked_at: Option<String>,
    /// How it was opened: [`SESSION_PASSWORD`], [`SESSION_LINK`] or [`SESSION_SSO`].
    pub method: String,
}

pub const SESSION_PASSWORD: &str = "password";
pub const SESSION_LINK: &str = "link";
pub const SESSION_SSO: &str = "sso";

pub(super) const PERSON: &str =
    "id, tenant_id, email, role, password_hash, created_at, disabled_at";
const LINK: &str = "hash, person_id, purpose, created_at, expires_at, used_at";
const SESSION: &str =
    "hash, person_id, tenant_id, csrf, created_at, last_seen_at, expires_at, revoked_at, method";

impl PersonRecord {
    pub(super) fn from_row(row: &sqlx::any::AnyRow) -> Result<PersonRecord, sqlx::Error> {
        Ok(PersonRecord {
            id: text(row, "id")?,
            tenant_id: text(row, "tenant_id")?,
            email: text(row, "email")?,
            role: text(row, "role")?,
            password_hash: opt_text(row, "password_hash")?,
            created_at: text(row, "created_at")?,
            disabled_at: opt_text(row, "disabled_at")?,
        })
    }
}

impl LinkRecord {
    fn from_row(row: &sqlx::any::AnyRow) -> Result<LinkRecord, sqlx::Error> {
        Ok(LinkRecord {
            hash: text(row, "hash")?,
            person_id: text(row, "person_id")?,
            purpose: text(row, "purpose")?,
            created_at: text(row, "created_at")?,
            expires_at: text(row, "expires_at")?,
            used_at: opt_text(row, "used_at")?,
        })
    }
}

impl SessionRecord {
    fn from_row(row: &sqlx::any::AnyRow) -> Result<SessionRecord, sqlx::Error> {
        Ok(SessionRecord {
            hash: text(row, "hash")?,
            person_id: text(row, "person_id")?,
            tenant_id: text(row, "tenant_id")?,
            csrf: text(row, "csrf")?,
            created_at: text(row, "created_at")?,
            last_seen_at: text(row, "last_seen_at")?,
            expires_at: text(row, "expires_at")?,
            revoked_at: opt_text(row, "revoked_at")?,
            method: text(row, "method")?,
        })
    }
}

pub(super) async fn insert_person<'c, E>(executor: E, p: &PersonRecord) -> Result<(), StoreError>
where
    E: sqlx::Executor<'c, Database = Any>,
{
    sqlx::query(&format!(
        "INSERT INTO people ({PERSON}) VALUES ($1, $2, $3, $4, $5, $6, $7)"
    ))
    .bind(&p.id)
    .bind(&p.tenant_id)
    .bind(&p.email)
    .bind(&p.role)
    .bind(p.password_hash.as_deref())
    .bind(&p.created_at)
    .bind(p.disabled_at.as_deref())
    .execute(executor)
    .await?;
    Ok(())
}

async fn insert_link<'c, E>(executor: E, l: &LinkRecord) -> Result<(), StoreError>
where
    E: sqlx::Executor<'c, Database = Any>,
{
    sqlx::query(&format!(
        "INSERT INTO person_links ({LINK}) VALUES ($1, $2, $3, $4, $5, $6)"
    ))
    .bind(&l.hash)
    .bind(&l.person_id)
    .bind(&l.purpose)
    .bind(&l.created_at)
    .bind(&l.expires_at)
    .bind(l.used_at.as_deref())
    .execute(executor)
    .await?;
    Ok(())
}

/// What inviting a person did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invited {
    /// The person and the link are stored.
    Created,
    /// An account with this e-mail address exists already (in any tenant): nothing stored.
    EmailTaken,
}

impl Store {
    /// Store a person with a one-time link, in one transaction; an e-mail address already
    /// taken stores nothing.
    pub async fn insert_person_with_link(
        &self,
        person: &PersonRecord,
        link: &LinkRecord,
    ) -> Result<Invited, StoreError> {
        let mut tx = self.pool().begin().await?;
        let taken = sqlx::query("SELECT id FROM people WHERE email = $1")
            .bind(&person.email)
            .fetch_optional(&mut *tx)
            .await?;
        if taken.is_some() {
            return Ok(Invited::EmailTaken);
        }
        if let Err(e) = insert_person(&mut *tx, person).await {
            // A concurrent invitation of the same address won the unique index.
            if let StoreError::Database(sqlx::Error::Database(d)) = &e {
                if d.is_unique_violation() {
                    return Ok(Invited::EmailTaken);
                }
            }
            return Err(e);
        }
        insert_link(&mut *tx, link).await?;
        tx.commit().await?;
        Ok(Invited::Created)
    }

    /// A further one-time link for an existing person.
    pub async fn insert_link(&self, link: &LinkRecord) -> Result<(), StoreError> {
        insert_link(self.pool(), link).await
    }

    /// A new one-time link for a person whose unused links stop working at `now`, in one
    /// transaction (the new link is the only one that opens).
    pub async fn replace_links(&self, link: &LinkRecord, now: &str) -> Result<(), StoreError> {
        let mut tx = self.pool().begin().await?;
        sqlx::query(
            "UPDATE person_links SET used_at = $2 WHERE person_id = $1 AND used_at IS NULL",
        )
        .bind(&link.person_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        insert_link(&mut *tx, link).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn person(&self, id: &str) -> Result<Option<PersonRecord>, StoreError> {
        let row = sqlx::query(&format!("SELECT {PERSON} FROM people WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.as_ref().map(PersonRecord::from_row).transpose()?)
    }

    /// The person with this (lowercase) e-mail address.
    pub async fn person_by_email(&self, email: &str) -> Result<Option<PersonRecord>, StoreError> {
        let row = sqlx::query(&format!("SELECT {PERSON} FROM people WHERE email = $1"))
            .bind(email)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.as_ref().map(PersonRecord::from_row).transpose()?)
    }

    /// A tenant's people, oldest first.
    pub async fn people(&self, tenant_id: &str) -> Result<Vec<PersonRecord>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {PERSON} FROM people WHERE tenant_id = $1 ORDER BY id"
        ))
        .bind(tenant_id)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .iter()
            .map(PersonRecord::from_row)
            .collect::<Result<_, _>>()?)
    }

    /// How many people the tenant has (any state).
    pub async fn count_people(&self, tenant_id: &str) -> Result<i64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM people WHERE tenant_id = $1")
            .bind(tenant_id)
            .fetch_one(self.pool())
            .await?;
        Ok(n)
    }

    /// Use a one-time link: mark it used if it is unused and not expired at `now`, and
    /// answer it; a used, expired or unknown link answers `None`. Two concurrent uses of one
    /// link: exactly one gets it.
    pub async fn use_link(&self, hash: &str, now: &str) -> Result<Option<LinkRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "UPDATE person_links SET used_at = $2 \
             WHERE hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING {LINK}"
        ))
        .bind(hash)
        .bind(now)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(LinkRecord::from_row).transpose()?)
    }

    /// An unused, unexpired link, without using it (to show its form).
    pub async fn open_link(&self, hash: &str, now: &str) -> Result<Option<LinkRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {LINK} FROM person_links \
             WHERE hash = $1 AND used_at IS NULL AND expires_at > $2"
        ))
        .bind(hash)
        .bind(now)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(LinkRecord::from_row).transpose()?)
    }

    /// Set a person's password hash and, when given, a new (lowercase) address.
    pub async fn set_credentials(
        &self,
        person_id: &str,
        email: Option<&str>,
        password_hash: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE people SET password_hash = $2, email = COALESCE($3, email) WHERE id = $1",
        )
        .bind(person_id)
        .bind(password_hash)
        .bind(email)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    pub async fn insert_session(&self, s: &SessionRecord) -> Result<(), StoreError> {
        sqlx::query(&format!(
            "INSERT INTO sessions ({SESSION}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
        ))
        .bind(&s.hash)
        .bind(&s.person_id)
        .bind(&s.tenant_id)
        .bind(&s.csrf)
        .bind(&s.created_at)
        .bind(&s.last_seen_at)
        .bind(&s.expires_at)
        .bind(s.revoked_at.as_deref())
        .bind(&s.method)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    pub async fn session(&self, hash: &str) -> Result<Option<SessionRecord>, StoreError> {
        let row = sqlx::query(&format!("SELECT {SESSION} FROM sessions WHERE hash = $1"))
            .bind(hash)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.as_ref().map(SessionRecord::from_row).transpose()?)
    }

    /// Record activity on a session (its idle time starts again).
    pub async fn touch_session(&self, hash: &str, now: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE sessions SET last_seen_at = $2 WHERE hash = $1")
            .bind(hash)
            .bind(now)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// End one session.
    pub async fn revoke_session(&self, hash: &str, now: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE sessions SET revoked_at = $2 WHERE hash = $1 AND revoked_at IS NULL")
            .bind(hash)
            .bind(now)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// End every session of a person ("sign out everywhere"); how many were open.
    pub async fn revoke_sessions_of(&self, person_id: &str, now: &str) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "UPDATE sessions SET revoked_at = $2 WHERE person_id = $1 AND revoked_at IS NULL",
        )
        .bind(person_id)
        .bind(now)
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected())
    }
}

/// What an administrator's change of a person did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PersonChange {
    /// Done: the person as they are now.
    Changed(PersonRecord),
    /// No such person in this tenant (a person of another tenant is not found either).
    NotFound,
    /// Refused: the tenant would be left without an administrator who can sign in.
    LastAdmin,
}

/// The condition under which a change may take `$2` (of tenant `$1`) out of the tenant's
/// administrators who can sign in (`$3` is the admin role): `$2` is not one of them, or
/// another one is left. Signing in takes a password or an identity at the tenant's
/// provider.
///
/// The UPDATE checks it itself, and runs in a transaction holding the tenant's lock (as
/// revoking keys does): on PostgreSQL a bare conditional UPDATE would not be enough, since
/// two admins demoting each other at once would each still see the other one as admin (read
/// committed), and together leave none. Under the lock the second waits for the first and
/// sees its change.
const LEAVES_AN_ADMIN: &str = "(role <> $3 OR disabled_at IS NOT NULL \
     OR (password_hash IS NULL AND NOT EXISTS (SELECT 1 FROM person_identities i WHERE i.person_id = people.id)) \
     OR EXISTS (SELECT 1 FROM people o WHERE o.tenant_id = $1 AND o.id <> $2 AND o.role = $3 \
                AND o.disabled_at IS NULL AND (o.password_hash IS NOT NULL \
                     OR EXISTS (SELECT 1 FROM person_identities oi WHERE oi.person_id = o.id))))";

impl Store {
    /// A person of `tenant_id` (a person of another tenant is `None`).
    pub async fn person_in_tenant(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<Option<PersonRecord>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {PERSON} FROM people WHERE tenant_id = $1 AND id = $2"
        ))
        .bind(tenant_id)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.as_ref().map(PersonRecord::from_row).transpose()?)
    }

    /// How many administrators of a tenant can sign in: enabled, with a password set or an
    /// identity at the tenant's OpenID provider.
    pub async fn active_admins(&self, tenant_id: &str) -> Result<i64, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM people WHERE tenant_id = $1 AND role = $2 \
             AND disabled_at IS NULL AND (password_hash IS NOT NULL \
             OR EXISTS (SELECT 1 FROM person_identities i WHERE i.person_id = people.id))",
        )
        .bind(tenant_id)
        .bind(crate::auth::Role::Admin.as_str())
        .fetch_one(self.pool())
        .await?)
    }

    /// Give a person of `tenant_id` another role, unless that takes away the tenant's last
    /// administrator who can sign in.
    pub async fn set_person_role(
        &self,
        tenant_id: &str,
        id: &str,
        role: &str,
    ) -> Result<PersonChange, StoreError> {
        let admin = crate::auth::Role::Admin.as_str();
        let mut tx = self.tenant_transaction(tenant_id).await?;
        let row = if role == admin {
            sqlx::query(&format!(
                "UPDATE people SET role = $3 WHERE tenant_id = $1 AND id = $2 RETURNING {PERSON}"
            ))
            .bind(tenant_id)
            .bind(id)
            .bind(role)
            .fetch_optional(&mut *tx)
            .await?
        } else {
            sqlx::query(&format!(
                "UPDATE people SET role = $4 WHERE tenant_id = $1 AND id = $2 \
                 AND {LEAVES_AN_ADMIN} RETURNING {PERSON}"
            ))
            .bind(tenant_id)
            .bind(id)
            .bind(admin)
            .bind(role)
            .fetch_optional(&mut *tx)
            .await?
        };
        changed(tx, tenant_id, id, row).await
    }

    /// Disable a person of `tenant_id` and end every session of theirs, in one transaction,
    /// unless that takes away the tenant's last administrator who can sign in. Disabling a
    /// disabled person keeps the first moment.
    pub async fn disable_person(
        &self,
        tenant_id: &str,
        id: &str,
        now: &str,
    ) -> Result<PersonChange, StoreError> {
        let mut tx = self.tenant_transaction(tenant_id).await?;
        let row = sqlx::query(&format!(
            "UPDATE people SET disabled_at = COALESCE(disabled_at, $4) \
             WHERE tenant_id = $1 AND id = $2 AND {LEAVES_AN_ADMIN} RETURNING {PERSON}"
        ))
        .bind(tenant_id)
        .bind(id)
        .bind(crate::auth::Role::Admin.as_str())
        .bind(now)
        .fetch_optional(&mut *tx)
        .await?;
        if row.is_some() {
            sqlx::query(
                "UPDATE sessions SET revoked_at = $2 WHERE person_id = $1 AND revoked_at IS NULL",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        }
        changed(tx, tenant_id, id, row).await
    }

    /// Enable a disabled person of `tenant_id` again (they sign in with their password).
    pub async fn enable_person(
        &self,
        tenant_id: &str,
        id: &str,
    ) -> Result<PersonChange, StoreError> {
        let row = sqlx::query(&format!(
            "UPDATE people SET disabled_at = NULL WHERE tenant_id = $1 AND id = $2 \
             RETURNING {PERSON}"
        ))
        .bind(tenant_id)
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(match row {
            Some(r) => PersonChange::Changed(PersonRecord::from_row(&r)?),
            None => PersonChange::NotFound,
        })
    }
}

/// The end of a guarded change: commit what the conditional UPDATE returned, or tell apart
/// a person who is not there from one the last-admin condition held back.
async fn changed(
    mut tx: sqlx::Transaction<'static, Any>,
    tenant_id: &str,
    id: &str,
    row: Option<sqlx::any::AnyRow>,
) -> Result<PersonChange, StoreError> {
    if let Some(r) = row {
        let person = PersonRecord::from_row(&r)?;
        tx.commit().await?;
        return Ok(PersonChange::Changed(person));
    }
    let there = sqlx::query("SELECT id FROM people WHERE tenant_id = $1 AND id = $2")
        .bind(tenant_id)
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?;
    Ok(if there.is_some() {
        PersonChange::LastAdmin
    } else {
        PersonChange::NotFound
    })
}
