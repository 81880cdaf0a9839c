-- 0018: each worker's circuit breaker per connector (models.ConnectorHealth),
-- written when it changes state, for the console's ops view.

CREATE TABLE IF NOT EXISTS connector_health (
    connector  varchar(32)  NOT NULL,
    worker     varchar(200) NOT NULL,
    state      varchar(16)  NOT NULL,
    changed_at timestamptz  NOT NULL,
    CONSTRAINT connector_health_pkey PRIMARY KEY (connector, worker)
);
