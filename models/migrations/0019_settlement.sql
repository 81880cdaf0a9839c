-- 0019: settlement and reconciliation (issue 28).
--
-- The ledger gains the merchant's pending money (captured, not yet settled
-- by the acquirer), the cash the acquirers paid in, their fees and
-- finance's write-offs, and two kinds of entry: an acquirer's settlement
-- and a write-off. Pending, like deposit and reserved, never goes below
-- zero.

ALTER TABLE ledger_accounts DROP CONSTRAINT IF EXISTS ledger_accounts_kind_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_kind_check CHECK (kind IN ('deposit','reserved','acquirer_clearing','rail_clearing','fee_income','operator_funding','pending','settlement_cash','fee_expense','write_off'));
ALTER TABLE ledger_accounts DROP CONSTRAINT IF EXISTS ledger_accounts_balance_check;
ALTER TABLE ledger_accounts ADD CONSTRAINT ledger_accounts_balance_check CHECK (kind NOT IN ('deposit','reserved','pending') OR balance >= 0);
ALTER TABLE journal_entries DROP CONSTRAINT IF EXISTS journal_entries_kind_check;
ALTER TABLE journal_entries ADD CONSTRAINT journal_entries_kind_check CHECK (kind IN ('order_paid','refund','topup','reserve','settle','release','settlement','write_off'));

ALTER TABLE journal_entries ADD COLUMN IF NOT EXISTS order_key varchar(64) NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS idx_journal_entries_order_key ON journal_entries (order_key);

-- What an account pays for its captures (recon.Pricing); NULL passes the
-- acquirer's fee through.
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS pricing jsonb;
-- Where the account hears of each settlement posted to it; '' for nowhere.
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS settlement_notify_url varchar(1024) NOT NULL DEFAULT '';
-- The account's payout schedule (payout.Schedule); NULL pays out on request only.
ALTER TABLE accounts ADD COLUMN IF NOT EXISTS payout_schedule jsonb;

-- One reconciliation of a connector's settlement day (models.ReconRun).
CREATE TABLE IF NOT EXISTS recon_runs (
    connector  varchar(32) NOT NULL,
    day        date        NOT NULL,
    lines      bigint      NOT NULL,
    owed       bigint      NOT NULL,
    exceptions bigint      NOT NULL,
    posted     bigint      NOT NULL DEFAULT 0,
    unposted   bigint      NOT NULL DEFAULT 0,
    ran_at     timestamptz NOT NULL,
    CONSTRAINT recon_runs_pkey PRIMARY KEY (connector, day)
);

-- Every settlement line and every settlement owed of a run, with its class
-- and what finance did with it (models.ReconItem).
CREATE TABLE IF NOT EXISTS recon_items (
    id          bigserial    NOT NULL,
    connector   varchar(32)  NOT NULL,
    day         date         NOT NULL,
    item_key    varchar(300) NOT NULL,
    source      varchar(8)   NOT NULL,
    line_no     bigint       NOT NULL DEFAULT 0,
    order_key   varchar(64)  NOT NULL DEFAULT '',
    owed_key    varchar(64)  NOT NULL DEFAULT '',
    reference   varchar(255) NOT NULL DEFAULT '',
    type        varchar(16)  NOT NULL,
    gross       bigint       NOT NULL DEFAULT 0,
    fee         bigint       NOT NULL DEFAULT 0,
    net         bigint       NOT NULL DEFAULT 0,
    currency    varchar(3)   NOT NULL DEFAULT '',
    class       varchar(32)  NOT NULL,
    detail      varchar(500) NOT NULL DEFAULT '',
    merchant_id varchar(32)  NOT NULL DEFAULT '',
    account_id  varchar(32)  NOT NULL DEFAULT '',
    posted      varchar(255) NOT NULL DEFAULT '',
    post_error  varchar(500) NOT NULL DEFAULT '',
    status      varchar(16)  NOT NULL,
    note        varchar(1000) NOT NULL DEFAULT '',
    acted_by    varchar(255) NOT NULL DEFAULT '',
    acted_at    timestamptz,
    CONSTRAINT recon_items_pkey PRIMARY KEY (id),
    CONSTRAINT recon_items_source_check CHECK (source IN ('line','owed')),
    CONSTRAINT recon_items_status_check CHECK (status IN ('none','open','resolved','written_off','claimed'))
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_recon_items_key ON recon_items (connector, day, item_key);
CREATE INDEX IF NOT EXISTS idx_recon_items_order_key ON recon_items (order_key);
CREATE INDEX IF NOT EXISTS idx_recon_items_status ON recon_items (status);

-- Finance's actions on exceptions, for the audit (models.ReconAction).
CREATE TABLE IF NOT EXISTS recon_actions (
    id      bigserial     NOT NULL,
    item_id bigint        NOT NULL,
    action  varchar(16)   NOT NULL,
    note    varchar(1000) NOT NULL DEFAULT '',
    actor   varchar(255)  NOT NULL,
    at      timestamptz   NOT NULL,
    CONSTRAINT recon_actions_pkey PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS idx_recon_actions_item_id ON recon_actions (item_id);
