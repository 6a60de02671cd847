-- The ledger carries each call's agent, as it carries its key (0033): usage grouped by agent is a
-- sum over provider_calls alone, with no join to turns per line read. The agent is the turn's,
-- fixed when it was admitted (0040), copied when the line is written.
ALTER TABLE provider_calls ADD COLUMN IF NOT EXISTS agent_id text;
CREATE INDEX IF NOT EXISTS provider_calls_agent_time ON provider_calls (agent_id, started_at) WHERE agent_id IS NOT NULL;

-- Lines written before this migration take their turn's agent. On a new database turns gain
-- agent_id only in 0040, after this runs (and there are no lines yet), hence the check.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = 'turns' AND column_name = 'agent_id') THEN
    UPDATE provider_calls AS p SET agent_id = t.agent_id
      FROM turns AS t WHERE t.id = p.turn_id AND p.agent_id IS NULL AND t.agent_id IS NOT NULL;
  END IF;
END
$$;
