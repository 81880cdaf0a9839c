-- 0016: an account's routing rules over several connectors
-- (internal/domain/routing). NULL, as every account has until its rules
-- are set, routes every order to the account's one connector.

ALTER TABLE accounts ADD COLUMN IF NOT EXISTS routing jsonb;
