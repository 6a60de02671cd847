-- A call claimed by a local tool slot of the worker that committed its step: `held_by` is the
-- Redis key of the BullMQ lock of the turn job that runs that step, which BullMQ renews while
-- the process lives (in Redis, so a PostgreSQL outage does not end it) and which is gone once
-- the job ends or its process dies. The call's queued job does not start a held call while that
-- lock exists; once it is gone the job takes the call over, the attempt counted.
ALTER TABLE tool_calls ADD COLUMN held_by text;
