-- The lockout policy's per-user state: consecutive failed password checks
-- (reset by a successful one and by an unlock), and the end of a timed lock
-- (NULL while locked: until an admin unlocks). A locked user has state
-- 'locked'.
ALTER TABLE users ADD COLUMN failed_password_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE users ADD COLUMN locked_until timestamptz;
CREATE INDEX users_timed_locks ON users (locked_until) WHERE state = 'locked' AND locked_until IS NOT NULL;
