-- 0027: the velocity check counts an account's recent orders by card, email,
-- address and device (models.CountVelocity). Each value's index now carries
-- the account and created_at too, so a count reads only the window's rows of
-- that value in that account, and the planner prefers it to the account's
-- index whether or not the table has statistics: without them it chose the
-- account's index and read every order the account ever had, on each
-- payment (issue 31). An index led by the value serves the lookups by value
-- alone as before.
-- The new indexes are built first, under names of their own: CREATE INDEX
-- blocks writes to orders while it builds, but not reads. Only then are the
-- old ones dropped and the new ones take their names; DROP INDEX locks the
-- table against reads too, until this migration commits, which is then a
-- moment. On a large orders table run it in a quiet hour
-- (docs/operations.md).
CREATE INDEX IF NOT EXISTS idx_orders_card_fingerprint_0027 ON orders (card_fingerprint, account_id, created_at);
CREATE INDEX IF NOT EXISTS idx_orders_shopper_email_hash_0027 ON orders (shopper_email_hash, account_id, created_at);
CREATE INDEX IF NOT EXISTS idx_orders_shopper_ip_hash_0027 ON orders (shopper_ip_hash, account_id, created_at);
CREATE INDEX IF NOT EXISTS idx_orders_device_fingerprint_hash_0027 ON orders (device_fingerprint_hash, account_id, created_at);
DROP INDEX IF EXISTS idx_orders_card_fingerprint;
DROP INDEX IF EXISTS idx_orders_shopper_email_hash;
DROP INDEX IF EXISTS idx_orders_shopper_ip_hash;
DROP INDEX IF EXISTS idx_orders_device_fingerprint_hash;
ALTER INDEX idx_orders_card_fingerprint_0027 RENAME TO idx_orders_card_fingerprint;
ALTER INDEX idx_orders_shopper_email_hash_0027 RENAME TO idx_orders_shopper_email_hash;
ALTER INDEX idx_orders_shopper_ip_hash_0027 RENAME TO idx_orders_shopper_ip_hash;
ALTER INDEX idx_orders_device_fingerprint_hash_0027 RENAME TO idx_orders_device_fingerprint_hash;
