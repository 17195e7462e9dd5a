//! Instances sharing the database: who is running with which rule packs, and the rule-pack
//! generation through which a reload on one instance reaches the others.

use sqlx::Row;

use super::{opt_text, text, Store, StoreError};

/// One instance as it last reported itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceRow {
    pub id: String,
    pub host: String,
    pub started_at: String,
    pub seen_at: String,
    /// JSON array of `id@version`.
    pub rulepacks: String,
    /// `current` or `last-good` (see `/ready`).
    pub rulepack_set: String,
}

/// The last announced rule-pack reload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generation {
    pub generation: i64,
    /// The instance that announced it.
    pub instance_id: Option<String>,
}

impl Store {
    /// Record that `row.id` is alive now, with its packs (an insert the first time).
    pub async fn instance_seen(&self, row: &InstanceRow) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO instances (id, host, started_at, seen_at, rulepacks, rulepack_set) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at, \
             rulepacks = excluded.rulepacks, rulepack_set = excluded.rulepack_set",
        )
        .bind(&row.id)
        .bind(&row.host)
        .bind(&row.started_at)
        .bind(&row.seen_at)
        .bind(&row.rulepacks)
        .bind(&row.rulepack_set)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// An instance that stops cleanly leaves the list at once.
    pub async fn instance_gone(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM instances WHERE id = $1")
            .bind(id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Remove the rows of instances last seen before `before` (killed, never stopped).
    pub async fn forget_instances(&self, before: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM instances WHERE seen_at < $1")
            .bind(before)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Instances seen at or after `since`, oldest start first.
    pub async fn instances(&self, since: &str) -> Result<Vec<InstanceRow>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, host, started_at, seen_at, rulepacks, rulepack_set FROM instances \
             WHERE seen_at >= $1 ORDER BY started_at, id",
        )
        .bind(since)
        .fetch_all(self.pool())
        .await?;
        rows.iter()
            .map(|r| {
                Ok(InstanceRow {
                    id: text(r, "id")?,
                    host: text(r, "host")?,
                    started_at: text(r, "started_at")?,
                    seen_at: text(r, "seen_at")?,
                    rulepacks: text(r, "rulepacks")?,
                    rulepack_set: text(r, "rulepack_set")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(Into::into)
    }

    /// The rule-pack generation now.
    pub async fn rulepack_generation(&self) -> Result<Generation, StoreError> {
        let row =
            sqlx::query("SELECT generation, instance_id FROM rulepack_generation WHERE id = 1")
                .fetch_one(self.pool())
                .await?;
        Ok(Generation {
            generation: row.try_get::<i64, _>("generation")?,
            instance_id: opt_text(&row, "instance_id")?,
        })
    }

    /// Announce that `instance_id` reloaded its packs (now `rulepacks`); the new generation.
    pub async fn announce_rulepacks(
        &self,
        instance_id: &str,
        rulepacks: &str,
        at: &str,
    ) -> Result<i64, StoreError> {
        let row = sqlx::query(
            "UPDATE rulepack_generation SET generation = generation + 1, instance_id = $1, \
             rulepacks = $2, changed_at = $3 WHERE id = 1 RETURNING generation",
        )
        .bind(instance_id)
        .bind(rulepacks)
        .bind(at)
        .fetch_one(self.pool())
        .await?;
        Ok(row.try_get::<i64, _>("generation")?)
    }
}
