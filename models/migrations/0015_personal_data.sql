-- 0015: shoppers' and beneficiaries' personal data is sealed at rest
-- (models.PersonalData). Orders keep the personal part of their details
-- sealed, with keyed hashes of the email and address for velocity and
-- search; payouts keep their request sealed. SQL cannot seal, so rows
-- written before stay readable as they are until the personal-data
-- workflow seals them (SealLegacyOrders, SealLegacyPayouts) and empties
-- the clear columns, which new rows leave empty.

ALTER TABLE orders ADD COLUMN IF NOT EXISTS shopper_email_hash varchar(64) NOT NULL DEFAULT '';
ALTER TABLE orders ADD COLUMN IF NOT EXISTS shopper_ip_hash varchar(64) NOT NULL DEFAULT '';
ALTER TABLE orders ADD COLUMN IF NOT EXISTS personal_key_id varchar(64) NOT NULL DEFAULT '';
ALTER TABLE orders ADD COLUMN IF NOT EXISTS personal_sealed bytea;
ALTER TABLE orders ADD COLUMN IF NOT EXISTS personal_erased_at timestamptz;
CREATE INDEX IF NOT EXISTS idx_orders_shopper_email_hash ON orders (shopper_email_hash);
CREATE INDEX IF NOT EXISTS idx_orders_shopper_ip_hash ON orders (shopper_ip_hash);
-- Nothing searches the clear columns any more.
DROP INDEX IF EXISTS idx_orders_shopper_email;
DROP INDEX IF EXISTS idx_orders_shopper_ip;

ALTER TABLE payouts ALTER COLUMN request DROP NOT NULL;
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS request_key_id varchar(64) NOT NULL DEFAULT '';
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS request_sealed bytea;
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS beneficiary_email_hash varchar(64) NOT NULL DEFAULT '';
ALTER TABLE payouts ADD COLUMN IF NOT EXISTS personal_erased_at timestamptz;
CREATE INDEX IF NOT EXISTS idx_payouts_beneficiary_email_hash ON payouts (beneficiary_email_hash);

-- Every erasure of personal data, on request or by the retention run, is
-- recorded: who asked, whose (as a keyed hash) and what it reached.
CREATE TABLE IF NOT EXISTS personal_data_erasures (
    id             bigserial PRIMARY KEY,
    requested_by   varchar(200) NOT NULL,
    reason         varchar(500) NOT NULL DEFAULT '',
    merchant_id    varchar(32)  NOT NULL DEFAULT '',
    email_hash     varchar(64)  NOT NULL DEFAULT '',
    transaction_id varchar(19)  NOT NULL DEFAULT '',
    before         timestamptz,
    orders         bigint NOT NULL DEFAULT 0,
    payouts        bigint NOT NULL DEFAULT 0,
    stored_cards   bigint NOT NULL DEFAULT 0,
    vault_cards    bigint NOT NULL DEFAULT 0,
    open           bigint NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_personal_data_erasures_created_at ON personal_data_erasures (created_at);
