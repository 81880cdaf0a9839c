-- 0033: the mode of the account a reconciliation item is of. The simulated
-- connectors settle test accounts' orders beside live ones, so the
-- reconciliation's totals and exceptions mixed play money into finance's
-- figures; each item now records its account's mode ('live' for a line
-- of no account here: money nobody can place is finance's to see).
ALTER TABLE recon_items ADD COLUMN IF NOT EXISTS mode varchar(8) NOT NULL DEFAULT 'live';
UPDATE recon_items AS r SET mode = a.mode FROM accounts AS a
 WHERE a.id = r.account_id AND r.account_id <> '' AND r.mode <> a.mode;
CREATE INDEX IF NOT EXISTS idx_recon_items_mode_day ON recon_items (mode, day);
