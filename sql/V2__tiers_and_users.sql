-- Membership tiers with their entitlements (spec part 8; editable by a super
-- administrator, D7) and the accounts that belong to them. Keys, sessions, quotas and
-- imports arrive in later migrations and reference these tables.

CREATE TABLE tiers (
    tier           text PRIMARY KEY CHECK (tier IN ('free', 'pro')),
    per_minute     integer NOT NULL CHECK (per_minute >= 0),
    per_day        integer NOT NULL CHECK (per_day >= 0),
    max_rows       integer NOT NULL CHECK (max_rows BETWEEN 1 AND 5000),
    max_keys       integer CHECK (max_keys >= 0), -- NULL: unlimited
    delay_days     integer NOT NULL CHECK (delay_days >= 0),
    member_indexes boolean NOT NULL,
    updated_at     timestamptz NOT NULL DEFAULT now()
);

INSERT INTO tiers (tier, per_minute, per_day, max_rows, max_keys, delay_days, member_indexes) VALUES
    ('free', 10, 10, 5000, 1, 7, false),
    ('pro', 10000, 10000, 5000, NULL, 0, true);

CREATE TABLE users (
    user_id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    username      text NOT NULL UNIQUE,
    password_hash text NOT NULL,
    role          text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin', 'super_admin')),
    tier          text NOT NULL DEFAULT 'free' REFERENCES tiers (tier),
    active        boolean NOT NULL DEFAULT true,
    api_access    boolean NOT NULL DEFAULT true,
    created_at    timestamptz NOT NULL DEFAULT now()
);
