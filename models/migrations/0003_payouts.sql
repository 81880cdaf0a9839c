-- 0003: payouts (models/payout.go), one row per payout workflow id
-- payout/{merchant_id}/{request_id}. The payout workflow writes it; the API
-- reads it. Amounts are minor units: payment and beneficiary-receives in
-- the payment currency, the rest in the source (deposit) currency. The
-- indexes serve finance's re-run filters (status, failure type, merchant,
-- time range). IF NOT EXISTS: a database an older release made with
-- gorm's AutoMigrate of every model already has the table.

CREATE TABLE IF NOT EXISTS payouts (
    id                          varchar(200)  NOT NULL,
    merchant_id                 varchar(32)   NOT NULL,
    account_id                  varchar(32)   NOT NULL,
    request_id                  varchar(36)   NOT NULL,
    transaction_id              varchar(19)   NOT NULL,
    short_reference_id          varchar(15)   NOT NULL,
    status                      varchar(16)   NOT NULL,
    failure_type                varchar(32)   NOT NULL DEFAULT '',
    failure_reason              varchar(500)  NOT NULL DEFAULT '',
    payment_currency            varchar(3)    NOT NULL,
    payment_amount              bigint        NOT NULL,
    source_currency             varchar(3)    NOT NULL,
    source_amount               bigint        NOT NULL DEFAULT 0,
    fee_amount                  bigint        NOT NULL DEFAULT 0,
    payer_pays_amount           bigint        NOT NULL DEFAULT 0,
    beneficiary_receives_amount bigint        NOT NULL DEFAULT 0,
    transfer_amount             bigint        NOT NULL DEFAULT 0,
    quote                       jsonb,
    request                     jsonb         NOT NULL,
    notify_url                  varchar(1024) NOT NULL DEFAULT '',
    run                         bigint        NOT NULL DEFAULT 1,
    rail_transfer_id            varchar(64)   NOT NULL DEFAULT '',
    created_at                  timestamptz   NOT NULL,
    updated_at                  timestamptz   NOT NULL,
    CONSTRAINT payouts_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_payouts_transaction_id ON payouts (transaction_id);
CREATE UNIQUE INDEX IF NOT EXISTS idx_payouts_short_reference_id ON payouts (short_reference_id);
CREATE INDEX IF NOT EXISTS idx_payouts_status ON payouts (status);
CREATE INDEX IF NOT EXISTS idx_payouts_failure_type ON payouts (failure_type);
CREATE INDEX IF NOT EXISTS idx_payouts_updated_at ON payouts (updated_at);
CREATE INDEX IF NOT EXISTS idx_payouts_merchant_updated ON payouts (merchant_id, updated_at);
