-- A key's name (what its owner calls it: "laptop", "ci") and when it was last used, for the
-- key lists of GET /v1/keys and the admin. last_used_at is written at most once a minute per
-- key and API process (auth/key-usage.ts): a figure to the minute, not a write per request.
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS name text;
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS last_used_at timestamptz;
