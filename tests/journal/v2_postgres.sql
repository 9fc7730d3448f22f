-- The PostgreSQL journal's schema version 2, as the release before issue 46 (main at dfa7c96,
-- src/safety/postgres/schema.rs V1 and V2 with the column macros expanded) creates it, with its `terms_schema`.
CREATE TABLE terms_schema (version INTEGER PRIMARY KEY, crate_version TEXT NOT NULL, applied_at BIGINT NOT NULL);
CREATE TABLE terms_atr (h TEXT PRIMARY KEY, bytes BYTEA NOT NULL);
CREATE TABLE terms_attempts (
  seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  attempt TEXT PRIMARY KEY,
  key TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('payment', 'agreement', 'voucher')),
  pairing TEXT NOT NULL,
  account TEXT NOT NULL,
  h TEXT NOT NULL,
  payee TEXT NOT NULL,
  purchase TEXT,
  chosen TEXT NOT NULL,
  quote TEXT NOT NULL,
  stage TEXT NOT NULL CHECK (stage IN ('intent', 'signed', 'ended', 'answered', 'lapsed')),
  payment_state TEXT NOT NULL CHECK (payment_state IN ('not-paid', 'unknown', 'settled')),
  execution TEXT NOT NULL CHECK (execution IN ('not-started', 'queued', 'running', 'failed', 'completed')),
  response TEXT CHECK (response IN ('received', 'lost')),
  retry TEXT NOT NULL CHECK (retry IN ('safe', 'query-first', 'forbidden')),
  payment TEXT,
  answer TEXT,
  decline TEXT,
  cause TEXT,
  moving BOOLEAN NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX terms_attempts_by_key ON terms_attempts (key, role, seq);
CREATE INDEX terms_attempts_by_time ON terms_attempts (created_at);
CREATE TABLE terms_reservations (
  budget TEXT NOT NULL,
  scope TEXT NOT NULL,
  asset TEXT NOT NULL,
  amount TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('reserved', 'committed', 'released')),
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  attempt TEXT NOT NULL REFERENCES terms_attempts (attempt),
  window_seconds BIGINT NOT NULL,
  at BIGINT NOT NULL
);
CREATE INDEX terms_reservations_by_budget ON terms_reservations (budget, scope, asset, at);
CREATE INDEX terms_reservations_by_attempt ON terms_reservations (attempt);
ALTER TABLE terms_attempts ADD COLUMN prepared TEXT;
INSERT INTO terms_schema (version, crate_version, applied_at) VALUES (1, '0.1.0', 0), (2, '0.1.0', 0);
