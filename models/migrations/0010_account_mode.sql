-- 0010: accounts are test or live accounts (internal/domain/testmode). The
-- accounts made before are live; `make run` makes its demo accounts test
-- accounts.

ALTER TABLE accounts ADD COLUMN IF NOT EXISTS mode varchar(8) NOT NULL DEFAULT 'live';
