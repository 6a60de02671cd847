-- A turn admitted in one round trip when nothing stands in its way: the conversation's row lock,
-- the checks and the insert run inside one call, where the same steps in a transaction of the
-- application took four (BEGIN, the lock, the insert, COMMIT). Each of those waited for the
-- event loop of a process that also streams answers, and under load that wait is most of a new
-- turn's first token. A function, not one statement: in PL/pgSQL each statement reads a fresh
-- snapshot, so the checks made after the lock see every turn committed before it, as the
-- transaction's did (a single statement would check against the snapshot taken before the lock).
--
-- `outcome`: 'admitted' (`turn` is the new row), 'missing' (no such conversation of this user),
-- or 'not_clear' (a turn is active on the conversation, the idempotency key was used, or the
-- user is at the limit: the caller reads the facts in a transaction and decides, as before).
-- It takes the columns a turn is admitted with in the order of INSERT_COLUMNS (turns-repository.ts);
-- every other column keeps its default. The unfinished statuses are written out as ACTIVE_SQL
-- writes them, so that the partial indexes of 0001 (on the same list) serve the checks.
CREATE TYPE turn_admission AS (outcome text, turn turns, active_of_user integer);

CREATE FUNCTION admit_turn_if_clear(
  new_id text,
  new_conversation_id text,
  new_user_id text,
  new_input jsonb,
  new_options jsonb,
  new_idempotency_key text,
  new_request_hash text,
  new_batch_priority integer,
  new_traceparent text,
  new_branch text,
  new_from_message_id bigint,
  new_ui_message_id text,
  max_active_of_user integer
) RETURNS turn_admission
LANGUAGE plpgsql AS $$
DECLARE
  result turn_admission;
  admitted turns;
BEGIN
  PERFORM 1 FROM conversations WHERE id = new_conversation_id AND user_id = new_user_id FOR UPDATE;
  IF NOT FOUND THEN
    result.outcome := 'missing';
    RETURN result;
  END IF;
  SELECT count(*)::integer INTO result.active_of_user FROM turns WHERE user_id = new_user_id AND status IN ('queued', 'running', 'waiting_tools');
  IF result.active_of_user >= max_active_of_user
     OR EXISTS (SELECT 1 FROM turns WHERE conversation_id = new_conversation_id AND status IN ('queued', 'running', 'waiting_tools'))
     OR (new_idempotency_key IS NOT NULL
         AND EXISTS (SELECT 1 FROM turns WHERE conversation_id = new_conversation_id AND idempotency_key = new_idempotency_key)) THEN
    result.outcome := 'not_clear';
    RETURN result;
  END IF;
  INSERT INTO turns (id, conversation_id, user_id, status, input, options, idempotency_key, request_hash, batch_priority, traceparent, branch, from_message_id, ui_message_id)
  VALUES (new_id, new_conversation_id, new_user_id, 'queued', new_input, new_options, new_idempotency_key, new_request_hash, new_batch_priority, new_traceparent, new_branch, new_from_message_id, new_ui_message_id)
  RETURNING * INTO admitted;
  result.outcome := 'admitted';
  result.turn := admitted;
  RETURN result;
END
$$;
