-- 0001: the schema as gorm's AutoMigrate of models.All() and the hand-made
-- node lease, replay and nonce tables left it before versioned migrations.
-- Every statement says IF NOT EXISTS, so a database those older releases
-- made is adopted as it is: this migration then only records version 1.

CREATE TABLE IF NOT EXISTS merchants (
    id         varchar(32)  NOT NULL,
    name       varchar(200) NOT NULL,
    created_at timestamptz,
    CONSTRAINT merchants_pkey PRIMARY KEY (id)
);

CREATE TABLE IF NOT EXISTS accounts (
    id                           varchar(32)  NOT NULL,
    merchant_id                  varchar(32)  NOT NULL,
    name                         varchar(200) NOT NULL,
    active                       boolean      NOT NULL DEFAULT true,
    sign_key_id                  varchar(64)  NOT NULL,
    sign_key_sealed              bytea        NOT NULL,
    prev_sign_key_id             varchar(64),
    prev_sign_key_sealed         bytea,
    prev_sign_key_until          timestamptz,
    signing_scheme               varchar(16)  NOT NULL DEFAULT 'compatible',
    capture_mode                 varchar(16)  NOT NULL DEFAULT 'auto',
    allowed_query_ips            jsonb        NOT NULL,
    currencies                   jsonb        NOT NULL,
    amount_limits                jsonb        NOT NULL,
    risk                         jsonb,
    review_window_seconds        bigint       NOT NULL DEFAULT 0,
    authorisation_window_seconds bigint       NOT NULL DEFAULT 0,
    refund_window_seconds        bigint       NOT NULL DEFAULT 0,
    created_at                   timestamptz,
    updated_at                   timestamptz,
    CONSTRAINT accounts_pkey PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS idx_accounts_merchant_id ON accounts (merchant_id);

CREATE TABLE IF NOT EXISTS orders (
    transaction_id      varchar(19)  NOT NULL,
    workflow_id         varchar(300) NOT NULL,
    merchant_id         varchar(32)  NOT NULL,
    account_id          varchar(32)  NOT NULL,
    order_no            varchar(64)  NOT NULL,
    currency            varchar(3)   NOT NULL,
    amount              bigint       NOT NULL,
    payment_status      bigint       NOT NULL,
    order_status        bigint       NOT NULL,
    result_code         varchar(8)   NOT NULL,
    result_message      varchar(300) NOT NULL,
    capture_mode        varchar(16)  NOT NULL,
    captured_amount     bigint       NOT NULL DEFAULT 0,
    refunded_amount     bigint       NOT NULL DEFAULT 0,
    card_masked         varchar(19),
    card_brand          varchar(16),
    card_token          varchar(64),
    card_fingerprint    varchar(64),
    shopper_email       varchar(200),
    shopper_ip          varchar(64),
    request_fingerprint varchar(64)  NOT NULL,
    risk_action         varchar(16),
    risk_score          bigint       NOT NULL DEFAULT 0,
    risk_reasons        jsonb,
    connector           varchar(32),
    connector_ref       varchar(64),
    auth_code           varchar(16),
    is3ds               boolean      NOT NULL DEFAULT false,
    threeds_result      varchar(64),
    details             jsonb        NOT NULL,
    state_version       bigint       NOT NULL DEFAULT 0,
    created_at          timestamptz,
    updated_at          timestamptz,
    CONSTRAINT orders_pkey PRIMARY KEY (transaction_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_orders_workflow_id ON orders (workflow_id);
CREATE UNIQUE INDEX IF NOT EXISTS idx_orders_account_order_no ON orders (account_id, order_no);
CREATE INDEX IF NOT EXISTS idx_orders_merchant_id ON orders (merchant_id);
CREATE INDEX IF NOT EXISTS idx_orders_payment_status ON orders (payment_status);
CREATE INDEX IF NOT EXISTS idx_orders_card_fingerprint ON orders (card_fingerprint);
CREATE INDEX IF NOT EXISTS idx_orders_shopper_email ON orders (shopper_email);
CREATE INDEX IF NOT EXISTS idx_orders_shopper_ip ON orders (shopper_ip);
CREATE INDEX IF NOT EXISTS idx_orders_created_at ON orders (created_at);

CREATE TABLE IF NOT EXISTS refunds (
    refund_reference_id varchar(24)  NOT NULL,
    transaction_id      varchar(19)  NOT NULL,
    merchant_id         varchar(32)  NOT NULL,
    account_id          varchar(32)  NOT NULL,
    order_no            varchar(64)  NOT NULL,
    currency            varchar(3)   NOT NULL,
    amount              bigint       NOT NULL,
    reason              varchar(500),
    status              varchar(16)  NOT NULL,
    result_code         varchar(8)   NOT NULL,
    result_message      varchar(300) NOT NULL,
    acquirer_ref        varchar(64),
    version             bigint       NOT NULL DEFAULT 0,
    created_at          timestamptz,
    settled_at          timestamptz,
    updated_at          timestamptz,
    CONSTRAINT refunds_pkey PRIMARY KEY (refund_reference_id)
);
CREATE INDEX IF NOT EXISTS idx_refunds_transaction_id ON refunds (transaction_id);
CREATE INDEX IF NOT EXISTS idx_refunds_account_id ON refunds (account_id);

CREATE TABLE IF NOT EXISTS notifications (
    notify_id        varchar(40)   NOT NULL,
    transaction_id   varchar(19)   NOT NULL,
    merchant_id      varchar(32)   NOT NULL,
    account_id       varchar(32)   NOT NULL,
    order_no         varchar(64)   NOT NULL,
    seq              bigint        NOT NULL,
    notify_type      varchar(16)   NOT NULL,
    url              varchar(1024) NOT NULL,
    fields           jsonb         NOT NULL,
    status           varchar(16)   NOT NULL,
    attempts         bigint        NOT NULL DEFAULT 0,
    last_attempt_at  timestamptz,
    last_status_code bigint        NOT NULL DEFAULT 0,
    last_error       varchar(500),
    delivered_at     timestamptz,
    created_at       timestamptz,
    updated_at       timestamptz,
    CONSTRAINT notifications_pkey PRIMARY KEY (notify_id)
);
CREATE INDEX IF NOT EXISTS idx_notifications_transaction_id ON notifications (transaction_id);
CREATE INDEX IF NOT EXISTS idx_notifications_account_created ON notifications (account_id, created_at);
CREATE INDEX IF NOT EXISTS idx_notifications_status ON notifications (status);

-- bigserial makes the sequence notification_attempts_id_seq, owned by the
-- column, exactly as gorm's auto-increment primary key did.
CREATE TABLE IF NOT EXISTS notification_attempts (
    id          bigserial    NOT NULL,
    notify_id   varchar(40)  NOT NULL,
    attempt     bigint       NOT NULL,
    at          timestamptz  NOT NULL,
    status_code bigint       NOT NULL,
    latency_ms  bigint       NOT NULL,
    error       varchar(500),
    CONSTRAINT notification_attempts_pkey PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS idx_notification_attempts_notify_id ON notification_attempts (notify_id);

CREATE TABLE IF NOT EXISTS vault_cards (
    token          varchar(64) NOT NULL,
    key_id         varchar(64) NOT NULL,
    card_sealed    bytea       NOT NULL,
    cvv_sealed     bytea,
    fingerprint    varchar(64) NOT NULL,
    created_at     timestamptz,
    cvv_dropped_at timestamptz,
    CONSTRAINT vault_cards_pkey PRIMARY KEY (token)
);
CREATE INDEX IF NOT EXISTS idx_vault_cards_fingerprint ON vault_cards (fingerprint);

CREATE TABLE IF NOT EXISTS blocked_cards (
    fingerprint varchar(64)  NOT NULL,
    reason      varchar(200) NOT NULL,
    created_at  timestamptz,
    CONSTRAINT blocked_cards_pkey PRIMARY KEY (fingerprint)
);

-- Transaction-id node leases (models/nodes.go).
CREATE TABLE IF NOT EXISTS node_leases (
    node        integer     NOT NULL,
    holder      text        NOT NULL,
    acquired_at timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    CONSTRAINT node_leases_pkey PRIMARY KEY (node),
    CONSTRAINT node_leases_node_check CHECK (node BETWEEN 0 AND 1023)
);

-- The replay store: first answers of signed requests and the nonces of
-- strong signatures (models/replay.go).
CREATE TABLE IF NOT EXISTS replay_entries (
    scope         text        NOT NULL,
    operation     text        NOT NULL,
    key           text        NOT NULL,
    fingerprint   text        NOT NULL,
    state         text        NOT NULL,
    claim         text        NOT NULL,
    claimed_until timestamptz NOT NULL,
    status        integer     NOT NULL DEFAULT 0,
    content_type  text        NOT NULL DEFAULT '',
    body          bytea,
    result_code   text        NOT NULL DEFAULT '',
    strong        boolean     NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL,
    expires_at    timestamptz NOT NULL,
    CONSTRAINT replay_entries_pkey PRIMARY KEY (scope, operation, key),
    CONSTRAINT replay_entries_state_check CHECK (state IN ('in_progress', 'done'))
);
CREATE INDEX IF NOT EXISTS idx_replay_entries_expires_at ON replay_entries (expires_at);

CREATE TABLE IF NOT EXISTS signature_nonces (
    account_id text        NOT NULL,
    nonce      text        NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT signature_nonces_pkey PRIMARY KEY (account_id, nonce)
);
CREATE INDEX IF NOT EXISTS idx_signature_nonces_expires_at ON signature_nonces (expires_at);
