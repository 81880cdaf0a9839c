-- 0029: the risk check writes its verdict on the order's row, its deciding
-- rule included, so that a check run again for the same order (a worker
-- that died after the charge was sent runs the payment's workflow task
-- again) answers the verdict the charge was made on instead of judging
-- again on facts that moved since. risk_rule is NULL until the check has
-- written a verdict ('' is a verdict no rule decided): an outcome's write
-- sets the action, score and reasons but not the rule. A nullable column
-- without a default is added without rewriting the table.
ALTER TABLE orders ADD COLUMN IF NOT EXISTS risk_rule varchar(64);
