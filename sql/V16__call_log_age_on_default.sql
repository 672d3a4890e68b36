-- The index on `called_at` moves from every month of the call log to its default
-- partition alone.
--
-- A month's table is dropped whole when it expires (`call_log_expire`), so nothing
-- reads a month by `called_at`: the only statements that do are the default
-- partition's deletes (expiry, and moving a month's rows into its new table). On the
-- months the index cost every logged call an index insertion: 15% of the insert of a
-- 250-call batch, which the quota writes about fifty times a second for a busy key.
-- Reads by key keep `call_log_key`.
DROP INDEX call_log_age;
CREATE INDEX call_log_default_age ON call_log_default (called_at);
