-- This database's deployment id, made once. Every process claims its REDIS_PREFIX on its Redis
-- with it, so that the processes of two databases never share one prefix, whose queues would
-- hand each one the other's turns. A copy of the database (a restored backup) is the same
-- deployment.
CREATE TABLE deployment (
  -- At most one row.
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  id         text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO deployment (id) VALUES (gen_random_uuid()::text);
