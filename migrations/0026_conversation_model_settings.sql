-- A conversation's settings for its turns' provider requests (temperature, max_tokens, …) and its
-- structured output, by the names the API takes: a turn's own win, field by field for the
-- settings. Nullable columns are added without rewriting the table.
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS model_settings jsonb;
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS response_format jsonb;
