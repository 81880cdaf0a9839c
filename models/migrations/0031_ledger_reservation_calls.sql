-- 0031: a payout's reservation, and its settlement or release, in one
-- statement each. Every payout of a merchant account locks that account's
-- reserved balance twice (to reserve, then to settle or release), and each
-- was a transaction of six or seven round trips to Postgres with the lock
-- held from the accounts' lock to the commit: at 64 payouts in flight on
-- one account the lock waits reached seconds. These functions take the same
-- steps as the general path (internal/adapters/ledger: post, Reserve,
-- closeReservation), in the same order and under the same locks, inside
-- Postgres, so the lock is held for the call's own work only.
--
-- Both return NULL, and write nothing, when the case is not theirs: the
-- reference posted before (a repeat), a reservation in a state the general
-- path must judge. They raise SQLSTATE L0001 (as ledger_post_two_lines
-- does) when an account is not open yet, undoing the whole call, and
-- L0002 when a balance that must stay at or above zero would go below it.
-- The caller then takes the general path, or reports insufficient funds.

CREATE OR REPLACE FUNCTION ledger_reserve(
    p_reference text, p_merchant_id text, p_account_id text, p_currency text,
    p_amount bigint, p_fee bigint, p_description text, p_at timestamptz
) RETURNS bigint AS $$
DECLARE
    v_entry    bigint;
    v_deposit  bigint;
    v_reserved bigint;
    v_balance  bigint;
    v_total    bigint := p_amount + p_fee;
BEGIN
    IF p_amount <= 0 OR p_fee < 0 THEN
        RAISE EXCEPTION 'ledger_reserve: % amount % fee %: out of range', p_reference, p_amount, p_fee
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO journal_entries (kind, reference, merchant_id, account_id, order_key, description, created_at)
    VALUES ('reserve', p_reference, p_merchant_id, p_account_id, '', p_description, p_at)
    ON CONFLICT (reference) DO NOTHING
    RETURNING id INTO v_entry;
    IF v_entry IS NULL THEN
        RETURN NULL;
    END IF;

    SELECT max(id) FILTER (WHERE kind = 'deposit'), max(id) FILTER (WHERE kind = 'reserved'),
           max(balance) FILTER (WHERE kind = 'deposit')
    INTO v_deposit, v_reserved, v_balance
    FROM (SELECT id, kind, balance FROM ledger_accounts
          WHERE merchant_id = p_merchant_id AND account_id = p_account_id AND currency = p_currency
            AND kind IN ('deposit', 'reserved')
          ORDER BY id FOR UPDATE) AS locked;
    IF v_deposit IS NULL OR v_reserved IS NULL THEN
        RAISE EXCEPTION 'ledger accounts deposit and reserved of %/% in % are not open',
            p_merchant_id, p_account_id, p_currency USING ERRCODE = 'L0001';
    END IF;
    IF v_balance - v_total < 0 THEN
        RAISE EXCEPTION 'deposit balance %, reserve needs %', v_balance, v_total USING ERRCODE = 'L0002';
    END IF;

    INSERT INTO journal_lines (entry_id, ledger_account_id, currency, amount)
    VALUES (v_entry, v_deposit, p_currency, -v_total), (v_entry, v_reserved, p_currency, v_total);
    UPDATE ledger_accounts
    SET balance = balance + CASE WHEN id = v_reserved THEN v_total ELSE -v_total END, updated_at = p_at
    WHERE id IN (v_deposit, v_reserved);
    INSERT INTO ledger_reservations (reference, merchant_id, account_id, currency, amount, fee, status, created_at)
    VALUES (p_reference, p_merchant_id, p_account_id, p_currency, p_amount, p_fee, 'open', p_at);
    RETURN v_entry;
END;
$$ LANGUAGE plpgsql;

-- ledger_close_reservation settles (p_to 'settled': the amount to rail
-- clearing, the fee to fee income) or releases (p_to 'released': both back
-- to the deposit) an open reservation, under its row's lock, and returns
-- the closing entry's id. It returns NULL for a reservation that is not
-- open, or missing, or whose closing reference was posted before: the
-- general path judges those (a no-op, ErrReservationClosed,
-- ErrReservationNotFound).
CREATE OR REPLACE FUNCTION ledger_close_reservation(
    p_reference text, p_to text, p_description text, p_at timestamptz
) RETURNS bigint AS $$
DECLARE
    r          ledger_reservations%ROWTYPE;
    v_kind     text;
    v_entry    bigint;
    v_total    bigint;
    v_kinds    text[];
    v_ids      bigint[];
    v_found    text[];
    v_reserved bigint;
    v_balance  bigint;
BEGIN
    IF p_to = 'settled' THEN
        v_kind := 'settle';
    ELSIF p_to = 'released' THEN
        v_kind := 'release';
    ELSE
        RAISE EXCEPTION 'ledger_close_reservation: % to %: not a closing status', p_reference, p_to
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    SELECT * INTO r FROM ledger_reservations WHERE reference = p_reference FOR UPDATE;
    IF NOT FOUND OR r.status <> 'open' THEN
        RETURN NULL;
    END IF;
    v_total := r.amount + r.fee;
    IF v_kind = 'settle' THEN
        v_kinds := ARRAY['reserved', 'rail_clearing'];
        IF r.fee > 0 THEN
            v_kinds := v_kinds || 'fee_income'::text;
        END IF;
    ELSE
        v_kinds := ARRAY['reserved', 'deposit'];
    END IF;

    INSERT INTO journal_entries (kind, reference, merchant_id, account_id, order_key, description, created_at)
    VALUES (v_kind, p_reference || '#' || v_kind, r.merchant_id, r.account_id, '', p_description, p_at)
    ON CONFLICT (reference) DO NOTHING
    RETURNING id INTO v_entry;
    IF v_entry IS NULL THEN
        RETURN NULL;
    END IF;

    SELECT array_agg(id ORDER BY id), array_agg(kind::text ORDER BY id),
           max(id) FILTER (WHERE kind = 'reserved'), max(balance) FILTER (WHERE kind = 'reserved')
    INTO v_ids, v_found, v_reserved, v_balance
    FROM (SELECT id, kind, balance FROM ledger_accounts
          WHERE merchant_id = r.merchant_id AND account_id = r.account_id AND currency = r.currency
            AND kind = ANY (v_kinds)
          ORDER BY id FOR UPDATE) AS locked;
    IF coalesce(cardinality(v_ids), 0) <> cardinality(v_kinds) THEN
        RAISE EXCEPTION 'ledger accounts % of %/% in % are not all open', v_kinds,
            r.merchant_id, r.account_id, r.currency USING ERRCODE = 'L0001';
    END IF;
    IF v_balance - v_total < 0 THEN
        RAISE EXCEPTION 'reserved balance %, % needs %', v_balance, v_kind, v_total USING ERRCODE = 'L0002';
    END IF;

    -- The lines in the general path's order: reserved first.
    INSERT INTO journal_lines (entry_id, ledger_account_id, currency, amount)
    SELECT v_entry, a.id, r.currency,
           CASE k.kind
               WHEN 'reserved' THEN -v_total
               WHEN 'rail_clearing' THEN r.amount
               WHEN 'fee_income' THEN r.fee
               WHEN 'deposit' THEN v_total
           END
    FROM unnest(v_kinds) WITH ORDINALITY AS k(kind, n)
    JOIN unnest(v_ids, v_found) AS a(id, kind) ON a.kind = k.kind
    ORDER BY k.n;
    UPDATE ledger_accounts
    SET balance = balance + CASE kind
                                WHEN 'reserved' THEN -v_total
                                WHEN 'rail_clearing' THEN r.amount
                                WHEN 'fee_income' THEN r.fee
                                WHEN 'deposit' THEN v_total
                            END,
        updated_at = p_at
    WHERE id = ANY (v_ids);
    UPDATE ledger_reservations SET status = p_to, closed_at = p_at WHERE reference = p_reference;
    RETURN v_entry;
END;
$$ LANGUAGE plpgsql;
