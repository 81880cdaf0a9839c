-- 0024: the acquirer's side of disputes (issue 30). A settlement report's
-- chargeback line (the acquirer took the disputed money, or gave it back
-- when the dispute was won) posts against dispute_clearing, and a lost
-- dispute's hold closes against it, so a dispute moves the merchant's money
-- once whether or not the acquirer's report tells of it.
ALTER TABLE ledger_accounts DROP CONSTRAINT IF EXISTS ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check CHECK (kind IN ('deposit','reserved','acquirer_clearing','rail_clearing','fee_income','operator_funding','pending','settlement_cash','fee_expense','write_off','dispute_hold','dispute_debt','dispute_clearing'));
