-- 0013: a payout keeps the mode of its account (internal/domain/testmode)
-- when it was asked for, so that a test account's payout, and every re-run
-- of it, goes to the simulated rail only. Payouts made before went to the
-- one rail there was: live.

ALTER TABLE payouts ADD COLUMN IF NOT EXISTS mode varchar(8) NOT NULL DEFAULT 'live';

-- A payout asked for by a test account is a test payout, whenever it was
-- made: a finance re-run of one must go to the simulated rail too.
UPDATE payouts p SET mode = a.mode FROM accounts a WHERE a.merchant_id = p.merchant_id AND a.id = p.account_id AND p.mode <> a.mode;
