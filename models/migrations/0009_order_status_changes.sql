-- 0009: every change of an order's payment status, as the console's order
-- timeline shows it. A trigger writes it, so no activity that records an
-- order (there are several, retried) can forget it. from_status is 0 for
-- the order's first status.

CREATE TABLE IF NOT EXISTS order_status_changes (
    id             bigserial   NOT NULL,
    transaction_id varchar(19) NOT NULL,
    from_status    bigint      NOT NULL DEFAULT 0,
    to_status      bigint      NOT NULL,
    at             timestamptz NOT NULL,
    CONSTRAINT order_status_changes_pkey PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS idx_order_status_changes_tx ON order_status_changes (transaction_id);

CREATE OR REPLACE FUNCTION record_order_status_change() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO order_status_changes (transaction_id, from_status, to_status, at)
        VALUES (NEW.transaction_id, 0, NEW.payment_status, COALESCE(NEW.created_at, now()));
    ELSIF NEW.payment_status IS DISTINCT FROM OLD.payment_status THEN
        INSERT INTO order_status_changes (transaction_id, from_status, to_status, at)
        VALUES (NEW.transaction_id, OLD.payment_status, NEW.payment_status, now());
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

DROP TRIGGER IF EXISTS orders_status_changes ON orders;
CREATE TRIGGER orders_status_changes AFTER INSERT OR UPDATE OF payment_status ON orders
    FOR EACH ROW EXECUTE FUNCTION record_order_status_change();
