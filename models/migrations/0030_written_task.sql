-- 0030: the workflow task that made a record write, beside the write's
-- version. A worker that dies after a write committed but before its
-- workflow task completed leaves the next worker to run that task again,
-- and its local activities may answer otherwise this time (the acquirer
-- answered): the second run's write carries the same version as the
-- first's, and must win, for the history keeps the second run's results
-- only. written_task is the start of the task that wrote (Unix nanoseconds,
-- the workflow's time), compared before the version: a later task's write
-- stands. A constant default adds the column without rewriting the table.
ALTER TABLE orders ADD COLUMN IF NOT EXISTS written_task bigint NOT NULL DEFAULT 0;
ALTER TABLE refunds ADD COLUMN IF NOT EXISTS written_task bigint NOT NULL DEFAULT 0;
ALTER TABLE notifications ADD COLUMN IF NOT EXISTS written_task bigint NOT NULL DEFAULT 0;
