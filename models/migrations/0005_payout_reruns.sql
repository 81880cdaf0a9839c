-- 0005: finance's payout re-runs (models/rerun.go, internal/adapters/payoutrerun).
-- One payout_reruns row per batch (who, when, the selection, dry-run or
-- not, totals) and one payout_rerun_items row per payout it reached, written
-- "starting" before the new run is asked of Temporal and "started" after,
-- so a batch killed half-way is resumed by id and does only what is left.

CREATE TABLE IF NOT EXISTS payout_reruns (
    id           bigserial    NOT NULL,
    requested_by varchar(100) NOT NULL,
    source       varchar(8)   NOT NULL,
    selection    jsonb        NOT NULL,
    dry_run      boolean      NOT NULL,
    status       varchar(16)  NOT NULL,
    total        bigint       NOT NULL DEFAULT 0,
    planned      bigint       NOT NULL DEFAULT 0,
    started      bigint       NOT NULL DEFAULT 0,
    skipped      bigint       NOT NULL DEFAULT 0,
    errors       bigint       NOT NULL DEFAULT 0,
    created_at   timestamptz  NOT NULL,
    finished_at  timestamptz,
    CONSTRAINT payout_reruns_pkey PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS idx_payout_reruns_created_at ON payout_reruns (created_at);

CREATE TABLE IF NOT EXISTS payout_rerun_items (
    rerun_id         bigint       NOT NULL,
    payout_id        varchar(200) NOT NULL,
    merchant_id      varchar(32)  NOT NULL DEFAULT '',
    payment_currency varchar(3)   NOT NULL DEFAULT '',
    payment_amount   bigint       NOT NULL DEFAULT 0,
    failure_type     varchar(32)  NOT NULL DEFAULT '',
    outcome          varchar(16)  NOT NULL,
    reason           varchar(500) NOT NULL DEFAULT '',
    run              bigint       NOT NULL DEFAULT 0,
    run_id           varchar(64)  NOT NULL DEFAULT '',
    updated_at       timestamptz  NOT NULL,
    CONSTRAINT payout_rerun_items_pkey PRIMARY KEY (rerun_id, payout_id)
);
