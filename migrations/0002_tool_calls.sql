-- Tool calls, keyed by (turn, call id): providers reuse ids across turns (call_0).
-- Once a call has a result or an error it is never executed again.
CREATE TABLE tool_calls (
  turn_id         text NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  tool_call_id    text NOT NULL,
  conversation_id text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  step            integer NOT NULL,
  -- Its place in the assistant message's tool_calls; tool messages follow this order.
  position        integer NOT NULL,
  name            text NOT NULL,
  -- builtin | http | mcp | client; null for a tool the turn does not offer.
  kind            text,
  -- The JSON text exactly as the model sent it (the follow-up request repeats it).
  arguments_text  text NOT NULL,
  args            jsonb,
  -- pending | running | succeeded | failed | cancelled
  status          text NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  result          jsonb,
  error           jsonb,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at      timestamptz,
  finished_at     timestamptz,
  PRIMARY KEY (turn_id, tool_call_id)
);
CREATE INDEX tool_calls_turn_step ON tool_calls (turn_id, step, position);

