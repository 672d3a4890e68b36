-- Accounts and protection, third round (D28).

-- A reset link is bound to the password hash it was issued for: a change of password
-- (by its owner, or another reset) voids it. Links issued before this migration are
-- bound to nothing and so no longer work (they lived a day).
ALTER TABLE password_resets ADD COLUMN bound_to bytea NOT NULL DEFAULT '\x';
ALTER TABLE password_resets ALTER COLUMN bound_to DROP DEFAULT;
