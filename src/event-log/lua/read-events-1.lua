--[[
  Reads a page of a conversation's replay log: the entries from an id on, oldest first, up to a
  number of events or of bytes, whichever comes first. A page bounded by count alone holds
  whatever its events weigh (500 tool results of a megabyte each); this one holds about its
  byte budget whatever they weigh, so that a replay's reader costs about that much.

  KEYS[1]  the conversation's event stream (entry ids are `<seq>-0`, field `e` the event's JSON)
  ARGV[1]  the first entry id to read (`<seq>-0`)
  ARGV[2]  the most events the page holds
  ARGV[3]  the most bytes of event JSON the page holds; an event larger than that comes alone,
           so that every page makes progress

  The stream is read in small runs rather than in one XRANGE of ARGV[2] entries, so that the
  script itself never holds much more than the page: each run is as long as the events read so
  far say will fit (at least 1, at most RUN_MAX).

  Returns {entries, full}: entries as XRANGE returns them ({id, {field, value, …}}), and full = 1
  when the page stopped at one of its bounds (more entries may follow), 0 when it reached the end
  of the stream.
]]
local stream = KEYS[1]
local start = ARGV[1]
local maxEvents, maxBytes = tonumber(ARGV[2]), tonumber(ARGV[3])
local RUN_MAX = 64

local entries, bytes = {}, 0
local run = 1
while #entries < maxEvents do
  local got = redis.call('XRANGE', stream, start, '+', 'COUNT', run)
  for _, entry in ipairs(got) do
    local size = #entry[2][2]
    if #entries > 0 and bytes + size > maxBytes then return {entries, 1} end
    entries[#entries + 1] = entry
    bytes = bytes + size
    if #entries == maxEvents then return {entries, 1} end
  end
  if #got < run then return {entries, 0} end
  -- Spent: the next entry is not even looked at (it may be a large one).
  if bytes >= maxBytes then return {entries, 1} end
  start = '(' .. got[#got][1]
  local average = bytes / #entries
  run = math.max(1, math.min(RUN_MAX, maxEvents - #entries, math.floor((maxBytes - bytes) / average) + 1))
end
return {entries, 1}
