-- The call log is indexed by `request_id`, the one thing a complaint always carries.
--
-- SREs trace a complaint by its request id (`SELECT * FROM call_log WHERE request_id =
-- 'req_...'`); without an index that read a whole month. Request ids are time-ordered
-- UUIDs (v7), so like `called_at` before V16 the index grows at its right edge and a
-- logged call pays one insertion near the last page: the slot V16 freed.
CREATE INDEX call_log_request ON call_log (request_id);
