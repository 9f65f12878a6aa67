-- Apps whose access tokens must all be bound to a DPoP key (RFC 9449 5,
-- dpopBoundAccessTokens).
ALTER TABLE apps ADD COLUMN dpop_bound boolean NOT NULL DEFAULT false;
