-- 0014: console sign-in attempts are counted before the password is
-- checked, one token bucket per key (an address, an email's hash, a
-- trusted browser), each taken in one statement so that parallel guesses
-- cannot all pass. tat is the bucket's "theoretical arrival time" (GCRA):
-- a row whose tat has passed is a full bucket, and is pruned.

CREATE TABLE IF NOT EXISTS console_login_limits (
    key varchar(100) NOT NULL,
    tat timestamptz  NOT NULL,
    CONSTRAINT console_login_limits_pkey PRIMARY KEY (key)
);
CREATE INDEX IF NOT EXISTS idx_console_login_limits_tat ON console_login_limits (tat);
