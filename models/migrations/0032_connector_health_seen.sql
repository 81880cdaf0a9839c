-- 0032: when a worker last said that its breaker still holds its state.
-- A breaker that stays open for days changes no more, so changed_at alone
-- cannot tell it from the row of a worker that stopped long ago; a running
-- worker now writes seen_at every few minutes while its breaker is not
-- closed. The table holds a row per worker and connector: filling the
-- column from changed_at rewrites nothing of size.
ALTER TABLE connector_health ADD COLUMN IF NOT EXISTS seen_at timestamptz;
UPDATE connector_health SET seen_at = changed_at WHERE seen_at IS NULL;
ALTER TABLE connector_health ALTER COLUMN seen_at SET NOT NULL;
