-- A schedule's run admitted in one statement (src/schedules/schedule-runner.ts): the turn, when
-- nothing stands in its way (admit_turn_if_clear, unchanged), and its tick's run row. The two
-- are one statement, so both or neither: a tick that has its run already (another worker, an
-- earlier attempt) fails the run row's unique (schedule_id, scheduled_for) and takes the turn
-- back with it. Anything else (not clear, missing) writes nothing and the caller decides in a
-- transaction, as for any turn.
CREATE OR REPLACE FUNCTION admit_scheduled_turn_if_clear(
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
  new_key_id text,
  new_agent_id text,
  new_agent_version integer,
  max_active_of_user integer,
  run_id text,
  run_schedule_id text,
  run_scheduled_for timestamptz
) RETURNS turn_admission
LANGUAGE plpgsql AS $$
DECLARE
  result turn_admission;
BEGIN
  result := admit_turn_if_clear(new_id, new_conversation_id, new_user_id, new_input, new_options, new_idempotency_key, new_request_hash,
    new_batch_priority, new_traceparent, new_branch, new_from_message_id, new_ui_message_id, new_key_id, new_agent_id, new_agent_version,
    max_active_of_user);
  IF result.outcome = 'admitted' THEN
    INSERT INTO schedule_runs (id, schedule_id, scheduled_for, status, turn_id, conversation_id)
    VALUES (run_id, run_schedule_id, run_scheduled_for, 'started', new_id, new_conversation_id);
  END IF;
  RETURN result;
END
$$;
