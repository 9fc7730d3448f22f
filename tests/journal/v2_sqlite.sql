-- The SQLite journal's schema version 2, as the release before issue 46 (main at dfa7c96, src/safety/journal/sqlite.rs
-- SCHEMA with rules::attempt_columns! and reservation_columns! expanded) creates it, with its pragmas.
PRAGMA journal_mode = WAL;
CREATE TABLE atr (h TEXT PRIMARY KEY, bytes BLOB NOT NULL);
CREATE TABLE attempts (
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
  moving INTEGER NOT NULL CHECK (moving IN (0, 1)),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  prepared TEXT
);
CREATE INDEX attempts_by_key ON attempts (key, role);
CREATE INDEX attempts_by_time ON attempts (created_at);
CREATE TABLE reservations (
  budget TEXT NOT NULL,
  scope TEXT NOT NULL,
  asset TEXT NOT NULL,
  amount TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('reserved', 'committed', 'released')),
  attempt TEXT NOT NULL REFERENCES attempts (attempt),
  window_seconds INTEGER NOT NULL,
  at INTEGER NOT NULL
);
CREATE INDEX reservations_by_budget ON reservations (budget, scope, asset, at);
CREATE INDEX reservations_by_attempt ON reservations (attempt);
PRAGMA application_id = 1952805485;
PRAGMA user_version = 2;
