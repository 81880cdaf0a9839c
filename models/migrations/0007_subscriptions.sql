-- 0007: subscriptions (models/subscription.go), one row per subscription
-- workflow subscription/{merchant_id}/{recurring_id}. The workflow writes
-- it; the API reads it for the answers' recurring_* fields and for
-- subscription_result. Each charge is an order of its own whose row names
-- the subscription (orders.recurring_id) and its cycle.

CREATE TABLE IF NOT EXISTS subscriptions (
    recurring_id          varchar(32)  NOT NULL,
    workflow_id           varchar(200) NOT NULL,
    merchant_id           varchar(32)  NOT NULL,
    account_id            varchar(32)  NOT NULL,
    first_transaction_id  varchar(19)  NOT NULL,
    token_id              varchar(64)  NOT NULL,
    contract_name         varchar(64)  NOT NULL,
    terms                 jsonb        NOT NULL,
    period                varchar(32)  NOT NULL,
    status                bigint       NOT NULL,
    charges               bigint       NOT NULL DEFAULT 1,
    failed_attempts       bigint       NOT NULL DEFAULT 0,
    next_charge_at        timestamptz,
    created_at            timestamptz  NOT NULL,
    updated_at            timestamptz  NOT NULL,
    CONSTRAINT subscriptions_pkey PRIMARY KEY (recurring_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_subscriptions_workflow_id ON subscriptions (workflow_id);
CREATE INDEX IF NOT EXISTS idx_subscriptions_account ON subscriptions (account_id);

ALTER TABLE orders ADD COLUMN IF NOT EXISTS recurring_id varchar(32) NOT NULL DEFAULT '';
ALTER TABLE orders ADD COLUMN IF NOT EXISTS recurring_cycle bigint NOT NULL DEFAULT 0;
