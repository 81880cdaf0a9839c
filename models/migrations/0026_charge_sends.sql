-- 0026: every charge a routed order sends to a connector, noted before it
-- is sent (models/chargesend.go). A worker that takes over after a crash
-- runs the charge again; finding the note, it knows an earlier attempt may
-- have charged, so a connector that is down or skipped by its breaker is
-- asked about the charge before the payment moves to the next connector.
CREATE TABLE IF NOT EXISTS charge_sends (
    idempotency_key varchar(200) NOT NULL,
    connector       varchar(32)  NOT NULL,
    sent_at         timestamptz  NOT NULL,
    CONSTRAINT charge_sends_pkey PRIMARY KEY (idempotency_key)
);
