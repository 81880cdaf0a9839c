-- 0035: why the acquirer's settlement report of a day was refused on its
-- last run (lines numbered twice, a row that cannot be read). Before, such
-- a report failed the day's workflow after a day of retries and left no
-- record; now the run keeps the reason, for finance to see, and the day
-- stays due until a report can be read.
ALTER TABLE recon_runs ADD COLUMN IF NOT EXISTS error varchar(500) NOT NULL DEFAULT '';
