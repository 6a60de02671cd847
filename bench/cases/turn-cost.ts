import path from 'node:path';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import type { Benchmark, ReportBuilder } from '../lib/benchmark';
import { now, sleep } from '../lib/clock';
import { startPrivatePostgres, startPrivateRedis, type PrivateService } from '../lib/private-services';
import { fillerTokens, parallelCalculatorCalls, scriptedContent } from '../lib/scenario';
import { withSingleLane } from '../lib/single-lane';

const TURNS = 50;
const WARMUP = 10;
const IDLE_SECONDS = 5;
const TOOL_CALLS = 8;
const TURNS_PER_CONVERSATION = 10;

interface SharedCounts {
  redisCommands: number;
  /** The time Redis spent executing them (INFO commandstats' usec), not counting its network I/O. */
  redisMicros: number;
  redisBytesIn: number;
  redisBytesOut: number;
  /** Commands by name, most called first. */
  redisByCommand: [string, number][];
  /** Statements sent by the service (round trips), and those run inside them (functions, triggers, foreign-key checks). */
  pgStatements: number;
  pgNestedStatements: number;
  pgCommits: number;
  pgWalBytes: number;
  /** Statements by text (shortened), most called first. */
  pgByStatement: [string, number][];
}

/**
 * What one turn costs the parts every process shares: Redis commands and bytes, PostgreSQL
 * statements, commits and WAL bytes, per plain turn (20 tokens) and per turn of a step with 8
 * parallel tool calls and a follow-up, posted one at a time with one websocket subscriber. On a
 * Redis and a PostgreSQL of its own (so the counts are this case's alone), all-in-one; the
 * process's background work while idle is counted on its own and taken off the per-turn figures.
 * The capacity model in docs/operations/capacity.md rests on these figures.
 */
export const turnCost: Benchmark = {
  name: 'turn-cost',
  title: 'What a turn costs Redis and PostgreSQL',
  kind: 'case',
  timeoutMs: 300_000,
  async run(context, report) {
    report.note(
      `${TURNS} sequential turns per kind and repetition after ${WARMUP} of warm-up, a new conversation every ${TURNS_PER_CONVERSATION} (its creation included), one websocket ` +
        `client subscribed; counted with INFO commandstats / INFO stats (CONFIG RESETSTAT before) and pg_stat_statements, pg_stat_database and pg_current_wal_lsn ` +
        `(reset before) on a private redis-server and PostgreSQL cluster; the idle background (${IDLE_SECONDS} s measured first) is subtracted pro rata.`,
    );
    for (const kind of ['plain', 'tools'] as const) {
      const label = kind === 'plain' ? 'plain turn (20 tokens)' : `turn with ${TOOL_CALLS} parallel tool calls and a follow-up`;
      report.define(`turnCost.${kind}.redisCommands`, { label: `Redis commands per ${label}`, unit: 'commands' });
      report.define(`turnCost.${kind}.redisMs`, { label: `Redis execution time per ${label} (commandstats)`, unit: 'ms' });
      report.define(`turnCost.${kind}.redisKiB`, { label: `Redis bytes in + out per ${label}`, unit: 'KiB' });
      report.define(`turnCost.${kind}.pgStatements`, { label: `PostgreSQL statements sent per ${label}`, unit: 'statements' });
      report.define(`turnCost.${kind}.pgNestedStatements`, { label: `PostgreSQL statements run inside those (functions, triggers, key checks) per ${label}`, unit: 'statements' });
      report.define(`turnCost.${kind}.pgCommits`, { label: `PostgreSQL commits per ${label}`, unit: 'commits' });
      report.define(`turnCost.${kind}.pgWalKiB`, { label: `PostgreSQL WAL per ${label}`, unit: 'KiB' });
    }
    report.define('turnCost.idle.redisCommandsPerSecond', { label: 'Redis commands per second of an idle all-in-one process', unit: 'commands/s' });
    report.define('turnCost.connections.redis', { label: 'Redis connections held by one all-in-one process (after the turns)', unit: 'connections' });
    report.define('turnCost.connections.pg', { label: 'PostgreSQL connections held by one all-in-one process (after the turns)', unit: 'connections' });
    report.define('turnCost.idle.pgStatementsPerSecond', { label: 'PostgreSQL statements per second of an idle all-in-one process', unit: 'statements/s' });

    const services: PrivateService[] = [];
    try {
      const redisService = await startPrivateRedis(path.join(context.tempDir, 'turn-cost-redis'));
      services.push(redisService);
      const postgresService = await startPrivatePostgres();
      services.push(postgresService);
      const counters = await SharedCounters.connect(redisService.url, postgresService.url);
      try {
        await withSingleLane(
          context,
          { name: 'turn-cost', topology: 'all-in-one', turnsPerConversation: TURNS_PER_CONVERSATION, env: { REDIS_URL: redisService.url, DATABASE_URL: postgresService.url } },
          async ({ api, tracker, lane }) => {
            const contents = { plain: scriptedContent(fillerTokens(20)), tools: scriptedContent(parallelCalculatorCalls(TOOL_CALLS)) };
            const oneTurn = async (content: string) => {
              const timing = await tracker.runTurn(api, await lane.next(), content);
              if (timing.endType !== 'turn-finish') throw new Error(`a turn ended with ${timing.endType}`);
            };
            for (let index = 0; index < WARMUP; index++) for (const content of Object.values(contents)) await oneTurn(content);

            await counters.reset();
            const idleStarted = now();
            await sleep(IDLE_SECONDS * 1000);
            const idle = await counters.read();
            const idleSeconds = (now() - idleStarted) / 1000;
            report.sample('turnCost.idle.redisCommandsPerSecond', idle.redisCommands / idleSeconds);
            report.sample('turnCost.idle.pgStatementsPerSecond', idle.pgStatements / idleSeconds);

            for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
              for (const kind of ['plain', 'tools'] as const) {
                await counters.reset();
                const started = now();
                for (let index = 0; index < TURNS; index++) await oneTurn(contents[kind]);
                const counts = await counters.read();
                const background = (now() - started) / 1000 / idleSeconds;
                const perTurn = (total: number, idleTotal: number) => Math.max(0, total - idleTotal * background) / TURNS;
                report.sample(`turnCost.${kind}.redisCommands`, perTurn(counts.redisCommands, idle.redisCommands));
                report.sample(`turnCost.${kind}.redisMs`, perTurn(counts.redisMicros, idle.redisMicros) / 1000);
                report.sample(`turnCost.${kind}.redisKiB`, perTurn(counts.redisBytesIn + counts.redisBytesOut, idle.redisBytesIn + idle.redisBytesOut) / 1024);
                report.sample(`turnCost.${kind}.pgStatements`, perTurn(counts.pgStatements, idle.pgStatements));
                report.sample(`turnCost.${kind}.pgNestedStatements`, perTurn(counts.pgNestedStatements, idle.pgNestedStatements));
                report.sample(`turnCost.${kind}.pgCommits`, perTurn(counts.pgCommits, idle.pgCommits));
                report.sample(`turnCost.${kind}.pgWalKiB`, perTurn(counts.pgWalBytes, idle.pgWalBytes) / 1024);
                if (repetition === 0) noteBreakdown(report, kind, counts);
              }
            }
            const connections = await counters.connections();
            report.sample('turnCost.connections.redis', connections.redis);
            report.sample('turnCost.connections.pg', connections.pg);
          },
        );
      } finally {
        await counters.close();
      }
    } finally {
      for (const service of services.reverse()) await service.stop();
    }
  },
};

function noteBreakdown(report: ReportBuilder, kind: string, counts: SharedCounts): void {
  const per = (calls: number) => (calls / TURNS).toFixed(1);
  report.note(`${kind}, Redis commands per turn by name: ${counts.redisByCommand.map(([name, calls]) => `${name} ${per(calls)}`).join(', ')}.`);
  report.note(`${kind}, the PostgreSQL statements sent most per turn: ${counts.pgByStatement.map(([text, calls]) => `\`${text}\` ${per(calls)}`).join('; ')}.`);
}

/** The counters of the private Redis and PostgreSQL, reset and read around a measurement. */
class SharedCounters {
  private walAtReset = '0/0';

  private constructor(
    private readonly redis: Redis,
    private readonly pg: Client,
  ) {}

  static async connect(redisUrl: string, postgresUrl: string): Promise<SharedCounters> {
    const pg = new Client({ connectionString: postgresUrl });
    await pg.connect();
    return new SharedCounters(new Redis(redisUrl), pg);
  }

  async reset(): Promise<void> {
    await this.redis.config('RESETSTAT');
    await this.pg.query('SELECT pg_stat_statements_reset(), pg_stat_reset()');
    this.walAtReset = (await this.pg.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn;
  }

  async read(): Promise<SharedCounts> {
    const commandstats = await this.redis.info('commandstats');
    const stats = await this.redis.info('stats');
    const byCommand = [...commandstats.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)]
      .map(([, name, calls, micros]) => [name!, Number(calls), Number(micros)] as [string, number, number])
      // This reader's own INFO and CONFIG calls.
      .filter(([name]) => name !== 'info' && !name.startsWith('config'))
      .sort((a, b) => b[1] - a[1]);
    const statNumber = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(stats)?.[1] ?? 0);
    // pg_stat_statements counts a statement when it ends; this reader's own are left out.
    const statements = await this.pg.query<{ query: string; calls: string; toplevel: boolean }>(
      `SELECT query, calls, toplevel FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%' AND query NOT LIKE '%pg_current_wal_lsn%' ORDER BY calls DESC`,
    );
    const sent = statements.rows.filter((row) => row.toplevel);
    const callsOf = (rows: { calls: string }[]) => rows.reduce((sum, row) => sum + Number(row.calls), 0);
    const commits = await this.pg.query<{ commits: string }>(`SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = 'postgres'`);
    const wal = await this.pg.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint AS bytes', [this.walAtReset]);
    return {
      redisCommands: byCommand.reduce((sum, [, calls]) => sum + calls, 0),
      redisMicros: byCommand.reduce((sum, [, , micros]) => sum + micros, 0),
      redisBytesIn: statNumber('total_net_input_bytes'),
      redisBytesOut: statNumber('total_net_output_bytes'),
      redisByCommand: byCommand.slice(0, 12).map(([name, calls]) => [name, calls]),
      pgStatements: callsOf(sent),
      pgNestedStatements: callsOf(statements.rows.filter((row) => !row.toplevel)),
      // The reader's own reset, LSN and statistics queries are commits too: about five per read.
      pgCommits: Math.max(0, Number(commits.rows[0]?.commits ?? 0) - 5),
      pgWalBytes: Number(wal.rows[0]!.bytes),
      pgByStatement: sent.slice(0, 6).map((row) => [row.query.replace(/\s+/g, ' ').slice(0, 90), Number(row.calls)]),
    };
  }

  /** Connections open to each, this reader's own left out (the bench's websocket client holds none). */
  async connections(): Promise<{ redis: number; pg: number }> {
    const clients = Number(/^connected_clients:(\d+)/m.exec(await this.redis.info('clients'))?.[1] ?? 0);
    const backends = await this.pg.query<{ count: string }>(`SELECT count(*) AS count FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`);
    return { redis: clients - 1, pg: Number(backends.rows[0]!.count) };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
    await this.pg.end();
  }
}
