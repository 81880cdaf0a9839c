-- 0023: disputes (issue 30). The ledger holds a dispute's money in
-- dispute_hold (never below zero) and what the hold took beyond the
-- merchant's available funds in dispute_debt (below zero: the merchant
-- owes it); entries hold, release (won) and take (lost) it. The disputes
-- themselves are models.Dispute, their evidence models.DisputeEvidence
-- (sealed).
ALTER TABLE ledger_accounts DROP CONSTRAINT IF EXISTS ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check CHECK (kind IN ('deposit','reserved','acquirer_clearing','rail_clearing','fee_income','operator_funding','pending','settlement_cash','fee_expense','write_off','dispute_hold','dispute_debt'));
ALTER TABLE ledger_accounts DROP CONSTRAINT IF EXISTS ledger_accounts_balance_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_balance_check CHECK (kind NOT IN ('deposit','reserved','pending','dispute_hold') OR balance >= 0);
ALTER TABLE journal_entries DROP CONSTRAINT IF EXISTS journal_entries_kind_check;
ALTER TABLE journal_entries ADD CONSTRAINT journal_entries_kind_check CHECK (kind IN ('order_paid','refund','topup','reserve','settle','release','settlement','write_off','dispute_hold','dispute_release','dispute_lost'));

CREATE TABLE IF NOT EXISTS disputes (
    id             varchar(120) NOT NULL,
    connector      varchar(32)  NOT NULL,
    connector_ref  varchar(80)  NOT NULL,
    workflow_id    varchar(200) NOT NULL,
    transaction_id varchar(19)  NOT NULL,
    merchant_id    varchar(32)  NOT NULL,
    account_id     varchar(32)  NOT NULL,
    order_no       varchar(64)  NOT NULL,
    currency       varchar(3)   NOT NULL,
    amount         bigint       NOT NULL,
    fee            bigint       NOT NULL DEFAULT 0,
    reason         varchar(64)  NOT NULL DEFAULT '',
    stage          varchar(20)  NOT NULL,
    status         varchar(20)  NOT NULL,
    evidence_due   timestamptz,
    held           boolean      NOT NULL DEFAULT false,
    submitted_at   timestamptz,
    created_at     timestamptz  NOT NULL,
    updated_at     timestamptz  NOT NULL,
    CONSTRAINT disputes_pkey PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS idx_disputes_transaction_id ON disputes (transaction_id);
CREATE INDEX IF NOT EXISTS idx_disputes_account_created ON disputes (account_id, created_at);
CREATE INDEX IF NOT EXISTS idx_disputes_status ON disputes (status);

CREATE TABLE IF NOT EXISTS dispute_evidences (
    id           varchar(40)  NOT NULL,
    dispute_id   varchar(120) NOT NULL,
    kind         varchar(8)   NOT NULL,
    name         varchar(64)  NOT NULL,
    content_type varchar(64)  NOT NULL,
    size         bigint       NOT NULL,
    key_id       varchar(64)  NOT NULL,
    sealed       bytea        NOT NULL,
    created_at   timestamptz,
    CONSTRAINT dispute_evidences_pkey PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS idx_dispute_evidences_dispute_id ON dispute_evidences (dispute_id);
