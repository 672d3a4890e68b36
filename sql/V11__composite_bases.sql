-- The composite index and the base indexes it is derived from (D8), as data: the
-- recalculation and the import's rules read them here instead of repeating them in code.
-- `weight` is the base's weight in the composite's mean daily change (equal by default).
CREATE TABLE composite_bases (
    composite_code text COLLATE "C" NOT NULL REFERENCES indexes (index_code),
    base_code      text COLLATE "C" NOT NULL REFERENCES indexes (index_code),
    weight         numeric(12, 8) NOT NULL DEFAULT 1 CHECK (weight > 0),
    PRIMARY KEY (composite_code, base_code),
    CHECK (composite_code <> base_code)
);

INSERT INTO composite_bases (composite_code, base_code) VALUES
    ('Hardware_Index', 'Server_Index'),
    ('Hardware_Index', 'GPU_Index'),
    ('Hardware_Index', 'DRAM_Index'),
    ('Hardware_Index', 'SSD_Index'),
    ('Hardware_Index', 'CPU_Index'),
    ('Hardware_Index', 'OI_Index');
