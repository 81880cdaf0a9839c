-- 0028: a two-line posting in one statement. A paid order's credit (pending
-- up, acquirer clearing down) was a transaction of six round trips to
-- Postgres (begin, the reference's claim, the accounts' lock, the lines, the
-- balances, commit), and the payment's answer waited for them. This
-- function does the same steps, in the same order, in one call: the
-- reference is claimed, both accounts are locked in id order (as every other
-- posting locks them), the lines are written and the balances moved.
--
-- It returns the new entry's id, or NULL when the reference was posted
-- before (the caller then reads that entry and compares, as for any
-- posting). When either account is not open yet it raises SQLSTATE L0001,
-- so that the whole statement, the claim with it, is undone and the caller
-- takes the general path, which opens them. The accounts' ids are taken
-- only from the rows the lock statement locked: a posting that opened them
-- after the lock's snapshot is not seen, and the call falls back rather
-- than write unlocked. It refuses (22023) an amount that is not positive or
-- one kind on both lines. The balance checks of ledger_accounts hold here
-- as everywhere; the caller never sends a debit of a kind that must stay at
-- or above zero.
CREATE OR REPLACE FUNCTION ledger_post_two_lines(
    p_kind text, p_reference text, p_merchant_id text, p_account_id text, p_order_key text,
    p_description text, p_currency text, p_up_kind text, p_down_kind text, p_amount bigint,
    p_at timestamptz
) RETURNS bigint AS $$
DECLARE
    v_entry bigint;
    v_up    bigint;
    v_down  bigint;
BEGIN
    IF p_amount <= 0 OR p_up_kind = p_down_kind THEN
        RAISE EXCEPTION 'ledger_post_two_lines: % % of % and %: not a two-line posting', p_reference, p_amount,
            p_up_kind, p_down_kind USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO journal_entries (kind, reference, merchant_id, account_id, order_key, description, created_at)
    VALUES (p_kind, p_reference, p_merchant_id, p_account_id, p_order_key, p_description, p_at)
    ON CONFLICT (reference) DO NOTHING
    RETURNING id INTO v_entry;
    IF v_entry IS NULL THEN
        RETURN NULL;
    END IF;

    SELECT max(id) FILTER (WHERE kind = p_up_kind), max(id) FILTER (WHERE kind = p_down_kind)
    INTO v_up, v_down
    FROM (SELECT id, kind FROM ledger_accounts
          WHERE merchant_id = p_merchant_id AND account_id = p_account_id AND currency = p_currency
            AND kind IN (p_up_kind, p_down_kind)
          ORDER BY id FOR UPDATE) AS locked;
    IF v_up IS NULL OR v_down IS NULL THEN
        RAISE EXCEPTION 'ledger accounts % and % of %/% in % are not open', p_up_kind, p_down_kind,
            p_merchant_id, p_account_id, p_currency USING ERRCODE = 'L0001';
    END IF;

    INSERT INTO journal_lines (entry_id, ledger_account_id, currency, amount)
    VALUES (v_entry, v_up, p_currency, p_amount), (v_entry, v_down, p_currency, -p_amount);
    UPDATE ledger_accounts
    SET balance = balance + CASE WHEN id = v_up THEN p_amount ELSE -p_amount END, updated_at = p_at
    WHERE id IN (v_up, v_down);
    RETURN v_entry;
END;
$$ LANGUAGE plpgsql;
