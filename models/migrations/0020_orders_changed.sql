-- 0020: a query without a selection reads an account's orders in the order
-- they last changed (models.FindOrdersChanged, issue 29).
CREATE INDEX IF NOT EXISTS idx_orders_account_updated ON orders (account_id, updated_at, transaction_id);
