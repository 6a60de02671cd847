--[[
  Appends events to a conversation's replay log and publishes each one, atomically, so that
  seq order, log order and publish order are the same order.

  KEYS[1]  the conversation's seq counter
  KEYS[2]  the conversation's event stream (entry ids are `<seq>-0`)
  KEYS[3]  the attempt of the turn emitting these events ('' in ARGV[6]: not fenced)
  KEYS[4]  the conversation's recent batch ids (a sorted set: batch id → its last seq)
  KEYS[5]  the mark of a turn whose end was announced (when ARGV[9] is '1')
  KEYS[6]  the in-flight state of the emitting turn's running step (when ARGV[10] is not '')
  ARGV[1]  the conversation's pub/sub channel (on a cluster it hashes to the keys' slot)
  ARGV[2]  how to announce: 'PUBLISH', or 'SPUBLISH' (sharded pub/sub, on a cluster)
  ARGV[3]  entries the stream keeps (approximate trimming)
  ARGV[4]  seconds the keys live after this append
  ARGV[5]  the lowest seq the counter may restart from ('' when the caller has not read it)
  ARGV[6]  the emitting worker's attempt of the turn ('' for events not emitted by a worker)
  ARGV[7]  this batch's id, unique per call: a call resent after a reconnect (its first run
           applied, its reply lost with the connection) is recognised and not applied twice
  ARGV[8]  how many recent batch ids the conversation remembers
  ARGV[9]  '1' when this batch announces the end of the turn of KEYS[5]; a turn's end is
           announced once, whoever tries (its worker, or its job's next run after that worker died)
  ARGV[10] what to do with KEYS[6], written with the events so that it is never set by a fenced
           worker nor outlives the announcement that clears it: '' nothing, 'DEL' delete it,
           anything else is its new value
  ARGV[11] seconds KEYS[6] lives after it is set
  ARGV[12…] the events, each a JSON object without `seq` (text starting with '{"'); none when
           the batch only writes KEYS[6], or only raises KEYS[3] (a cancel fencing off the
           turn's running attempt before it reads what that attempt announced)

  Each event is stored as `{"seq":N,…}` (field `e` of its stream entry, with `t`: when it was
  appended, in ms since the epoch by Redis's clock) and published as `{"seq":N,"at":T,…}`:
  gateways take `"at":T,` out (what clients get is the stored text) and measure their relay
  lag with it. A gateway that predates it passes `at` on as an extra field.

  Returns the seq of the last event appended (for a batch already applied: the seq it got; 0 for
  a batch without events), or
  -1 when the counter is missing and no floor was given: Redis lost it (restart, expiry), and
     the caller must read the conversation's last seq from PostgreSQL and call again, or seqs
     would start over at 1;
  -2 when a later attempt of the turn has emitted events: the caller is a stale worker (it
     lost its job while stopped) and must stop; nothing was appended;
  -3 when the batch announces a turn's end that was announced already; nothing was appended.
]]
local seqKey, streamKey, attemptKey, batchesKey, endKey, inflightKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local channel, publish = ARGV[1], ARGV[2]
local maxLength, ttl, floor, attempt = ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
local batchId, batchesKept, endsTurn = ARGV[7], tonumber(ARGV[8]), ARGV[9] == '1'
local inflight, inflightTtl = ARGV[10], ARGV[11]
local FIRST_EVENT = 12

local applied = redis.call('ZSCORE', batchesKey, batchId)
if applied then return tonumber(applied) end
if endsTurn and redis.call('EXISTS', endKey) == 1 then return -3 end

if attempt ~= '' then
  local current = tonumber(redis.call('GET', attemptKey) or '0')
  attempt = tonumber(attempt)
  if current > attempt then return -2 end
  if attempt > current then redis.call('SET', attemptKey, attempt, 'EX', ttl) end
end

if inflight == 'DEL' then
  redis.call('DEL', inflightKey)
elseif inflight ~= '' then
  redis.call('SET', inflightKey, inflight, 'EX', inflightTtl)
end
if #ARGV < FIRST_EVENT then return 0 end

if redis.call('EXISTS', seqKey) == 0 then
  if floor == '' then return -1 end
  redis.call('SET', seqKey, floor)
end

local time = redis.call('TIME')
local at = time[1] .. string.format('%03d', math.floor(tonumber(time[2]) / 1000))
local seq = 0
for i = FIRST_EVENT, #ARGV do
  seq = redis.call('INCR', seqKey)
  local rest = string.sub(ARGV[i], 2)
  redis.call('XADD', streamKey, 'MAXLEN', '~', maxLength, seq .. '-0', 'e', '{"seq":' .. seq .. ',' .. rest, 't', at)
  redis.call(publish, channel, '{"seq":' .. seq .. ',"at":' .. at .. ',' .. rest)
end
if endsTurn then redis.call('SET', endKey, seq, 'EX', ttl) end
redis.call('ZADD', batchesKey, seq, batchId)
redis.call('ZREMRANGEBYRANK', batchesKey, 0, -batchesKept - 1)
redis.call('EXPIRE', seqKey, ttl)
redis.call('EXPIRE', streamKey, ttl)
redis.call('EXPIRE', batchesKey, ttl)
return seq
