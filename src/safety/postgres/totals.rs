//! Version 3 of the PostgreSQL schema: each budget's running totals per time bucket
//! ([`buckets`](crate::safety::journal::buckets)), the indexes the history and the nonce lookup read, and the
//! functions a reservation runs in one statement (`terms_begin`), a move of reservations (`terms_move`), and the
//! reads of a window (`terms_window`) and of a payer's nonce (`terms_nonce_user`). Amounts and totals are `NUMERIC`:
//! exact at any width, so a bucket holding many amounts of 2^256 - 1 sums without wrapping.

/// The levels as SQL: `generate_series(0, 4)` is [`LEVELS`](crate::safety::journal::buckets::LEVELS) levels, each
/// 64 times the one below (`at >> (6 * level)`).
macro_rules! levels {
    () => {
        "generate_series(0, 4) AS l(level)"
    };
}

/// Every reservation that counts, summed per budget, level and bucket: what the totals must hold. The migration
/// fills the totals with it; `terms journal check` compares them with it.
macro_rules! expected {
    () => {
        concat!(
            "SELECT r.budget, r.scope, r.asset, l.level::SMALLINT AS level, r.at >> (6 * l.level) AS bucket, \
             coalesce(sum(r.amount::NUMERIC) FILTER (WHERE r.state = 'committed'), 0) AS committed, \
             coalesce(sum(r.amount::NUMERIC) FILTER (WHERE r.state = 'reserved'), 0) AS reserved \
             FROM terms_reservations AS r CROSS JOIN ",
            levels!(),
            " WHERE r.state <> 'released' GROUP BY 1, 2, 3, 4, 5"
        )
    };
}

/// The totals filled from the rows (a repair).
pub(super) const FILL: &str =
    concat!("INSERT INTO terms_budget_totals (budget, scope, asset, level, bucket, committed, reserved) ", expected!());

/// The budgets whose totals differ from what their rows say, with how many buckets differ.
pub(super) const DIFFER: &str = concat!(
    "WITH e AS (",
    expected!(),
    ") SELECT coalesce(e.budget, t.budget), coalesce(e.scope, t.scope), coalesce(e.asset, t.asset), count(*) \
     FROM e FULL JOIN terms_budget_totals AS t ON (t.budget, t.scope, t.asset, t.level, t.bucket) = \
     (e.budget, e.scope, e.asset, e.level, e.bucket) \
     WHERE coalesce(e.committed, 0) <> coalesce(t.committed, 0) OR coalesce(e.reserved, 0) <> coalesce(t.reserved, 0) \
     GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
);

pub(super) const V3: &str = concat!(
    "
CREATE TABLE terms_budget_totals (
  budget TEXT NOT NULL, scope TEXT NOT NULL, asset TEXT NOT NULL, level SMALLINT NOT NULL, bucket BIGINT NOT NULL,
  committed NUMERIC NOT NULL CONSTRAINT terms_budget_totals_committed CHECK (committed >= 0),
  reserved NUMERIC NOT NULL CONSTRAINT terms_budget_totals_reserved CHECK (reserved >= 0),
  PRIMARY KEY (budget, scope, asset, level, bucket)
);
CREATE TABLE terms_budget_faults (
  budget TEXT NOT NULL, scope TEXT NOT NULL, asset TEXT NOT NULL, buckets BIGINT NOT NULL, found_at BIGINT NOT NULL,
  PRIMARY KEY (budget, scope, asset)
);
CREATE INDEX terms_attempts_by_payee ON terms_attempts (payee, created_at, seq);
CREATE INDEX terms_attempts_by_state ON terms_attempts (payment_state, created_at, seq);
CREATE INDEX terms_attempts_by_nonce ON terms_attempts (h, account, pairing);
DROP INDEX IF EXISTS terms_reservations_by_budget;
",
    "INSERT INTO terms_budget_totals (budget, scope, asset, level, bucket, committed, reserved) ",
    expected!(),
    ";
ANALYZE terms_budget_totals;
-- What the window counting reservations dated after p_start holds: at most 63 buckets of each level below the top,
-- and the top level's from there on (the same cover as the SQLite journal's, `buckets::cover`).
CREATE FUNCTION terms_window(p_budget TEXT, p_scope TEXT, p_asset TEXT, p_start BIGINT)
RETURNS TABLE (committed NUMERIC, reserved NUMERIC) LANGUAGE sql STABLE AS $fn$
  SELECT coalesce(sum(s.committed), 0), coalesce(sum(s.reserved), 0)
  FROM (SELECT l.level,
          least(ceil(greatest(p_start::NUMERIC + 1, 0) / (1::BIGINT << (6 * l.level))), 9223372036854775807)::BIGINT
            AS first,
          CASE WHEN l.level = 4 THEN 9223372036854775807
               ELSE least(ceil(greatest(p_start::NUMERIC + 1, 0) / (1::BIGINT << (6 * l.level + 6))) * 64,
                          9223372036854775807)::BIGINT END AS stop
        FROM ",
    levels!(),
    ") AS c
  -- Each level read on its own through the primary key (a nested loop of five index range scans), whatever the
  -- table's statistics say.
  CROSS JOIN LATERAL (SELECT sum(t.committed) AS committed, sum(t.reserved) AS reserved FROM terms_budget_totals AS t
    WHERE t.budget = p_budget AND t.scope = p_scope AND t.asset = p_asset AND t.level = c.level
      AND t.bucket >= c.first AND t.bucket < c.stop) AS s
$fn$;
-- Another purchase of the payer through the pairing under H whose payment may have moved (one nonce per payer).
CREATE FUNCTION terms_nonce_user(p_account TEXT, p_pairing TEXT, p_h TEXT, p_key TEXT)
RETURNS TABLE (key TEXT) LANGUAGE sql STABLE AS $fn$
  SELECT a.key FROM terms_attempts AS a WHERE a.h = p_h AND a.account = p_account AND a.pairing = p_pairing
    AND a.key <> p_key AND a.role = 'payment' AND a.payment_state <> 'not-paid' LIMIT 1
$fn$;
-- An attempt's reservations in the states p_from moved to p_to, and their budgets' totals with them; false where a
-- total they are in is missing (it disagrees with its rows: the caller refuses, and the transaction is rolled back).
-- The totals it changes are first locked in their key's order, the order terms_begin writes them in: two writers of
-- one budget's totals then never wait on each other in a circle (an UPDATE locks rows in the order its plan meets
-- them, which is no order; each such circle cost a deadlock_timeout, a second, before the server broke it).
CREATE FUNCTION terms_move(p_attempt TEXT, p_to TEXT, p_from TEXT[]) RETURNS BOOLEAN LANGUAGE sql AS $fn$
  SELECT count(*) FROM (SELECT 1 FROM terms_budget_totals AS t
    WHERE (t.budget, t.scope, t.asset, t.level, t.bucket) IN (
      SELECT r.budget, r.scope, r.asset, l.level, r.at >> (6 * l.level) FROM terms_reservations AS r CROSS JOIN ",
    levels!(),
    " WHERE r.attempt = p_attempt AND r.state = ANY (p_from))
    ORDER BY t.budget, t.scope, t.asset, t.level, t.bucket FOR UPDATE OF t) AS locked;
  WITH moved AS (
    UPDATE terms_reservations AS r SET state = p_to FROM terms_reservations AS o
    WHERE o.seq = r.seq AND o.attempt = p_attempt AND o.state = ANY (p_from)
    RETURNING r.budget, r.scope, r.asset, r.at, r.amount::NUMERIC AS amount, o.state AS was),
  delta AS (
    SELECT m.budget, m.scope, m.asset, l.level, m.at >> (6 * l.level) AS bucket,
      sum(CASE WHEN p_to = 'committed' THEN m.amount ELSE 0 END
        - CASE WHEN m.was = 'committed' THEN m.amount ELSE 0 END) AS committed,
      sum(CASE WHEN p_to = 'reserved' THEN m.amount ELSE 0 END
        - CASE WHEN m.was = 'reserved' THEN m.amount ELSE 0 END) AS reserved
    FROM moved AS m CROSS JOIN ",
    levels!(),
    " GROUP BY 1, 2, 3, 4, 5),
  updated AS (
    UPDATE terms_budget_totals AS t SET committed = t.committed + d.committed, reserved = t.reserved + d.reserved
    FROM delta AS d WHERE (t.budget, t.scope, t.asset, t.level, t.bucket) = (d.budget, d.scope, d.asset, d.level, d.bucket)
    RETURNING 1)
  SELECT (SELECT count(*) FROM updated) = (SELECT count(*) FROM delta)
$fn$;
-- A new purchase's begin, in one statement: the purchase locked; 'open' (nothing written) where an attempt of it is
-- open and p_open_checked is false (the caller decides in Rust, then calls again with it true); the payer's nonce
-- (where p_nonce_lock is given); each budget locked (p_locks sorted) and checked in the claims' order, as the rules'
-- `over_budget` does ('over' and the claim's number, 'fault' and the budget where its totals were found wrong);
-- then the ATR bytes, the attempt, its reservations and their totals. 'fresh' when written.
CREATE FUNCTION terms_begin(
  p_attempt TEXT, p_key TEXT, p_role TEXT, p_pairing TEXT, p_account TEXT, p_h TEXT, p_payee TEXT, p_purchase TEXT,
  p_chosen TEXT, p_quote TEXT, p_at BIGINT, p_prepared TEXT, p_bytes BYTEA, p_budgets TEXT[], p_scopes TEXT[],
  p_assets TEXT[], p_windows BIGINT[], p_amounts TEXT[], p_limits TEXT[], p_starts BIGINT[], p_locks BIGINT[],
  p_purchase_lock BIGINT, p_nonce_lock BIGINT, p_open_checked BOOLEAN)
RETURNS TABLE (outcome TEXT, detail TEXT) LANGUAGE plpgsql AS $fn$
DECLARE
  claims INT := coalesce(array_length(p_budgets, 1), 0);
  k BIGINT;
  held NUMERIC;
  other TEXT;
BEGIN
  PERFORM pg_advisory_xact_lock(p_purchase_lock);
  IF NOT p_open_checked AND EXISTS (SELECT 1 FROM terms_attempts AS a WHERE a.key = p_key AND a.role = p_role
      AND (a.stage = 'intent' OR a.payment_state <> 'not-paid')) THEN
    RETURN QUERY SELECT 'open'::TEXT, NULL::TEXT;
    RETURN;
  END IF;
  IF p_nonce_lock IS NOT NULL THEN
    PERFORM pg_advisory_xact_lock(p_nonce_lock);
    SELECT u.key INTO other FROM terms_nonce_user(p_account, p_pairing, p_h, p_key) AS u;
    IF other IS NOT NULL THEN
      RETURN QUERY SELECT 'nonce'::TEXT, other;
      RETURN;
    END IF;
  END IF;
  FOREACH k IN ARRAY p_locks LOOP
    PERFORM pg_advisory_xact_lock(k);
  END LOOP;
  FOR i IN 1..claims LOOP
    IF EXISTS (SELECT 1 FROM terms_budget_faults AS f WHERE f.budget = p_budgets[i] AND f.scope = p_scopes[i]
        AND f.asset = p_assets[i]) THEN
      RETURN QUERY SELECT 'fault'::TEXT, p_budgets[i];
      RETURN;
    END IF;
    SELECT w.committed + w.reserved INTO held FROM terms_window(p_budgets[i], p_scopes[i], p_assets[i], p_starts[i]) AS w;
    SELECT held + coalesce(sum(e.amount::NUMERIC), 0) INTO held
      FROM unnest(p_budgets[1:i - 1], p_scopes[1:i - 1], p_assets[1:i - 1], p_amounts[1:i - 1])
        AS e (budget, scope, asset, amount)
      WHERE e.budget = p_budgets[i] AND e.scope = p_scopes[i] AND e.asset = p_assets[i];
    IF held + p_amounts[i]::NUMERIC > p_limits[i]::NUMERIC THEN
      RETURN QUERY SELECT 'over'::TEXT, i::TEXT;
      RETURN;
    END IF;
  END LOOP;
  IF p_bytes IS NOT NULL THEN
    INSERT INTO terms_atr (h, bytes) VALUES (p_h, p_bytes) ON CONFLICT DO NOTHING;
  END IF;
  WITH attempt AS (
    INSERT INTO terms_attempts (attempt, key, role, pairing, account, h, payee, purchase, chosen, quote, stage,
      payment_state, execution, response, retry, moving, payment, answer, decline, cause, created_at, updated_at,
      prepared)
    VALUES (p_attempt, p_key, p_role, p_pairing, p_account, p_h, p_payee, p_purchase, p_chosen, p_quote, 'intent',
      'not-paid', 'not-started', NULL, 'safe', false, NULL, NULL, NULL, NULL, p_at, p_at, p_prepared)
    RETURNING attempt)
  INSERT INTO terms_reservations (attempt, budget, scope, asset, window_seconds, amount, at, state)
  SELECT attempt.attempt, c.budget, c.scope, c.asset, c.window_seconds, c.amount, p_at, 'reserved'
  FROM attempt, unnest(p_budgets, p_scopes, p_assets, p_windows, p_amounts) WITH ORDINALITY
    AS c (budget, scope, asset, window_seconds, amount, n)
  ORDER BY c.n;
  INSERT INTO terms_budget_totals AS t (budget, scope, asset, level, bucket, committed, reserved)
  SELECT c.budget, c.scope, c.asset, l.level, p_at >> (6 * l.level), 0, sum(c.amount::NUMERIC)
  FROM unnest(p_budgets, p_scopes, p_assets, p_amounts) AS c (budget, scope, asset, amount) CROSS JOIN ",
    levels!(),
    "
  GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (budget, scope, asset, level, bucket) DO UPDATE SET reserved = t.reserved + excluded.reserved;
  RETURN QUERY SELECT 'fresh'::TEXT, NULL::TEXT;
END
$fn$;
"
);

#[cfg(test)]
mod tests {
    #[test]
    fn the_sql_keeps_as_many_levels_of_the_same_sizes_as_the_rules() {
        assert_eq!(crate::safety::journal::buckets::LEVELS, 5, "generate_series(0, 4) and level = 4 in the SQL");
        assert_eq!(crate::safety::journal::buckets::bucket(1 << 24, 4), 1, "at >> (6 * level)");
    }
}
