-- Every quote import attempt (D8), accepted or not, for the back office's list.
CREATE TABLE imports (
    import_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     bigint REFERENCES users (user_id) ON DELETE SET NULL, -- NULL: command or demo
    source      text NOT NULL CHECK (source IN ('http', 'command', 'demo')),
    file_name   text NOT NULL,
    rows        integer NOT NULL,                  -- data rows in the file
    result      text NOT NULL CHECK (result IN ('accepted', 'rejected', 'failed')),
    errors      integer NOT NULL DEFAULT 0,        -- problems listed when rejected
    message     text NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL
);
