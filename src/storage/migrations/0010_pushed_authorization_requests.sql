-- Apps that accept authorization requests only as pushed authorization
-- requests (RFC 9126 6, requirePushedAuthorizationRequests).
ALTER TABLE apps ADD COLUMN require_par boolean NOT NULL DEFAULT false;
