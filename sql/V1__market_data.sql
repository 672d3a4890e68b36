-- Market data: the index series, the trading calendar, quotes and daily index rows.
-- Text keys use COLLATE "C" so ordering is by code point whatever the database locale
-- (decisions D2). Every amount is numeric with the scale the wire format shows.

CREATE TABLE indexes (
    index_code  text COLLATE "C" PRIMARY KEY,
    index_name  text NOT NULL,
    sort_no     integer NOT NULL,
    visibility  text NOT NULL CHECK (visibility IN ('aggregate', 'index_only', 'member', 'private')),
    base_value  numeric(24, 6) NOT NULL DEFAULT 1000 CHECK (base_value > 0),
    unit        text NOT NULL DEFAULT 'points',
    has_quotes  boolean NOT NULL,
    description text NOT NULL,
    updated_at  timestamptz NOT NULL DEFAULT now()
);

INSERT INTO indexes (index_code, index_name, sort_no, visibility, has_quotes, description) VALUES
    ('Server_Index', 'AI Server Price Index', 10, 'aggregate', true,
     'Selling prices of complete AI training servers (8-GPU HGX/OAM systems).'),
    ('Server_Rental_Index', 'AI Server Rental Index', 20, 'aggregate', true,
     'Rental prices of AI accelerator capacity, per GPU-hour.'),
    ('GPU_Index', 'Compute Card Index', 30, 'index_only', true,
     'Prices of data-centre GPU and accelerator modules.'),
    ('DRAM_Index', 'Memory Index', 40, 'index_only', true,
     'Prices of server DDR memory modules.'),
    ('SSD_Index', 'Solid-State Storage Index', 50, 'index_only', true,
     'Prices of enterprise NVMe solid-state drives.'),
    ('CPU_Index', 'Processor Index', 60, 'index_only', true,
     'Prices of server processors.'),
    ('OI_Index', 'Optical Interconnect Index', 70, 'index_only', true,
     'Prices of data-centre optical transceivers.'),
    ('Hardware_Index', 'Compute Hardware Index', 80, 'member', false,
     'Composite of the daily changes of the server, GPU, memory, storage, processor and optical indexes.');

-- Open trading days only.
CREATE TABLE trade_calendar (
    trade_date date PRIMARY KEY
);

CREATE TABLE index_quotes (
    trade_date    date NOT NULL,
    index_code    text COLLATE "C" NOT NULL REFERENCES indexes (index_code),
    specification text COLLATE "C" NOT NULL,
    weight        numeric(10, 8) NOT NULL CHECK (weight > 0 AND weight <= 1),
    price         numeric(24, 6) NOT NULL CHECK (price > 0),
    PRIMARY KEY (trade_date, index_code, specification)
);
CREATE INDEX index_quotes_by_index ON index_quotes (index_code, trade_date);

CREATE TABLE index_daily (
    trade_date     date NOT NULL,
    index_code     text COLLATE "C" NOT NULL REFERENCES indexes (index_code),
    index_value    numeric(24, 6) NOT NULL,
    weighted_price numeric(24, 6),
    pre_value      numeric(24, 6),
    change         numeric(24, 6),
    pct_change     numeric(24, 6),
    PRIMARY KEY (trade_date, index_code)
);
CREATE INDEX index_daily_by_index ON index_daily (index_code, trade_date);
