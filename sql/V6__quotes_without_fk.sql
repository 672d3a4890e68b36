-- Quote imports validate every index code against `indexes` inside their own
-- transaction, so the per-row foreign key check on `index_quotes` only repeated that
-- work: it was a third of a 100k-row import's time. What the key guarded (quotes of an
-- index that no longer exists) is kept by refusing to delete or rename an index.

ALTER TABLE index_quotes DROP CONSTRAINT index_quotes_index_code_fkey;

CREATE FUNCTION indexes_are_permanent() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'index % cannot be deleted or renamed: indexes are permanent', OLD.index_code;
END
$$;

CREATE TRIGGER indexes_are_permanent
    BEFORE DELETE OR UPDATE OF index_code ON indexes
    FOR EACH ROW EXECUTE FUNCTION indexes_are_permanent();
