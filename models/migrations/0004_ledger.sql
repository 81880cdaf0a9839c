-- 0004: the double-entry ledger (models/ledger.go, internal/adapters/ledger).
--
-- Amounts are signed minor units: a positive line credits its account, a
-- negative one debits it, and each journal entry's lines sum to zero per
-- currency. An account's balance column is the sum of its lines, updated in
-- the transaction that posts them while the account's row is locked; the
-- CHECK on it is the last guard that a merchant's deposit or reserved
-- balance never goes below zero.
--
-- IF NOT EXISTS: a database whose tables an older tool made with gorm's
-- AutoMigrate of the models (as before versioned migrations) is adopted as
-- it is.

CREATE TABLE IF NOT EXISTS ledger_accounts (
    id          bigserial   NOT NULL,
    merchant_id varchar(32) NOT NULL,
    account_id  varchar(32) NOT NULL,
    currency    varchar(3)  NOT NULL,
    kind        varchar(32) NOT NULL,
    balance     bigint      NOT NULL DEFAULT 0,
    created_at  timestamptz,
    updated_at  timestamptz,
    CONSTRAINT ledger_accounts_pkey PRIMARY KEY (id),
    CONSTRAINT ledger_accounts_kind_check CHECK (kind IN ('deposit','reserved','acquirer_clearing','rail_clearing','fee_income','operator_funding')),
    CONSTRAINT ledger_accounts_balance_check CHECK (kind NOT IN ('deposit','reserved') OR balance >= 0)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_ledger_accounts_key ON ledger_accounts (merchant_id, account_id, currency, kind);

CREATE TABLE IF NOT EXISTS journal_entries (
    id          bigserial    NOT NULL,
    kind        varchar(16)  NOT NULL,
    reference   varchar(255) NOT NULL,
    merchant_id varchar(32)  NOT NULL,
    account_id  varchar(32)  NOT NULL,
    description varchar(500) NOT NULL DEFAULT '',
    created_at  timestamptz  NOT NULL,
    CONSTRAINT journal_entries_pkey PRIMARY KEY (id),
    CONSTRAINT journal_entries_kind_check CHECK (kind IN ('order_paid','refund','topup','reserve','settle','release'))
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_journal_entries_reference ON journal_entries (reference);
CREATE INDEX IF NOT EXISTS idx_journal_entries_owner ON journal_entries (merchant_id, account_id);
CREATE INDEX IF NOT EXISTS idx_journal_entries_created_at ON journal_entries (created_at);

CREATE TABLE IF NOT EXISTS journal_lines (
    id                bigserial  NOT NULL,
    entry_id          bigint     NOT NULL,
    ledger_account_id bigint     NOT NULL,
    currency          varchar(3) NOT NULL,
    amount            bigint     NOT NULL,
    CONSTRAINT journal_lines_pkey PRIMARY KEY (id),
    CONSTRAINT journal_lines_amount_check CHECK (amount <> 0),
    CONSTRAINT fk_journal_lines_entry FOREIGN KEY (entry_id) REFERENCES journal_entries (id),
    CONSTRAINT fk_journal_lines_account FOREIGN KEY (ledger_account_id) REFERENCES ledger_accounts (id)
);
CREATE INDEX IF NOT EXISTS idx_journal_lines_entry_id ON journal_lines (entry_id);
CREATE INDEX IF NOT EXISTS idx_journal_lines_ledger_account_id ON journal_lines (ledger_account_id);

-- Funds set aside for one payout, from its reserve entry until a settle or
-- a release entry closes it.
CREATE TABLE IF NOT EXISTS ledger_reservations (
    reference   varchar(200) NOT NULL,
    merchant_id varchar(32)  NOT NULL,
    account_id  varchar(32)  NOT NULL,
    currency    varchar(3)   NOT NULL,
    amount      bigint       NOT NULL,
    fee         bigint       NOT NULL,
    status      varchar(16)  NOT NULL,
    created_at  timestamptz,
    closed_at   timestamptz,
    CONSTRAINT ledger_reservations_pkey PRIMARY KEY (reference),
    CONSTRAINT ledger_reservations_status_check CHECK (status IN ('open','settled','released'))
);
CREATE INDEX IF NOT EXISTS idx_ledger_reservations_owner ON ledger_reservations (merchant_id, account_id);
