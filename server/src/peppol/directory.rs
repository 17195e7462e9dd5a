//! The Peppol Directory search API (`/search/1.0/json?participant=...`), for the business
//! name behind an identifier. The Directory is informative only: when it cannot answer,
//! the lookup still completes, without a name.

use std::time::Duration;

use serde::Deserialize;

use super::identifier::ParticipantId;

/// What the Directory knows of a participant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DirectoryEntry {
    pub name: Option<String>,
    /// ISO 3166 country code of the business entity.
    pub country: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum DirectoryError {
    #[error("the Peppol Directory cannot be reached: {0}")]
    Unreachable(String),
    #[error("the Peppol Directory answered HTTP {0}")]
    Status(u16),
    #[error("the Peppol Directory answer is not search JSON: {0}")]
    Malformed(String),
}

#[derive(Deserialize)]
struct SearchResult {
    #[serde(rename = "total-result-count", default)]
    total: u64,
    #[serde(default)]
    matches: Vec<Match>,
}

#[derive(Deserialize)]
struct Match {
    #[serde(rename = "participantID")]
    participant: Option<Identifier>,
    #[serde(default)]
    entities: Vec<Entity>,
}

#[derive(Deserialize)]
struct Identifier {
    #[serde(default)]
    scheme: String,
    #[serde(default)]
    value: String,
}

#[derive(Deserialize)]
struct Entity {
    #[serde(default)]
    name: Vec<Name>,
    #[serde(rename = "countryCode")]
    country_code: Option<String>,
}

#[derive(Deserialize)]
struct Name {
    name: String,
}

#[derive(Clone)]
pub struct DirectoryClient {
    http: reqwest::Client,
    base: String,
}

impl DirectoryClient {
    pub fn new(base: &str, budget: Duration) -> Result<DirectoryClient, reqwest::Error> {
        Ok(DirectoryClient {
            http: reqwest::Client::builder()
                .timeout(budget)
                .connect_timeout(budget.min(Duration::from_secs(2)))
                .build()?,
            base: base.trim_end_matches('/').to_string(),
        })
    }

    /// The Directory's entry for `id`; Ok(None) when it has none.
    pub async fn find(&self, id: &ParticipantId) -> Result<Option<DirectoryEntry>, DirectoryError> {
        let response = self
            .http
            .get(format!("{}/search/1.0/json", self.base))
            .query(&[("participant", id.uri())])
            .send()
            .await
            .map_err(|e| DirectoryError::Unreachable(e.to_string()))?;
        let status = response.status();
        if !status.is_success() {
            return Err(DirectoryError::Status(status.as_u16()));
        }
        let result: SearchResult = response
            .json()
            .await
            .map_err(|e| DirectoryError::Malformed(e.to_string()))?;
        Ok(entry_of(&result, id))
    }
}

/// The match for exactly `id` (case-insensitive), with its first entity's first name.
fn entry_of(result: &SearchResult, id: &ParticipantId) -> Option<DirectoryEntry> {
    if result.total == 0 {
        return None;
    }
    let wanted = id.key();
    let found = result.matches.iter().find(|m| {
        m.participant.as_ref().is_some_and(|p| {
            p.value.eq_ignore_ascii_case(&wanted)
                && (p.scheme.is_empty() || p.scheme.eq_ignore_ascii_case(super::identifier::SCHEME))
        })
    })?;
    let entity = found.entities.first();
    Some(DirectoryEntry {
        name: entity
            .and_then(|e| e.name.first())
            .map(|n| n.name.trim().to_string())
            .filter(|n| !n.is_empty()),
        country: entity.and_then(|e| e.country_code.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_match_gives_the_name() {
        let json = r#"{"version":"1.0","total-result-count":2,"used-result-count":2,
            "matches":[
              {"participantID":{"scheme":"iso6523-actorid-upis","value":"0245:2022749610"},"entities":[{"name":[{"name":"Other"}]}]},
              {"participantID":{"scheme":"iso6523-actorid-upis","value":"0245:2022749619"},
               "docTypes":[{"scheme":"busdox-docid-qns","value":"x"}],
               "entities":[{"name":[{"name":"Firma s.r.o.","language":"sk"}],"countryCode":"SK","identifiers":[],"regDate":"2026-01-05"}]}]}"#;
        let result: SearchResult = serde_json::from_str(json).expect("json");
        let id = ParticipantId::parse("0245:2022749619").expect("id");
        assert_eq!(
            entry_of(&result, &id),
            Some(DirectoryEntry {
                name: Some("Firma s.r.o.".into()),
                country: Some("SK".into())
            })
        );
        let none: SearchResult =
            serde_json::from_str(r#"{"total-result-count":0,"matches":[]}"#).expect("json");
        assert_eq!(entry_of(&none, &id), None);
    }
}
