-- 0006: stored cards (models/storedcard.go). A paid card order with
-- token_flag=YES, or one that starts a subscription, keeps its vault entry
-- for the merchant's account under a token_id; later payments of that
-- account may charge it without the card. The card itself stays sealed in
-- vault_cards; this row only scopes the entry to one account and records
-- when the merchant deleted it. Orders remember the token_id they made or
-- used, so the answer and the query can show it.

CREATE TABLE IF NOT EXISTS stored_cards (
    token_id              varchar(64)  NOT NULL,
    merchant_id           varchar(32)  NOT NULL,
    account_id            varchar(32)  NOT NULL,
    vault_token           varchar(64)  NOT NULL,
    card_masked           varchar(19)  NOT NULL,
    card_brand            varchar(16)  NOT NULL DEFAULT '',
    card_fingerprint      varchar(64)  NOT NULL,
    source_transaction_id varchar(19)  NOT NULL,
    created_at            timestamptz  NOT NULL,
    deleted_at            timestamptz,
    CONSTRAINT stored_cards_pkey PRIMARY KEY (token_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_stored_cards_source ON stored_cards (source_transaction_id);
CREATE INDEX IF NOT EXISTS idx_stored_cards_account ON stored_cards (account_id);

ALTER TABLE orders ADD COLUMN IF NOT EXISTS token_id varchar(64) NOT NULL DEFAULT '';
