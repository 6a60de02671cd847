/**
 * The sizes of the workloads, in one place, because each case and its baseline must ask the
 * scripted model for exactly the same answers.
 */
export const WORKLOADS = {
  /** (1) Sequential turns, short answers: the latency to the first token. */
  ttft: { tokens: 20, turnsPerRepetition: 200, turnsPerConversation: 10, warmup: 20 },
  /** (2) One long answer at full speed. */
  singleStream: { tokens: 5000, warmup: 2 },
  /** (3) Many answers at once, one subscriber each. */
  concurrent: { streams: 100, tokens: 1000 },
  /** (4) Short answers, closed loop. */
  turnThroughput: { tokens: 20, turnsPerConversation: 10, warmupSeconds: 2 },
  /** (5) One step with parallel calls to a tool that returns at once. */
  toolFanOut: { calls: 8, turnsPerRepetition: 30, turnsPerConversation: 5, warmup: 5 },
  /** (6) One conversation, many subscribers. */
  websocketFanOut: { clients: 1000, tokens: 1000, pacedTokenDelayMs: 1 },
  /** (7) Turns with tool calls, many conversations over time. */
  soak: { callsPerTurn: 2, concurrency: 16, turnsPerConversation: 10, retentionSeconds: 5, sampleEveryMs: 1000 },
} as const;
