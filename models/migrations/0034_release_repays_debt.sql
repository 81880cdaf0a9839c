-- 0034: a payout reservation's release repays what the merchant owes
-- (dispute_debt: disputes and refunds the deposit could not cover) before
-- its money reaches the deposit, as a capture's settlement and a top-up
-- do, so that no payout draws on a deposit beside a debt. The function is
-- 0031's with the release's change: it also locks the merchant's debt
-- account, when there is one, in the same id-ordered statement, and splits
-- the released money between the debt and the deposit (no zero line).

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
    v_debt     bigint;
    v_repay    bigint := 0;
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
           max(id) FILTER (WHERE kind = 'reserved'), max(balance) FILTER (WHERE kind = 'reserved'),
           max(balance) FILTER (WHERE kind = 'dispute_debt')
    INTO v_ids, v_found, v_reserved, v_balance, v_debt
    FROM (SELECT id, kind, balance FROM ledger_accounts
          WHERE merchant_id = r.merchant_id AND account_id = r.account_id AND currency = r.currency
            AND (kind = ANY (v_kinds) OR (v_kind = 'release' AND kind = 'dispute_debt'))
          ORDER BY id FOR UPDATE) AS locked;
    IF (SELECT count(*) FROM unnest(coalesce(v_found, ARRAY[]::text[])) AS f(kind) WHERE f.kind = ANY (v_kinds))
           <> cardinality(v_kinds) THEN
        RAISE EXCEPTION 'ledger accounts % of %/% in % are not all open', v_kinds,
            r.merchant_id, r.account_id, r.currency USING ERRCODE = 'L0001';
    END IF;
    IF v_balance - v_total < 0 THEN
        RAISE EXCEPTION 'reserved balance %, % needs %', v_balance, v_kind, v_total USING ERRCODE = 'L0002';
    END IF;
    IF v_kind = 'release' AND coalesce(v_debt, 0) < 0 THEN
        v_repay := least(-v_debt, v_total);
        v_kinds := v_kinds || 'dispute_debt'::text;
    END IF;

    -- The lines in the general path's order: reserved first.
    INSERT INTO journal_lines (entry_id, ledger_account_id, currency, amount)
    SELECT v_entry, l.id, r.currency, l.amount
    FROM (SELECT a.id, k.n,
                 CASE k.kind
                     WHEN 'reserved' THEN -v_total
                     WHEN 'rail_clearing' THEN r.amount
                     WHEN 'fee_income' THEN r.fee
                     WHEN 'deposit' THEN v_total - v_repay
                     WHEN 'dispute_debt' THEN v_repay
                 END AS amount
          FROM unnest(v_kinds) WITH ORDINALITY AS k(kind, n)
          JOIN unnest(v_ids, v_found) AS a(id, kind) ON a.kind = k.kind) AS l
    WHERE l.amount <> 0
    ORDER BY l.n;
    UPDATE ledger_accounts
    SET balance = balance + CASE kind
                                WHEN 'reserved' THEN -v_total
                                WHEN 'rail_clearing' THEN r.amount
                                WHEN 'fee_income' THEN r.fee
                                WHEN 'deposit' THEN v_total - v_repay
                                WHEN 'dispute_debt' THEN v_repay
                            END,
        updated_at = p_at
    WHERE id = ANY (v_ids) AND kind = ANY (v_kinds);
    UPDATE ledger_reservations SET status = p_to, closed_at = p_at WHERE reference = p_reference;
    RETURN v_entry;
END;
$$ LANGUAGE plpgsql;
