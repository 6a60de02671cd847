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
  /** A call approved while its turn is parked: the decision's way to the tool. */
  approvalToTool: { turnsPerRepetition: 20, turnsPerConversation: 5, warmup: 3 },
  /** (6) One conversation, many subscribers. */
  websocketFanOut: { clients: 1000, tokens: 1000, pacedTokenDelayMs: 1 },
  /** (7) Turns with tool calls, many conversations over time. */
  soak: { callsPerTurn: 2, concurrency: 16, turnsPerConversation: 10, retentionSeconds: 5, sampleEveryMs: 1000 },
  /** How cost grows: short turns (as (4)) in a closed loop at each number of turns in flight. */
  turnCurve: { inFlight: [1, 4, 16, 64, 256], tokens: 20, turnsPerConversation: 10, secondsPerRepetition: 3, warmupSeconds: 1 },
  /** How cost grows: the first token of a turn on a conversation with this many stored messages. */
  historyCurve: { storedMessages: [10, 100, 1000, 10_000], tokens: 20, turnsPerRepetition: 12, messageChars: 100, boundedHistory: 100 },
  /** How cost grows: as historyCurve, on conversations whose path is that long, with as many superseded messages beside it or none. */
  supersededCurve: { storedMessages: [10, 100, 1000, 10_000], tokens: 20, turnsPerRepetition: 8, messageChars: 100 },
  /** How cost grows: idle, subscribed websocket connections held open at once. */
  idleWebsockets: { connections: [1000, 10_000] },
  /** How cost grows: parallel tool calls in one step (as (5)). */
  toolCurve: { calls: [1, 8, 32], turnsPerRepetition: 20, turnsPerConversation: 5, warmup: 3, flowsPerRepetition: 40 },
  /** Webhooks under the turns of (4): a steady rate for the delivery lag, closed-loop rounds for the throughput. */
  webhooks: { pacedTurnsPerSecond: 100, leadInSeconds: 1, drainTimeoutMs: 30_000 },
  /**
   * The first token while answers stream: N paced background answers always in flight, short
   * foreground requests timed one at a time, the systems taking turns in rounds.
   */
  ttftUnderLoad: {
    inFlight: [20, 100],
    backgroundTokens: 400,
    tokenDelayMs: 2,
    foregroundTokens: 20,
    foregroundRequests: 200,
    rounds: 4,
    turnsPerConversation: 5,
    warmup: 10,
    /** A round keeps its load on at least this long, so the background's tokens/s is not read over a few ms. */
    minWindowMs: 2000,
    /** A round stops taking foreground requests past this (a first token of seconds would make a round minutes long). */
    maxRoundMs: 20_000,
  },
} as const;

/**
 * Repetitions of a curve's points: at most this many, fewer than the suite's default, because
 * every point costs a run of its own and the suite must stay within its time budget.
 */
export const CURVE_REPETITIONS = 2;

export const curveRepetitions = (options: { repetitions: number }): number => Math.min(options.repetitions, CURVE_REPETITIONS);
