-- 0011: a refund's columns hold what the order workflow can write. Its
-- reference is <transaction_id>-NN numbered per order, 25 characters from
-- the 10,000th refund on; the acquirer's refund id is the acquirer's to
-- choose, so it has no limit. A value too long was refused by Postgres and
-- the workflow's write retried without end, holding the order's lock.

ALTER TABLE refunds ALTER COLUMN refund_reference_id TYPE varchar(32);
ALTER TABLE refunds ALTER COLUMN acquirer_ref TYPE text;
