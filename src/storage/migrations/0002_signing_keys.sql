-- Signing keys: the public JWK in clear, the private JWK sealed with the
-- master key (AES-256-GCM). `activates_at` orders next / current / previous;
-- `retires_at` is when the key stops signing, and it is dropped from the
-- JWKS once every token it signed has expired.
CREATE TABLE signing_keys (
  kid           text        PRIMARY KEY,
  alg           text        NOT NULL,
  public_jwk    jsonb       NOT NULL,
  private_jwk   bytea       NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  activates_at  timestamptz NOT NULL DEFAULT now(),
  retires_at    timestamptz
);

-- A keyed check value of the master key: a node started with a different
-- MASTER_KEY stops with a clear message instead of failing to decrypt later.
CREATE TABLE master_key_check (
  id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
  check_mac  bytea       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
