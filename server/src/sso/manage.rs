//! What a tenant's administrator does with its provider: read the settings, save them
//! (checked, and the provider asked for its discovery document at once, so that a wrong
//! issuer shows on the form rather than at the next sign-in), remove them.

use super::settings::{SettingsError, SsoForm, SsoSettings};
use super::{SingleSignOn, SsoError};
use crate::auth::Role;
use crate::clock;
use crate::store::{PersonRecord, SessionRecord, SsoRecord, SsoSaved, StoreError, SESSION_SSO};

#[derive(Debug, thiserror::Error)]
pub enum ManageError {
    #[error("only administrators manage single sign-on")]
    NotAdmin,
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("domains: `{0}` already signs in through another organisation's provider")]
    DomainTaken(String),
    #[error("issuer: {0}")]
    Provider(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ManageError {
    /// The form field the problem is in, if it is in one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            ManageError::Settings(e) => Some(e.field()),
            ManageError::DomainTaken(_) => Some("domains"),
            ManageError::Provider(_) => Some("issuer"),
            _ => None,
        }
    }
}

fn is_admin(p: &PersonRecord) -> Result<(), ManageError> {
    if p.role == Role::Admin.as_str() && p.disabled_at.is_none() {
        Ok(())
    } else {
        Err(ManageError::NotAdmin)
    }
}

impl SingleSignOn {
    /// The tenant's saved provider and its domains.
    pub async fn settings_of(
        &self,
        admin: &PersonRecord,
    ) -> Result<Option<(SsoRecord, Vec<String>)>, ManageError> {
        is_admin(admin)?;
        let Some(record) = self.store.sso_settings(&admin.tenant_id).await? else {
            return Ok(None);
        };
        let domains = self.store.sso_domains(&admin.tenant_id).await?;
        Ok(Some((record, domains)))
    }

    /// Save the administrator's form for their tenant. Requiring sign-in through the
    /// provider takes an administrator who signed in through it in this session (proof
    /// that it works for them), unless it was required already.
    pub async fn save(
        &self,
        admin: &PersonRecord,
        session: &SessionRecord,
        form: &SsoForm,
    ) -> Result<SsoSettings, ManageError> {
        is_admin(admin)?;
        let saved = self.store.sso_settings(&admin.tenant_id).await?;
        let settings = form.check(
            self.policy(),
            saved.as_ref().and_then(|s| s.client_secret.as_deref()),
        )?;
        let required_before = saved
            .as_ref()
            .is_some_and(|s| s.required && s.issuer == settings.issuer);
        if settings.required && !required_before && session.method != SESSION_SSO {
            return Err(SettingsError::RequiredUntested.into());
        }
        self.discover(&settings.issuer, true)
            .await
            .map_err(|e| match e {
                SsoError::Store(s) => ManageError::Store(s),
                e => ManageError::Provider(e.to_string()),
            })?;
        let record = settings.record(&admin.tenant_id, &admin.id, &clock::now());
        match self
            .store
            .put_sso_settings(&record, &settings.domains)
            .await?
        {
            SsoSaved::Saved => {
                tracing::info!(tenant = %admin.tenant_id, by = %admin.id, issuer = %settings.issuer, required = settings.required, "single sign-on settings saved");
                Ok(settings)
            }
            SsoSaved::DomainTaken(d) => Err(ManageError::DomainTaken(d)),
        }
    }

    /// Remove the tenant's provider: its people sign in with passwords again (those who
    /// have one); accounts stay.
    pub async fn remove(&self, admin: &PersonRecord) -> Result<(), ManageError> {
        is_admin(admin)?;
        self.store.delete_sso_settings(&admin.tenant_id).await?;
        tracing::info!(tenant = %admin.tenant_id, by = %admin.id, "single sign-on removed");
        Ok(())
    }
}
