-- 0021: the device velocity rule counts an account's orders by the keyed
-- hash of their device_fingerprint (models.Order.DeviceFingerprintHash,
-- issue 29). Orders before it have none and count for nothing.
ALTER TABLE orders ADD COLUMN IF NOT EXISTS device_fingerprint_hash varchar(64) NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS idx_orders_device_fingerprint_hash ON orders (device_fingerprint_hash);
