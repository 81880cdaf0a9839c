-- 0025: an order's workflow closes once it is idle (issue 31). What its next
-- run starts from (the order's request without its personal data, and its
-- state) is kept in reopen_input; a capture, cancel, review or refund that
-- arrives later reopens the workflow (Update-with-Start), and the new run
-- takes the row by writing its run id into reopen_run, so that only one run
-- ever carries on from a saved state. models/reopen.go reads and writes them.
ALTER TABLE orders ADD COLUMN IF NOT EXISTS reopen_input jsonb;
ALTER TABLE orders ADD COLUMN IF NOT EXISTS reopen_run varchar(64);
ALTER TABLE orders ADD COLUMN IF NOT EXISTS reopen_saved_at timestamptz;
