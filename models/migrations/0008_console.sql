-- 0008: the web console (api/console, models/console.go): its users with
-- their roles and argon2id password hashes, their sessions (the cookie's
-- token is kept hashed), failed sign-ins counted to slow guessing, and the
-- one-time ids of the forms that changed something, so a double click does
-- it once.

CREATE TABLE IF NOT EXISTS console_users (
    id            bigserial    NOT NULL,
    email         varchar(254) NOT NULL,
    name          varchar(100) NOT NULL DEFAULT '',
    password_hash varchar(200) NOT NULL,
    role          varchar(16)  NOT NULL,
    merchant_id   varchar(32)  NOT NULL DEFAULT '',
    created_at    timestamptz  NOT NULL,
    disabled_at   timestamptz,
    CONSTRAINT console_users_pkey PRIMARY KEY (id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_console_users_email ON console_users (email);

CREATE TABLE IF NOT EXISTS console_sessions (
    token_hash varchar(64) NOT NULL,
    user_id    bigint      NOT NULL,
    csrf_token varchar(64) NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CONSTRAINT console_sessions_pkey PRIMARY KEY (token_hash)
);
CREATE INDEX IF NOT EXISTS idx_console_sessions_user ON console_sessions (user_id);

CREATE TABLE IF NOT EXISTS console_login_failures (
    id         bigserial    NOT NULL,
    email      varchar(254) NOT NULL,
    client_ip  varchar(64)  NOT NULL,
    created_at timestamptz  NOT NULL,
    CONSTRAINT console_login_failures_pkey PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS idx_console_login_failures_email ON console_login_failures (email, created_at);
CREATE INDEX IF NOT EXISTS idx_console_login_failures_ip ON console_login_failures (client_ip, created_at);

CREATE TABLE IF NOT EXISTS console_actions (
    form_id    varchar(64)  NOT NULL,
    user_id    bigint       NOT NULL,
    action     varchar(32)  NOT NULL,
    subject    varchar(64)  NOT NULL,
    outcome    varchar(500) NOT NULL DEFAULT '',
    created_at timestamptz  NOT NULL,
    CONSTRAINT console_actions_pkey PRIMARY KEY (form_id)
);

-- The console's order list filters an account's or merchant's orders and
-- pages them newest first.
CREATE INDEX IF NOT EXISTS idx_orders_merchant_created ON orders (merchant_id, created_at DESC, transaction_id DESC);
