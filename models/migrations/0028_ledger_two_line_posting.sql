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
-- posting). When either account is not open yet it raises no_data_found, so
-- that the whole statement, the claim with it, is undone and the caller
-- takes the general path, which opens them. The balance checks of
-- ledger_accounts hold here as everywhere.
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
    INSERT INTO journal_entries (kind, reference, merchant_id, account_id, order_key, description, created_at)
    VALUES (p_kind, p_reference, p_merchant_id, p_account_id, p_order_key, p_description, p_at)
    ON CONFLICT (reference) DO NOTHING
    RETURNING id INTO v_entry;
    IF v_entry IS NULL THEN
        RETURN NULL;
    END IF;

    PERFORM 1 FROM ledger_accounts
    WHERE merchant_id = p_merchant_id AND account_id = p_account_id AND currency = p_currency
      AND kind IN (p_up_kind, p_down_kind)
    ORDER BY id FOR UPDATE;
    SELECT id INTO v_up FROM ledger_accounts
    WHERE merchant_id = p_merchant_id AND account_id = p_account_id AND currency = p_currency AND kind = p_up_kind;
    SELECT id INTO v_down FROM ledger_accounts
    WHERE merchant_id = p_merchant_id AND account_id = p_account_id AND currency = p_currency AND kind = p_down_kind;
    IF v_up IS NULL OR v_down IS NULL THEN
        RAISE EXCEPTION 'ledger accounts % and % of %/% in % are not open', p_up_kind, p_down_kind,
            p_merchant_id, p_account_id, p_currency USING ERRCODE = 'no_data_found';
    END IF;

    INSERT INTO journal_lines (entry_id, ledger_account_id, currency, amount)
    VALUES (v_entry, v_up, p_currency, p_amount), (v_entry, v_down, p_currency, -p_amount);
    UPDATE ledger_accounts
    SET balance = balance + CASE WHEN id = v_up THEN p_amount ELSE -p_amount END, updated_at = p_at
    WHERE id IN (v_up, v_down);
    RETURN v_entry;
END;
$$ LANGUAGE plpgsql;
