//! Evidence packages: everything needed to show later what was sent, how it was checked
//! and what happened to it — the payload as received, the validation summary and findings,
//! the rules version, the partner's response events and the whole processing timeline with
//! its hash chain. As JSON, or as a ZIP whose manifest carries the SHA-256 of every file and
//! the chain head, so that [`verify_zip`] (`invex evidence verify`) can check a package
//! offline.

use std::io::{Cursor, Read, Write};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use super::timeline::{verify_chain, TimelineEntry, INVEX};
use crate::store::InvoiceRecord;

pub const FORMAT: &str = "invex-evidence/1";

/// The evidence package of the invoice `invoice_id` of `tenant_id` as of `now`, with the
/// review approval of the conversion that produced it (if one did); `None` when the tenant
/// has no such invoice.
pub async fn assemble(
    store: &crate::store::Store,
    tenant_id: &str,
    invoice_id: &str,
    now: String,
) -> Result<Option<EvidencePackage>, crate::store::StoreError> {
    let Some(t) = super::timeline::of(store, tenant_id, invoice_id).await? else {
        return Ok(None);
    };
    let mut package = EvidencePackage::build(&t.invoice, t.entries, now);
    if let Some(conversion) = store
        .conversion_by_xml(tenant_id, &t.invoice.sha256)
        .await?
    {
        package
            .approvals
            .extend(crate::convert::review::approval(&conversion));
    }
    Ok(Some(package))
}

#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct EvidenceDocument {
    /// BT-1 as read from the document.
    pub document_id: Option<String>,
    pub buyer_endpoint: Option<String>,
    /// SHA-256 of the payload, lowercase hex.
    pub sha256: String,
    pub size_bytes: usize,
    /// The XML exactly as received (JSON form only; the ZIP carries `invoice.xml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct RulesVersion {
    /// `id@version` of the profile.
    pub profile: String,
    /// Every pack, `id@version`, lowest layer first.
    pub packs: Vec<String>,
    /// Why this profile version: how it was detected from the document, or which version of
    /// the named profile was in force on the day of sending. Absent when the caller named
    /// the exact version (or a profile with one version in force whatever the day).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_because: Option<String>,
}

/// Who approved what and when (reviewed conversions). Documents sent as XML have none.
#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct Approval {
    pub approved_by: String,
    pub approved_at: String,
    pub what: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, ToSchema)]
pub struct EvidencePackage {
    /// `invex-evidence/1`.
    pub format: String,
    pub invoice_id: String,
    pub status: String,
    pub environment: String,
    pub generated_at: String,
    pub document: EvidenceDocument,
    /// Verdict, counts, validation id.
    #[schema(value_type = Object)]
    pub validation: serde_json::Value,
    /// Every finding of the validation run.
    #[schema(value_type = Vec<Object>)]
    pub findings: serde_json::Value,
    pub rules_version: RulesVersion,
    pub transmission_id: Option<String>,
    pub resubmission_of: Option<String>,
    /// The partner's events (MLS and Invoice Response), in order.
    pub response_events: Vec<TimelineEntry>,
    /// Every event, ours and the partner's, with the hash chain.
    pub timeline: Vec<TimelineEntry>,
    /// The last timeline entry's hash.
    pub chain_head: String,
    pub approvals: Vec<Approval>,
}

impl EvidencePackage {
    pub fn build(
        invoice: &InvoiceRecord,
        timeline: Vec<TimelineEntry>,
        generated_at: String,
    ) -> EvidencePackage {
        let chain_head = timeline
            .last()
            .map(|e| e.hash.clone())
            .unwrap_or_else(|| crate::store::GENESIS_HASH.to_string());
        let validation: serde_json::Value =
            serde_json::from_str(&invoice.summary).unwrap_or_default();
        let why = |key: &str| {
            validation
                .get(key)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let chosen_because = match (why("detection"), why("resolution")) {
            (Some(d), Some(r)) => Some(format!("{d}; {r}")),
            (d, r) => d.or(r),
        };
        EvidencePackage {
            format: FORMAT.to_string(),
            invoice_id: invoice.id.clone(),
            status: invoice.status.clone(),
            environment: invoice.environment.clone(),
            generated_at,
            document: EvidenceDocument {
                document_id: invoice.document_id.clone(),
                buyer_endpoint: invoice.buyer_endpoint.clone(),
                sha256: invoice.sha256.clone(),
                size_bytes: invoice.payload.len(),
                payload: Some(invoice.payload.clone()),
            },
            validation,
            findings: serde_json::from_str(&invoice.findings).unwrap_or_default(),
            rules_version: RulesVersion {
                profile: invoice.profile.clone(),
                packs: invoice
                    .rules_version
                    .split(',')
                    .filter(|p| !p.is_empty())
                    .map(str::to_string)
                    .collect(),
                chosen_because,
            },
            transmission_id: invoice.transmission_id.clone(),
            resubmission_of: invoice.resubmission_of.clone(),
            response_events: timeline
                .iter()
                .filter(|e| e.source != INVEX)
                .cloned()
                .collect(),
            timeline,
            chain_head,
            approvals: Vec::new(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: String,
    invoice_id: String,
    chain_head: String,
    /// File name → SHA-256 (lowercase hex).
    files: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    #[error("writing the ZIP: {0}")]
    Zip(#[from] zip::result::ZipError),
    #[error("writing the ZIP: {0}")]
    Io(#[from] std::io::Error),
    #[error("encoding JSON: {0}")]
    Json(#[from] serde_json::Error),
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The package as a ZIP: `invoice.xml`, `evidence.json` (without the payload) and
/// `manifest.json` (hashes of both and the chain head).
pub fn to_zip(package: &EvidencePackage) -> Result<Vec<u8>, EvidenceError> {
    let payload = package.document.payload.clone().unwrap_or_default();
    let mut without_payload = package.clone();
    without_payload.document.payload = None;
    let evidence = serde_json::to_vec_pretty(&without_payload)?;
    let files = [
        ("invoice.xml", payload.into_bytes()),
        ("evidence.json", evidence),
    ];
    let manifest = Manifest {
        format: FORMAT.to_string(),
        invoice_id: package.invoice_id.clone(),
        chain_head: package.chain_head.clone(),
        files: files
            .iter()
            .map(|(name, bytes)| (name.to_string(), sha256_hex(bytes)))
            .collect(),
    };
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in &files {
        zip.start_file(*name, options)?;
        zip.write_all(bytes)?;
    }
    zip.start_file("manifest.json", options)?;
    zip.write_all(&serde_json::to_vec_pretty(&manifest)?)?;
    Ok(zip.finish()?.into_inner())
}

/// What a verified package says.
#[derive(Debug, PartialEq, Eq)]
pub struct Verified {
    pub invoice_id: String,
    pub status: String,
    pub events: usize,
    pub chain_head: String,
}

/// Check a ZIP package offline: every file's hash against the manifest, the payload's hash
/// against the evidence, and the timeline's hash chain against both chain heads. Every
/// fault found is listed.
pub fn verify_zip(bytes: &[u8]) -> Result<Verified, Vec<String>> {
    let mut archive =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| vec![format!("not a ZIP: {e}")])?;
    let mut read = |name: &str| -> Result<Vec<u8>, String> {
        let mut file = archive
            .by_name(name)
            .map_err(|_| format!("{name} is missing"))?;
        let mut out = Vec::new();
        file.read_to_end(&mut out)
            .map_err(|e| format!("{name} cannot be read: {e}"))?;
        Ok(out)
    };
    let manifest_bytes = read("manifest.json").map_err(|e| vec![e])?;
    let manifest: Manifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|e| vec![format!("manifest.json is not a manifest: {e}")])?;
    let mut faults = Vec::new();
    if manifest.format != FORMAT {
        faults.push(format!("unknown format `{}`", manifest.format));
    }
    let mut contents = std::collections::BTreeMap::new();
    for (name, expected) in &manifest.files {
        match read(name) {
            Ok(bytes) => {
                if &sha256_hex(&bytes) != expected {
                    faults.push(format!(
                        "{name} was changed: its SHA-256 differs from the manifest"
                    ));
                }
                contents.insert(name.clone(), bytes);
            }
            Err(e) => faults.push(e),
        }
    }
    let evidence: Option<EvidencePackage> = match contents.get("evidence.json") {
        Some(b) => match serde_json::from_slice(b) {
            Ok(p) => Some(p),
            Err(e) => {
                faults.push(format!("evidence.json cannot be read: {e}"));
                None
            }
        },
        None => {
            faults.push("the manifest does not list evidence.json".into());
            None
        }
    };
    let Some(evidence) = evidence else {
        return Err(faults);
    };
    match contents.get("invoice.xml") {
        Some(xml) if sha256_hex(xml) != evidence.document.sha256 => faults.push(
            "invoice.xml is not the document the evidence describes (SHA-256 differs)".into(),
        ),
        Some(_) => {}
        None => faults.push("the manifest does not list invoice.xml".into()),
    }
    match verify_chain(&evidence.timeline) {
        Ok(head) => {
            if head != evidence.chain_head || head != manifest.chain_head {
                faults.push("the timeline's chain head differs from the one recorded".into());
            }
        }
        Err(e) => faults.push(format!("timeline: {e}")),
    }
    if evidence.invoice_id != manifest.invoice_id {
        faults.push("the manifest and the evidence name different invoices".into());
    }
    if faults.is_empty() {
        Ok(Verified {
            invoice_id: evidence.invoice_id,
            status: evidence.status,
            events: evidence.timeline.len(),
            chain_head: evidence.chain_head,
        })
    } else {
        Err(faults)
    }
}
