-- A short turn's end in one round trip. The end of a turn whose last step called no tools was a
-- transaction of four round trips (BEGIN; lock the conversation by raising its seq floor; record
-- the step, its message and the end, and read the next turn; COMMIT). Each statement of a
-- PL/pgSQL function sees what committed before that statement began, so the next turn is read
-- after the conversation's lock was had, as before: a turn admitted behind this one is seen.
-- Returns null when the attempt no longer owns the turn; else {ended, next} (next null when the
-- conversation has no unfinished turn left).
CREATE OR REPLACE FUNCTION complete_turn_with_final_step(
  p_id text, p_attempt integer, p_step integer, p_steps jsonb,
  p_prompt_tokens integer, p_completion_tokens integer, p_total_tokens integer,
  p_finish_reason text, p_end_events jsonb, p_content jsonb, p_seen_seq bigint
) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_ended turns;
  v_next turns;
BEGIN
  UPDATE conversations SET last_seq = GREATEST(last_seq, p_seen_seq), updated_at = now()
  WHERE id = (SELECT conversation_id FROM turns WHERE id = p_id);
  UPDATE turns SET step = p_step, steps = steps || p_steps,
    usage = jsonb_build_object(
      'promptTokens', (usage->>'promptTokens')::int + p_prompt_tokens,
      'completionTokens', (usage->>'completionTokens')::int + p_completion_tokens,
      'totalTokens', (usage->>'totalTokens')::int + p_total_tokens),
    status = 'completed', finish_reason = p_finish_reason, end_events = p_end_events, finished_at = clock_timestamp()
  WHERE id = p_id AND attempt = p_attempt AND status = 'running' AND step = p_step - 1
  RETURNING * INTO v_ended;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  INSERT INTO messages (conversation_id, turn_id, step, role, content)
  VALUES (v_ended.conversation_id, v_ended.id, p_step, 'assistant', p_content)
  ON CONFLICT (turn_id, step, role) WHERE role IN ('user', 'assistant') DO NOTHING;
  SELECT * INTO v_next FROM turns
  WHERE conversation_id = v_ended.conversation_id AND status IN ('queued', 'running', 'waiting_tools')
  ORDER BY ordinal LIMIT 1;
  RETURN jsonb_build_object('ended', to_jsonb(v_ended), 'next', CASE WHEN FOUND THEN to_jsonb(v_next) END);
END $$;
