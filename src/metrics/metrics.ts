import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every metric Switchyard exports, in one registry per process (not prom-client's global
 * one, so tests can run several services side by side). Names are the dashboard's contract.
 */
export function createMetrics() {
  const registry = new Registry();
  // The gateway registers its client count once it exists; read at scrape time.
  let countWebsocketClients = () => 0;
  let queues: { name: string; getJobCounts(...states: string[]): Promise<Record<string, number>> }[] = [];
  collectDefaultMetrics({ register: registry, prefix: 'switchyard_process_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'switchyard_http_requests_total',
      help: 'HTTP requests answered, by route and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    turnsStarted: new Counter({
      name: 'switchyard_turns_started_total',
      help: 'Turn attempts started by workers',
      registers: [registry],
    }),
    turnsFinished: new Counter({
      name: 'switchyard_turns_finished_total',
      help: 'Turns ended, by final status',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    turnDuration: new Histogram({
      name: 'switchyard_turn_duration_seconds',
      help: 'From a turn being accepted to its end',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers: [registry],
    }),
    timeToFirstToken: new Histogram({
      name: 'switchyard_time_to_first_token_seconds',
      help: 'From a step starting to its first token from the provider',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    providerErrors: new Counter({
      name: 'switchyard_provider_errors_total',
      help: 'Failed completion requests, by kind',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    toolCalls: new Counter({
      name: 'switchyard_tool_calls_total',
      help: 'Tool calls settled, by final status',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    websocketClients: new Gauge({
      name: 'switchyard_websocket_clients',
      help: 'Open websocket connections on this gateway',
      registers: [registry],
      collect() {
        this.set(countWebsocketClients());
      },
    }),
    queueJobs: new Gauge({
      name: 'switchyard_queue_jobs',
      help: 'Jobs in the turn and tool queues, by state (read from Redis at scrape time)',
      labelNames: ['queue', 'state'] as const,
      registers: [registry],
      async collect() {
        for (const queue of queues) {
          const counts = await queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'waiting-children', 'failed');
          for (const [state, count] of Object.entries(counts)) this.set({ queue: queue.name, state }, count);
        }
      },
    }),
    countWebsocketClientsWith(counter: () => number) {
      countWebsocketClients = counter;
    },
    watchQueues(watched: typeof queues) {
      queues = watched;
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
