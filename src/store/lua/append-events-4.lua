--[[
  Appends events to a conversation's replay log and publishes each one, atomically, so that
  seq order, log order and publish order are the same order.

  KEYS[1]  the conversation's seq counter
  KEYS[2]  the conversation's event stream (entry ids are `<seq>-0`)
  KEYS[3]  the attempt of the turn emitting these events ('' in ARGV[5]: not fenced)
  KEYS[4]  the conversation's recent batch ids (a sorted set: batch id → its last seq)
  ARGV[1]  the conversation's pub/sub channel
  ARGV[2]  entries the stream keeps (approximate trimming)
  ARGV[3]  seconds the keys live after this append
  ARGV[4]  the lowest seq the counter may restart from ('' when the caller has not read it)
  ARGV[5]  the emitting worker's attempt of the turn ('' for events not emitted by a worker)
  ARGV[6]  this batch's id, unique per call: a call resent after a reconnect (its first run
           applied, its reply lost with the connection) is recognised and not applied twice
  ARGV[7]  how many recent batch ids the conversation remembers
  ARGV[8…] the events, each a JSON object without `seq` (text starting with '{"')

  Returns the seq of the last event appended (for a batch already applied: the seq it got), or
  -1 when the counter is missing and no floor was given: Redis lost it (restart, expiry), and
     the caller must read the conversation's last seq from PostgreSQL and call again, or seqs
     would start over at 1;
  -2 when a later attempt of the turn has emitted events: the caller is a stale worker (it
     lost its job while stopped) and must stop; nothing was appended.
]]
local seqKey, streamKey, attemptKey, batchesKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local channel, maxLength, ttl, floor, attempt = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4], ARGV[5]
local batchId, batchesKept = ARGV[6], tonumber(ARGV[7])

local applied = redis.call('ZSCORE', batchesKey, batchId)
if applied then return tonumber(applied) end

if attempt ~= '' then
  local current = tonumber(redis.call('GET', attemptKey) or '0')
  attempt = tonumber(attempt)
  if current > attempt then return -2 end
  if attempt > current then redis.call('SET', attemptKey, attempt, 'EX', ttl) end
end

if redis.call('EXISTS', seqKey) == 0 then
  if floor == '' then return -1 end
  redis.call('SET', seqKey, floor)
end

local seq = 0
for i = 8, #ARGV do
  seq = redis.call('INCR', seqKey)
  local event = '{"seq":' .. seq .. ',' .. string.sub(ARGV[i], 2)
  redis.call('XADD', streamKey, 'MAXLEN', '~', maxLength, seq .. '-0', 'e', event)
  redis.call('PUBLISH', channel, event)
end
redis.call('ZADD', batchesKey, seq, batchId)
redis.call('ZREMRANGEBYRANK', batchesKey, 0, -batchesKept - 1)
redis.call('EXPIRE', seqKey, ttl)
redis.call('EXPIRE', streamKey, ttl)
redis.call('EXPIRE', batchesKey, ttl)
return seq
