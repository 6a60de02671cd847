-- A budget per user (and per key, kept for when the ledger knows a call's key): a limit in USD
-- and/or tokens over a UTC day, month or all time; what its spent figure is, the ledger sums.
CREATE TABLE IF NOT EXISTS budgets (
  scope        text NOT NULL CHECK (scope IN ('user', 'key')),
  subject_id   text NOT NULL,
  period       text NOT NULL CHECK (period IN ('day', 'month', 'total')),
  limit_usd    numeric,
  limit_tokens bigint,
  on_exceeded  text NOT NULL CHECK (on_exceeded IN ('reject', 'pause')),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, subject_id)
);
