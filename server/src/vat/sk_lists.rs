//! The Financial Administration's (FS) open-data lists for Slovak VAT numbers: the list of
//! VAT payers with grounds for cancelling the registration (`ds_dphz`: a warning beside the
//! verdict) and the list of VAT payers (`ds_dphs`: a second register when VIES cannot
//! answer for SK).

use crate::company::fs::{FsClient, VatRegistration};

/// Numbers of the sandbox register listed with grounds for cancellation (fictitious).
const SANDBOX_CANCELLATION_GROUNDS: &[&str] = &["SK7296376791"];

/// The source name of answers taken from the VAT payer list.
pub const VAT_PAYERS_SOURCE: &str = "FS open data (ds_dphs)";

pub enum SkLists {
    /// No FS key configured: the lists are not consulted.
    Off,
    Sandbox,
    Fs(FsClient),
}

/// What the VAT payer list says about one number.
pub struct Payer {
    pub name: Option<String>,
    pub address: Option<String>,
}

impl SkLists {
    /// Whether grounds for cancelling the registration of `vat` (an SK number) are listed;
    /// `None` when the list was not consulted or could not answer (the reason is logged).
    pub async fn cancellation_grounds(&self, vat: &str) -> Option<bool> {
        if !vat.starts_with("SK") {
            return None;
        }
        match self {
            SkLists::Off => None,
            SkLists::Sandbox => Some(SANDBOX_CANCELLATION_GROUNDS.contains(&vat)),
            SkLists::Fs(fs) => match fs.vat_cancellation_grounds(vat).await {
                Ok(rows) => Some(!rows.is_empty()),
                Err(e) => {
                    tracing::warn!(error = %e, "FS list ds_dphz did not answer");
                    None
                }
            },
        }
    }

    /// The VAT payer list's answer for `vat`: `Some(Ok(Some(payer)))` listed,
    /// `Some(Ok(None))` not listed, `Some(Err(reason))` the list cannot answer, `None` not
    /// consulted (not SK, or no list).
    pub async fn vat_payer(&self, vat: &str) -> Option<Result<Option<Payer>, String>> {
        if !vat.starts_with("SK") {
            return None;
        }
        match self {
            SkLists::Off | SkLists::Sandbox => None,
            SkLists::Fs(fs) => Some(
                fs.vat_payers(vat)
                    .await
                    .map(|rows| rows.into_iter().next().map(payer))
                    .map_err(|e| e.to_string()),
            ),
        }
    }
}

fn payer(r: VatRegistration) -> Payer {
    let place = [r.postal_code, r.municipality]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let address = [r.street, Some(place).filter(|p| !p.is_empty())]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
    Payer {
        name: r.name,
        address: Some(address).filter(|a| !a.is_empty()),
    }
}

/// The warning given beside the verdict when grounds for cancellation are listed.
pub fn cancellation_warning() -> String {
    "the Financial Administration lists grounds for cancelling this VAT registration \
     (ds_dphz): the registration may end soon; check again before relying on it"
        .to_string()
}
