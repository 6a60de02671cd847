-- The `budget.exceeded` webhook, once per budget and period: a row per (budget, period start)
-- that has told of it. Whoever first finds the budget reached (an admission refused, a turn
-- stopped before a step) inserts the row and records the event in the same statement; every later
-- finding in that period inserts nothing and records nothing, whatever the number of processes.
CREATE TABLE IF NOT EXISTS budget_exceeded_notices (
  scope            text NOT NULL,
  subject_id       text NOT NULL,
  period_starts_at timestamptz NOT NULL,
  noticed_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, subject_id, period_starts_at)
);

CREATE OR REPLACE FUNCTION notice_budget_exceeded(p_scope text, p_subject_id text, p_period_starts_at timestamptz, p_user_id text, p_data jsonb)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO budget_exceeded_notices (scope, subject_id, period_starts_at) VALUES (p_scope, p_subject_id, p_period_starts_at)
  ON CONFLICT DO NOTHING;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  IF EXISTS (SELECT 1 FROM webhook_endpoints WHERE user_id = p_user_id AND disabled_at IS NULL) THEN
    PERFORM record_webhook_event(p_user_id, 'budget.exceeded', p_data);
  END IF;
  RETURN true;
END $$;
