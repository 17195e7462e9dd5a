//! The account operations the console's routes call: invite, the first admin's link,
//! completing a link, signing in and out, and reading the session of a request.

use std::net::IpAddr;
use std::sync::Arc;

use chrono::{Duration, Utc};

use super::email::{self, NotAnEmail};
use super::password::{self, PasswordError};
use super::session::{SessionPolicy, SessionState};
use super::token;
use crate::auth::throttle::{FailureThrottle, Throttled};
use crate::auth::Role;
use crate::clock;
use crate::ids::new_id;
use crate::store::{
    Invited, LinkRecord, PersonChange, PersonRecord, SessionRecord, Store, StoreError,
    SESSION_LINK, SESSION_PASSWORD,
};

/// How long an invitation link stays usable.
pub const INVITATION_TTL: Duration = Duration::days(7);
/// How long the first admin's link stays usable (it is printed at the first start).
pub const FIRST_ADMIN_TTL: Duration = Duration::days(7);
/// Sign-in attempts allowed per client address and per account and minute (in bursts of
/// as many): enough for a person who mistypes, too few to guess a password.
pub const SIGN_IN_ATTEMPTS_PER_MINUTE: u32 = 10;

/// The purposes of one-time links.
pub const INVITATION: &str = "invitation";
pub const FIRST_ADMIN: &str = "first-admin";

#[derive(Debug, thiserror::Error)]
pub enum AccountsError {
    #[error(transparent)]
    Email(#[from] NotAnEmail),
    #[error("`{0}` is not a role (admin, accountant, developer, auditor)")]
    Role(String),
    #[error("an account with the address {0} exists already")]
    EmailTaken(String),
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error("the link is unknown, used or expired")]
    LinkGone,
    #[error("too many attempts; try again in {} s", .0.retry_after.as_secs().max(1))]
    Throttled(Throttled),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the password task failed: {0}")]
    Task(String),
    /// Only administrators manage people.
    #[error("only administrators manage people")]
    NotAdmin,
    /// No such person in the administrator's tenant.
    #[error("no such person in this tenant")]
    NotFound,
    /// An administrator may not disable or demote their own account.
    #[error("administrators cannot disable or demote their own account")]
    OwnAccount,
    /// The change would leave the tenant without an administrator who can sign in.
    #[error("the tenant's last active administrator cannot be disabled or demoted")]
    LastAdmin,
    /// The person has signed in already (a password, or an identity at the provider): a new
    /// invitation link is only for people who have not.
    #[error(
        "the person has signed in already; a new invitation link is only for people who have not"
    )]
    NotPending,
    /// The tenant requires sign-in through its OpenID provider.
    #[error("this organisation signs in through its identity provider only")]
    SsoRequired,
    /// The provider vouched for the person, but they get no account here.
    #[error("{0}")]
    SsoRefused(super::sso::Refusal),
}

/// A person invited, with the link's token (shown to the admin once; only its hash is kept).
#[derive(Debug, Clone)]
pub struct Invitation {
    pub person: PersonRecord,
    pub token: String,
    pub expires_at: String,
}

/// A new session: its cookie token and CSRF token (the database keeps the cookie token's
/// hash only).
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub token: String,
    pub csrf: String,
    pub person: PersonRecord,
    pub expires_at: String,
}

/// How a sign-in ended.
#[derive(Debug)]
pub enum SignIn {
    Ok(Box<SignedIn>),
    /// Unknown address, wrong password, no password set, or a disabled account: one answer
    /// for all, so that the form does not tell which addresses have accounts.
    Refused,
    /// The right password, but the person's tenant signs in through its OpenID provider
    /// only (said only to someone who knows the password).
    SsoRequired,
}

/// Accounts over the store, with the session policy and the sign-in throttle.
pub struct Accounts {
    store: Store,
    policy: SessionPolicy,
    throttle: FailureThrottle,
    /// Argon2 runs at once: each takes 19 MiB and a core for tens of milliseconds, so many
    /// sign-ins from many addresses wait their turn instead of exhausting memory.
    hashing: tokio::sync::Semaphore,
}

impl Accounts {
    /// Run Argon2 off the async workers, at most one run per core at a time.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, AccountsError> {
        let _permit = self
            .hashing
            .acquire()
            .await
            .map_err(|e| AccountsError::Task(e.to_string()))?;
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| AccountsError::Task(e.to_string()))
    }
}

fn role(name: &str) -> Result<Role, AccountsError> {
    Role::parse(name).ok_or_else(|| AccountsError::Role(name.chars().take(40).collect()))
}

impl Accounts {
    pub fn new(store: Store, policy: SessionPolicy) -> Accounts {
        Accounts {
            store,
            policy,
            throttle: FailureThrottle::new(SIGN_IN_ATTEMPTS_PER_MINUTE),
            hashing: tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, |n| n.get()),
            ),
        }
    }

    pub fn policy(&self) -> SessionPolicy {
        self.policy
    }

    pub(super) fn store(&self) -> &Store {
        &self.store
    }

    /// Invite `email` into `tenant_id` with `role`: the person (without a password) and a
    /// one-time link to set one.
    pub async fn invite(
        &self,
        tenant_id: &str,
        email: &str,
        role_name: &str,
    ) -> Result<Invitation, AccountsError> {
        let email = email::normalise(email)?;
        let role = role(role_name)?;
        self.create_with_link(tenant_id, email, role, INVITATION, INVITATION_TTL)
            .await
    }

    /// The first admin of a tenant that has no people yet, with a one-time link on which
    /// they choose their address and password; `None` when the tenant has people already.
    pub async fn first_admin(&self, tenant_id: &str) -> Result<Option<Invitation>, AccountsError> {
        if self.store.count_people(tenant_id).await? > 0 {
            return Ok(None);
        }
        // A placeholder under the reserved .invalid domain until the link sets the real one.
        let placeholder = format!("first-admin@{tenant_id}.invalid");
        match self
            .create_with_link(
                tenant_id,
                placeholder,
                Role::Admin,
                FIRST_ADMIN,
                FIRST_ADMIN_TTL,
            )
            .await
        {
            Ok(i) => Ok(Some(i)),
            // Another instance created it at the same time.
            Err(AccountsError::EmailTaken(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn create_with_link(
        &self,
        tenant_id: &str,
        email: String,
        role: Role,
        purpose: &str,
        ttl: Duration,
    ) -> Result<Invitation, AccountsError> {
        let now = Utc::now();
        let person = PersonRecord {
            id: new_id("per"),
            tenant_id: tenant_id.to_string(),
            email: email.clone(),
            role: role.as_str().to_string(),
            password_hash: None,
            created_at: clock::format(now),
            disabled_at: None,
        };
        let token = token::new_token();
        let expires_at = clock::format(now + ttl);
        let link = LinkRecord {
            hash: token::digest(&token),
            person_id: person.id.clone(),
            purpose: purpose.to_string(),
            created_at: clock::format(now),
            expires_at: expires_at.clone(),
            used_at: None,
        };
        match self.store.insert_person_with_link(&person, &link).await? {
            Invited::Created => Ok(Invitation {
                person,
                token,
                expires_at,
            }),
            Invited::EmailTaken => Err(AccountsError::EmailTaken(email)),
        }
    }

    /// The link behind `token` and its person, if it can still be used (to show its form).
    pub async fn open_link(
        &self,
        link_token: &str,
    ) -> Result<Option<(LinkRecord, PersonRecord)>, AccountsError> {
        if !token::well_formed(link_token) {
            return Ok(None);
        }
        let Some(link) = self
            .store
            .open_link(&token::digest(link_token), &clock::now())
            .await?
        else {
            return Ok(None);
        };
        Ok(self
            .store
            .person(&link.person_id)
            .await?
            .filter(|p| p.disabled_at.is_none())
            .map(|p| (link, p)))
    }

    /// Use a link: set the password (and, on the first admin's link, the address), then
    /// open a session. The link is spent atomically: of two concurrent uses one succeeds.
    pub async fn complete_link(
        &self,
        link_token: &str,
        new_email: Option<&str>,
        new_password: &str,
    ) -> Result<SignedIn, AccountsError> {
        password::check_new(new_password)?;
        let Some((link, person)) = self.open_link(link_token).await? else {
            return Err(AccountsError::LinkGone);
        };
        // A password of a tenant that signs in through its provider would be a way around it.
        if self.sso_required(&person.tenant_id).await? {
            return Err(AccountsError::SsoRequired);
        }
        let email = match (link.purpose.as_str(), new_email) {
            (FIRST_ADMIN, Some(e)) => Some(email::normalise(e)?),
            _ => None,
        };
        if let Some(e) = &email {
            if let Some(other) = self.store.person_by_email(e).await? {
                if other.id != person.id {
                    return Err(AccountsError::EmailTaken(e.clone()));
                }
            }
        }
        let pw = new_password.to_string();
        let hash = self.blocking(move || password::hash(&pw)).await??;
        if self
            .store
            .use_link(&link.hash, &clock::now())
            .await?
            .is_none()
        {
            return Err(AccountsError::LinkGone);
        }
        self.store
            .set_credentials(&person.id, email.as_deref(), &hash)
            .await
            .map_err(|e| match e {
                StoreError::Database(sqlx::Error::Database(d)) if d.is_unique_violation() => {
                    AccountsError::EmailTaken(email.clone().unwrap_or_default())
                }
                e => AccountsError::Store(e),
            })?;
        let person = self
            .store
            .person(&person.id)
            .await?
            .ok_or(AccountsError::LinkGone)?;
        self.open_session(person, SESSION_LINK).await
    }

    /// Sign in with address and password. Every attempt is counted per client address and
    /// per account before anything is looked up: a throttled attempt learns nothing, even
    /// with the right password, and costs no Argon2 run.
    pub async fn sign_in(
        &self,
        client: Option<IpAddr>,
        email_raw: &str,
        password_raw: &str,
    ) -> Result<SignIn, AccountsError> {
        let email = email::normalise(email_raw).unwrap_or_default();
        self.throttle
            .charge(client, &email)
            .map_err(AccountsError::Throttled)?;
        let person = if email.is_empty() {
            None
        } else {
            self.store.person_by_email(&email).await?
        };
        let stored = person
            .as_ref()
            .filter(|p| p.disabled_at.is_none())
            .and_then(|p| p.password_hash.clone());
        let pw = password_raw.to_string();
        let ok = self
            .blocking(move || match stored {
                Some(h) => password::verify(&pw, &h),
                None => {
                    password::verify_nothing(&pw);
                    false
                }
            })
            .await?;
        match person {
            Some(p) if ok => {
                if self.sso_required(&p.tenant_id).await? {
                    return Ok(SignIn::SsoRequired);
                }
                Ok(SignIn::Ok(Box::new(
                    self.open_session(p, SESSION_PASSWORD).await?,
                )))
            }
            _ => Ok(SignIn::Refused),
        }
    }

    /// Whether the tenant signs in through its OpenID provider only.
    pub(super) async fn sso_required(&self, tenant_id: &str) -> Result<bool, AccountsError> {
        Ok(self
            .store
            .sso_settings(tenant_id)
            .await?
            .is_some_and(|s| s.required))
    }

    pub(super) async fn open_session(
        &self,
        person: PersonRecord,
        method: &str,
    ) -> Result<SignedIn, AccountsError> {
        let now = Utc::now();
        let token = token::new_token();
        let csrf = token::new_token();
        let expires_at = clock::format(self.policy.ends(now));
        self.store
            .insert_session(&SessionRecord {
                hash: token::digest(&token),
                person_id: person.id.clone(),
                tenant_id: person.tenant_id.clone(),
                csrf: csrf.clone(),
                created_at: clock::format(now),
                last_seen_at: clock::format(now),
                expires_at: expires_at.clone(),
                revoked_at: None,
                method: method.to_string(),
            })
            .await?;
        Ok(SignedIn {
            token,
            csrf,
            person,
            expires_at,
        })
    }

    /// The live session behind a cookie's token and its person (a disabled person has
    /// none); the request counts as activity.
    pub async fn session(
        &self,
        session_token: &str,
    ) -> Result<Option<(SessionRecord, PersonRecord)>, AccountsError> {
        if !token::well_formed(session_token) {
            return Ok(None);
        }
        let hash = token::digest(session_token);
        let Some(session) = self.store.session(&hash).await? else {
            return Ok(None);
        };
        let now = Utc::now();
        if self.policy.state(&session, now) != SessionState::Active {
            return Ok(None);
        }
        let Some(person) = self
            .store
            .person(&session.person_id)
            .await?
            .filter(|p| p.disabled_at.is_none())
        else {
            return Ok(None);
        };
        self.store.touch_session(&hash, &clock::format(now)).await?;
        Ok(Some((session, person)))
    }

    /// End the session behind a cookie's token.
    pub async fn sign_out(&self, session_token: &str) -> Result<(), AccountsError> {
        if token::well_formed(session_token) {
            self.store
                .revoke_session(&token::digest(session_token), &clock::now())
                .await?;
        }
        Ok(())
    }

    /// End every session of a person; how many were open.
    pub async fn sign_out_everywhere(&self, person_id: &str) -> Result<u64, AccountsError> {
        Ok(self
            .store
            .revoke_sessions_of(person_id, &clock::now())
            .await?)
    }
}

/// Administration: what an administrator (`admin`, the person signed in) may do to the
/// people of their own tenant. A person of another tenant is not found; nobody disables or
/// demotes their own account; and the tenant always keeps an administrator who can sign in
/// (enabled, with a password): the store checks that in the same statement that changes the
/// person, under the tenant's lock, so that two administrators demoting each other at the
/// same moment cannot both succeed.
impl Accounts {
    /// A person of the administrator's tenant.
    pub async fn person_of(
        &self,
        admin: &PersonRecord,
        person_id: &str,
    ) -> Result<PersonRecord, AccountsError> {
        is_admin(admin)?;
        self.store
            .person_in_tenant(&admin.tenant_id, person_id)
            .await?
            .ok_or(AccountsError::NotFound)
    }

    /// A new invitation link for a person of the administrator's tenant who has not signed in
    /// yet (the mail was lost, the link expired): their earlier unused links stop working.
    pub async fn renew_invitation(
        &self,
        admin: &PersonRecord,
        person_id: &str,
    ) -> Result<Invitation, AccountsError> {
        let person = self.person_of(admin, person_id).await?;
        let sso = self.store.sso_settings(&person.tenant_id).await?;
        if sso.as_ref().is_some_and(|s| s.required) {
            return Err(AccountsError::SsoRequired);
        }
        // Someone who signs in through the tenant's provider needs no link; once the tenant
        // has no provider any more, they do.
        let through_provider = sso.is_some() && self.store.has_identity(&person.id).await?;
        if person.password_hash.is_some() || person.disabled_at.is_some() || through_provider {
            return Err(AccountsError::NotPending);
        }
        let now = Utc::now();
        let token = token::new_token();
        let expires_at = clock::format(now + INVITATION_TTL);
        self.store
            .replace_links(
                &LinkRecord {
                    hash: token::digest(&token),
                    person_id: person.id.clone(),
                    purpose: INVITATION.to_string(),
                    created_at: clock::format(now),
                    expires_at: expires_at.clone(),
                    used_at: None,
                },
                &clock::format(now),
            )
            .await?;
        Ok(Invitation {
            person,
            token,
            expires_at,
        })
    }

    /// Give a person of the administrator's tenant another role.
    pub async fn change_role(
        &self,
        admin: &PersonRecord,
        person_id: &str,
        role_name: &str,
    ) -> Result<PersonRecord, AccountsError> {
        is_admin(admin)?;
        let role = role(role_name)?;
        if person_id == admin.id && role != Role::Admin {
            return Err(AccountsError::OwnAccount);
        }
        changed(
            self.store
                .set_person_role(&admin.tenant_id, person_id, role.as_str())
                .await?,
        )
    }

    /// Disable a person of the administrator's tenant: their sessions end at once, and
    /// signing in is refused (with the answer a wrong password gets) until enabled again.
    pub async fn disable(
        &self,
        admin: &PersonRecord,
        person_id: &str,
    ) -> Result<PersonRecord, AccountsError> {
        is_admin(admin)?;
        if person_id == admin.id {
            return Err(AccountsError::OwnAccount);
        }
        changed(
            self.store
                .disable_person(&admin.tenant_id, person_id, &clock::now())
                .await?,
        )
    }

    /// Enable a disabled person of the administrator's tenant again.
    pub async fn enable(
        &self,
        admin: &PersonRecord,
        person_id: &str,
    ) -> Result<PersonRecord, AccountsError> {
        is_admin(admin)?;
        changed(
            self.store
                .enable_person(&admin.tenant_id, person_id)
                .await?,
        )
    }
}

fn is_admin(person: &PersonRecord) -> Result<(), AccountsError> {
    if person.role == Role::Admin.as_str() && person.disabled_at.is_none() {
        Ok(())
    } else {
        Err(AccountsError::NotAdmin)
    }
}

fn changed(change: PersonChange) -> Result<PersonRecord, AccountsError> {
    match change {
        PersonChange::Changed(p) => Ok(p),
        PersonChange::NotFound => Err(AccountsError::NotFound),
        PersonChange::LastAdmin => Err(AccountsError::LastAdmin),
    }
}

/// Shared handle, as the application state holds it.
pub type SharedAccounts = Arc<Accounts>;
