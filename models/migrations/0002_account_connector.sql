-- 0002: accounts name the acquirer connector their new orders go to
-- (models.Account.Connector). Accounts made before they chose keep the
-- simulated acquirer, the only connector until then.

ALTER TABLE accounts ADD COLUMN IF NOT EXISTS connector varchar(32) NOT NULL DEFAULT 'sim-acquirer';
