-- Webhooks (D22): members' endpoints, the deliveries of events to them, and every
-- attempt. Deliveries are made from the outbox (`events`) after it commits, never in
-- the transaction that publishes data, so a slow receiver never slows an import.

-- Endpoints an account of the tier may hold.
ALTER TABLE tiers ADD COLUMN max_webhooks integer NOT NULL DEFAULT 1 CHECK (max_webhooks >= 0);
UPDATE tiers SET max_webhooks = 10 WHERE tier = 'pro';

CREATE TABLE webhooks (
    webhook_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id         bigint NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    url             text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    event_types     text[] NOT NULL CHECK (cardinality(event_types) > 0),
    -- The signing secret is never stored: it is derived from this salt and the
    -- service's KEY_SECRET, so the database alone cannot sign.
    secret_salt     bytea NOT NULL CHECK (length(secret_salt) = 24),
    created_at      timestamptz NOT NULL,
    -- The first failed attempt since the last success: five days of failures disable it.
    failing_since   timestamptz,
    disabled_at     timestamptz,
    disabled_reason text
);
CREATE INDEX webhooks_by_user ON webhooks (user_id);

-- One event (or test message) to one endpoint. `attempts` counts attempts claimed;
-- an attempt is claimed by one instance at a time (`locked_until`, taken with
-- FOR UPDATE SKIP LOCKED), and a claim whose instance died is taken again once it
-- lapses: at least once, never by two instances at the same time.
CREATE TABLE webhook_deliveries (
    delivery_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    webhook_id      bigint NOT NULL REFERENCES webhooks (webhook_id) ON DELETE CASCADE,
    -- NULL for a `webhook.test` message.
    event_id        bigint REFERENCES events (event_id),
    state           text NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    locked_until    timestamptz,
    created_at      timestamptz NOT NULL,
    delivered_at    timestamptz
);
-- What is due, oldest first.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, delivery_id);
-- Finished deliveries by age: what the hourly prune deletes after KEEP_DELIVERIES.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at)
    WHERE state <> 'pending';

CREATE TABLE webhook_attempts (
    delivery_id  bigint NOT NULL REFERENCES webhook_deliveries (delivery_id) ON DELETE CASCADE,
    attempt      integer NOT NULL,
    attempted_at timestamptz NOT NULL,
    -- The HTTP status; NULL when no answer came (refused, timed out, not allowed).
    status       integer,
    latency_ms   integer NOT NULL,
    -- Why it failed without an answer, or the first KiB of the answer's body.
    error        text,
    answer       text CHECK (length(answer) <= 1024),
    PRIMARY KEY (delivery_id, attempt)
);

-- How far the outbox has been turned into deliveries. One row; the dispatcher locks it,
-- so two instances never fan the same event out twice. Events before webhooks existed
-- are not delivered.
CREATE TABLE webhook_dispatch (
    only_row      boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    last_event_id bigint NOT NULL
);
INSERT INTO webhook_dispatch (last_event_id) SELECT coalesce(max(event_id), 0) FROM events;
