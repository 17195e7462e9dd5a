-- Several instances on one database (issue 22). Portable SQL: timestamps RFC 3339 text.

-- Each running instance, refreshed every few seconds: what `/ready` lists, so an operator
-- sees whether every instance serves the same rule packs. `rulepacks` is a JSON array of
-- `id@version`. Rows of instances not seen for a day are removed by the others.
CREATE TABLE instances (
    id          TEXT PRIMARY KEY,
    host        TEXT NOT NULL,
    started_at  TEXT NOT NULL,
    seen_at     TEXT NOT NULL,
    rulepacks   TEXT NOT NULL,
    rulepack_set TEXT NOT NULL
);

-- One row: the rule-pack generation. An instance whose packs reloaded (API or file
-- watcher) counts it up; the others see the new number and reload their own packs.
CREATE TABLE rulepack_generation (
    id          BIGINT PRIMARY KEY,
    generation  BIGINT NOT NULL,
    instance_id TEXT,
    rulepacks   TEXT,
    changed_at  TEXT
);
INSERT INTO rulepack_generation (id, generation) VALUES (1, 0);
