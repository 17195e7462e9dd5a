//! Which account a person the tenant's OpenID provider vouched for gets: the one bound to
//! their identity at the provider; else, on their first sign-in, the tenant's account with
//! their (verified) address, which is then bound; else a new account ("just in time") with
//! the role the tenant's map gives them. The provider speaks only for the tenant's own
//! e-mail domains: an address elsewhere, unverified, or of another tenant's account gets
//! nothing. The map is applied at every sign-in, so a role changed at the provider changes
//! here too (unless that would leave the tenant without an administrator).

use chrono::Utc;

use super::service::{Accounts, AccountsError, SignedIn};
use crate::auth::Role;
use crate::clock;
use crate::ids::new_id;
use crate::sso::Identity;
use crate::store::{Invited, PersonChange, PersonRecord, SESSION_SSO};

/// Why a vouched-for person gets no account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("the provider sent no verified e-mail address")]
    EmailUnverified,
    #[error("the e-mail address is not under one of the organisation's domains")]
    OutsideDomains,
    #[error("none of the person's values of the role claim maps to a role, and there is no default role")]
    NoRole,
    #[error("the e-mail address belongs to an account of another organisation")]
    OtherTenant,
    #[error("the account is disabled")]
    Disabled,
}

impl Accounts {
    /// Open a session for a person the tenant's provider vouched for.
    pub async fn sign_in_with(&self, identity: &Identity) -> Result<SignedIn, AccountsError> {
        let refuse = |r: Refusal| Err(AccountsError::SsoRefused(r));
        let store = self.store();
        let person = match store
            .person_by_identity(&identity.issuer, &identity.subject)
            .await?
        {
            Some(p) if p.tenant_id != identity.tenant_id => return refuse(Refusal::OtherTenant),
            Some(p) => p,
            None => {
                let Some(email) = self.vouched_email(identity).await? else {
                    return refuse(if identity.email_verified {
                        Refusal::OutsideDomains
                    } else {
                        Refusal::EmailUnverified
                    });
                };
                match store.person_by_email(&email).await? {
                    Some(p) if p.tenant_id != identity.tenant_id => {
                        return refuse(Refusal::OtherTenant)
                    }
                    Some(p) => {
                        let now = clock::now();
                        if !store
                            .bind_identity(&p.id, &identity.issuer, &identity.subject, &now)
                            .await?
                        {
                            // Bound a moment ago by a sign-in in another tab: that binding
                            // decides.
                            match store
                                .person_by_identity(&identity.issuer, &identity.subject)
                                .await?
                            {
                                Some(q) if q.id == p.id => {}
                                _ => return refuse(Refusal::OtherTenant),
                            }
                        }
                        p
                    }
                    None => {
                        let Some(role) = identity.role else {
                            return refuse(Refusal::NoRole);
                        };
                        self.create_vouched(identity, email, role).await?
                    }
                }
            }
        };
        if person.disabled_at.is_some() {
            return refuse(Refusal::Disabled);
        }
        let Some(role) = identity.role else {
            return refuse(Refusal::NoRole);
        };
        let person = self.follow_role(person, role).await?;
        self.open_session(person, SESSION_SSO).await
    }

    /// The identity's address, if the provider may speak for it: verified, and under one of
    /// the tenant's domains.
    async fn vouched_email(&self, identity: &Identity) -> Result<Option<String>, AccountsError> {
        let Some(email) = identity
            .email
            .as_deref()
            .filter(|_| identity.email_verified)
        else {
            return Ok(None);
        };
        let Ok(email) = super::email::normalise(email) else {
            return Ok(None);
        };
        let domain = email.rsplit_once('@').map(|(_, d)| d).unwrap_or_default();
        let domains = self.store().sso_domains(&identity.tenant_id).await?;
        Ok(domains.iter().any(|d| d == domain).then_some(email))
    }

    async fn create_vouched(
        &self,
        identity: &Identity,
        email: String,
        role: Role,
    ) -> Result<PersonRecord, AccountsError> {
        let person = PersonRecord {
            id: new_id("per"),
            tenant_id: identity.tenant_id.clone(),
            email: email.clone(),
            role: role.as_str().to_string(),
            password_hash: None,
            created_at: clock::format(Utc::now()),
            disabled_at: None,
        };
        match self
            .store()
            .insert_person_with_identity(&person, &identity.issuer, &identity.subject)
            .await?
        {
            Invited::Created => {
                tracing::info!(person = %person.id, tenant = %person.tenant_id, role = role.as_str(), "account created at the first single sign-on");
                Ok(person)
            }
            // The same person signed in twice at once: the other sign-in created it.
            Invited::EmailTaken => match self
                .store()
                .person_by_identity(&identity.issuer, &identity.subject)
                .await?
            {
                Some(p) => Ok(p),
                None => Err(AccountsError::SsoRefused(Refusal::OtherTenant)),
            },
        }
    }

    /// Give the person the role the provider's claims map to, unless that would leave the
    /// tenant without an administrator (then they keep theirs, and the log says why).
    async fn follow_role(
        &self,
        person: PersonRecord,
        role: Role,
    ) -> Result<PersonRecord, AccountsError> {
        if person.role == role.as_str() {
            return Ok(person);
        }
        match self
            .store()
            .set_person_role(&person.tenant_id, &person.id, role.as_str())
            .await?
        {
            PersonChange::Changed(p) => {
                tracing::info!(person = %p.id, from = %person.role, to = %p.role, "role follows the identity provider");
                Ok(p)
            }
            PersonChange::LastAdmin => {
                tracing::warn!(person = %person.id, role = role.as_str(), "the identity provider's role is not applied: the person is the organisation's last administrator");
                Ok(person)
            }
            PersonChange::NotFound => Err(AccountsError::NotFound),
        }
    }
}
