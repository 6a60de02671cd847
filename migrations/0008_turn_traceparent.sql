-- The W3C traceparent of the span that admitted the turn (NULL when tracing was off), so that
-- every job of the turn joins its trace: continuations, resumes after a client tool's answer,
-- a turn queued behind another, and jobs the reconciler makes again after a Redis loss.
ALTER TABLE turns ADD COLUMN IF NOT EXISTS traceparent text;
