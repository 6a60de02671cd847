-- Tool approvals: a call of a tool that needs a person's approval waits in `awaiting_approval`
-- (never picked up by a tool job: those take only pending and running calls) until a decision
-- is stored here. The decision and the call's move on are written in one transaction under this
-- row's lock, so that the first decision wins and a decided call is never asked again.
ALTER TABLE tool_calls ADD COLUMN approval_id text;

CREATE TABLE tool_approvals (
  id              text PRIMARY KEY,
  turn_id         text NOT NULL,
  tool_call_id    text NOT NULL,
  conversation_id text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  user_id         text NOT NULL,
  tool_name       text NOT NULL,
  -- The arguments the model asked with, as the request showed them.
  args            jsonb,
  requested_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at      timestamptz NOT NULL,
  -- Null while pending.
  approved        boolean,
  reason          text,
  -- The arguments the person gave instead (null: the model's ran).
  decided_args    jsonb,
  decided_at      timestamptz,
  FOREIGN KEY (turn_id, tool_call_id) REFERENCES tool_calls (turn_id, tool_call_id) ON DELETE CASCADE,
  UNIQUE (turn_id, tool_call_id)
);

-- A user's pending approvals, newest first (GET /v1/approvals?status=pending).
CREATE INDEX tool_approvals_user_pending ON tool_approvals (user_id, requested_at DESC, id DESC) WHERE decided_at IS NULL;

-- A conversation's standing list of tool names whose calls wait for a person.
ALTER TABLE conversations ADD COLUMN require_approval jsonb;
