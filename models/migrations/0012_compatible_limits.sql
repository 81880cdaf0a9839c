-- 0012: what a compatible signature, once seen, can do on a live account
-- that chose that scheme. A refund signed with encryption_data counts
-- against a daily limit per currency (0: no limit, as for every account
-- made before), and a compatible signature of an operation that moves
-- money is remembered with the first body it came with, so that the same
-- signature with other content is reported to ops.

ALTER TABLE accounts ADD COLUMN IF NOT EXISTS compatible_refund_daily_limit bigint NOT NULL DEFAULT 0;

CREATE TABLE IF NOT EXISTS compatible_refund_usage (
    account_id varchar(32) NOT NULL,
    day        date        NOT NULL,
    currency   varchar(3)  NOT NULL,
    amount     bigint      NOT NULL,
    PRIMARY KEY (account_id, day, currency)
);

CREATE TABLE IF NOT EXISTS signature_uses (
    account_id         varchar(32) NOT NULL,
    signature_hash     varchar(64) NOT NULL,
    operation          varchar(64) NOT NULL,
    body_fingerprint   varchar(64) NOT NULL,
    other_content_uses bigint      NOT NULL DEFAULT 0,
    first_seen         timestamptz NOT NULL,
    last_seen          timestamptz NOT NULL,
    PRIMARY KEY (account_id, signature_hash)
);
CREATE INDEX IF NOT EXISTS idx_signature_uses_last_seen ON signature_uses (last_seen);
