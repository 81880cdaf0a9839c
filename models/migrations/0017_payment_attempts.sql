-- 0017: every charge of a routed order at one of its connectors
-- (models.PaymentAttempt): the order's timeline in the console shows them.

CREATE TABLE IF NOT EXISTS payment_attempts (
    id             bigserial    NOT NULL,
    transaction_id varchar(19)  NOT NULL,
    attempt        bigint       NOT NULL,
    connector      varchar(32)  NOT NULL,
    connector_ref  varchar(100) NOT NULL DEFAULT '',
    outcome        varchar(16)  NOT NULL,
    decline_reason varchar(32)  NOT NULL DEFAULT '',
    latency_ms     bigint       NOT NULL DEFAULT 0,
    why            varchar(200) NOT NULL DEFAULT '',
    at             timestamptz  NOT NULL,
    CONSTRAINT payment_attempts_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_payment_attempts_tx_attempt ON payment_attempts (transaction_id, attempt);
