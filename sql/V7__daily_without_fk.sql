-- As for index_quotes in V6: index_daily rows are written only by the recalculation,
-- which reads each index from `indexes` first; indexes are permanent (V6's trigger).
ALTER TABLE index_daily DROP CONSTRAINT index_daily_index_code_fkey;
