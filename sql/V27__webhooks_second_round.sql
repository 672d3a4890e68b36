-- Webhooks, second round (D27): secret rotation with an overlap, recovering failed
-- deliveries, attempts recorded when they were sent.

-- After a rotation the old salt signs beside the new one until `previous_until`
-- (24 hours), so receivers can switch secrets without losing a message.
ALTER TABLE webhooks
    ADD COLUMN previous_salt  bytea CHECK (length(previous_salt) = 24),
    ADD COLUMN previous_until timestamptz,
    ADD CONSTRAINT webhooks_previous_whole CHECK ((previous_salt IS NULL) = (previous_until IS NULL));

-- A recovered delivery starts its retry schedule again: its attempts before the
-- recovery are not counted against the schedule.
ALTER TABLE webhook_deliveries
    ADD COLUMN recovered_attempts integer NOT NULL DEFAULT 0;

-- The claim counts each endpoint's attempts in flight (at most 4, D27).
CREATE INDEX webhook_deliveries_in_flight ON webhook_deliveries (webhook_id)
    WHERE state = 'pending' AND locked_until IS NOT NULL;

-- Test sends a minute per account (at most 5) are counted from the log.
CREATE INDEX webhook_deliveries_tests ON webhook_deliveries (webhook_id, created_at)
    WHERE event_id IS NULL;
