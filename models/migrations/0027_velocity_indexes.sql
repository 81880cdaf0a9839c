-- 0027: the velocity check counts an account's recent orders by card, email,
-- address and device (models.CountVelocity). Each value's index now carries
-- created_at too, so the count reads only the window's rows of that value,
-- and the planner prefers it to the account's index whether or not the
-- table has statistics: without them it chose the account's index and read
-- every order the account ever had, on each payment (issue 31). An index
-- led by the value serves the lookups by value alone as before.
-- CREATE INDEX takes the table's write lock for as long as it builds: on a
-- large orders table run this migration in a quiet hour (docs/operations.md).
DROP INDEX IF EXISTS idx_orders_card_fingerprint;
CREATE INDEX IF NOT EXISTS idx_orders_card_fingerprint ON orders (card_fingerprint, created_at);
DROP INDEX IF EXISTS idx_orders_shopper_email_hash;
CREATE INDEX IF NOT EXISTS idx_orders_shopper_email_hash ON orders (shopper_email_hash, created_at);
DROP INDEX IF EXISTS idx_orders_shopper_ip_hash;
CREATE INDEX IF NOT EXISTS idx_orders_shopper_ip_hash ON orders (shopper_ip_hash, created_at);
DROP INDEX IF EXISTS idx_orders_device_fingerprint_hash;
CREATE INDEX IF NOT EXISTS idx_orders_device_fingerprint_hash ON orders (device_fingerprint_hash, created_at);
