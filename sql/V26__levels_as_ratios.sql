-- D26: levels as a ratio to the base day, and a reason for every correction.
--
-- The reason an import gives (its note) is kept with the vintage it publishes, and
-- copied to what is read by it: each revision the vintage made, and each
-- `index.revised` event that tells of them. NULL: no reason was given.
ALTER TABLE vintages ADD COLUMN reason text CHECK (char_length(reason) <= 500);
ALTER TABLE index_revisions ADD COLUMN reason text;
ALTER TABLE events ADD COLUMN reason text;

-- The composite has points only: it names no currency (D20, D26).
ALTER TABLE indexes ALTER COLUMN currency DROP NOT NULL;
UPDATE indexes SET currency = NULL WHERE index_code = 'Hardware_Index';
-- What the rental index's quotes are: most of its weight is reserved capacity.
UPDATE indexes
SET price_basis = 'Price of one GPU for one hour, a basket of 1-year reserved (60% of the weight) '
                  'and on-demand rates, excluding storage, networking egress and tax'
WHERE index_code = 'Server_Rental_Index';

-- Restatements the service owes: each recalculates every index from its first day
-- with the quotes unchanged, publishes the result as one vintage with this reason,
-- and is deleted in that transaction (src/migrations.rs runs them after migrating).
-- A database that already holds values was chained by D8; D26 restates it. An empty
-- one owes nothing.
CREATE TABLE restatements_due (
    reason text PRIMARY KEY
);
INSERT INTO restatements_due (reason)
SELECT 'methodology: levels as a ratio to the base day'
WHERE EXISTS (SELECT 1 FROM index_daily);
