import { connectRedis, postgresActivity, redisCommandsProcessed, redisCpuSeconds } from './backing-services';
import { now } from './clock';
import { cpuSeconds, ownCpuSeconds, postgresCpuSeconds } from './process-usage';

export interface MeteredProcess {
  name: string;
  pid: number;
}

interface Reading {
  at: number;
  processes: number[];
  bench: number;
  redis: number;
  postgres: number;
  redisCommands: number;
  postgresTransactions: number;
  postgresRowsWritten: number;
}

/**
 * CPU seconds each process used while a benchmark measured: on a 2-core machine the service,
 * the scripted model, the bench client, Redis and PostgreSQL share the cores, and this says who
 * had them.
 */
export class CpuMeter {
  private constructor(
    private readonly processes: MeteredProcess[],
    private readonly start: Reading,
  ) {}

  static async start(processes: MeteredProcess[]): Promise<CpuMeter> {
    return new CpuMeter(processes, await read(processes));
  }

  /**
   * One line for RESULTS.md: seconds of CPU and the share of one core, per process; with
   * `per` (e.g. the turns done), also the Redis commands and PostgreSQL work per unit.
   */
  async stop(label = 'CPU while measuring', per?: { count: number; unit: string }): Promise<string> {
    const end = await read(this.processes);
    const seconds = (end.at - this.start.at) / 1000;
    const share = (used: number) => `${used.toFixed(1)} s (${Math.round((used / seconds) * 100)}% of a core)`;
    // Backends that exited between the readings take their CPU time with them; never show less than nothing.
    end.postgres = Math.max(end.postgres, this.start.postgres);
    const parts = this.processes.map((process, index) => `${process.name} ${share(end.processes[index]! - this.start.processes[index]!)}`);
    parts.push(`bench client ${share(end.bench - this.start.bench)}`);
    parts.push(`redis-server ${share(end.redis - this.start.redis)}`);
    parts.push(`postgres (all processes) ${share(end.postgres - this.start.postgres)}`);
    const line = `${label} (${seconds.toFixed(1)} s wall): ${parts.join('; ')}.`;
    if (!per || per.count === 0) return line;
    // pg_stat_database lags by up to a second: read the counters again once it caught up.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const counters = await read(this.processes);
    const each = (total: number) => (total / per.count).toFixed(1);
    const cpuEach = (used: number) => `${((used / per.count) * 1000).toFixed(2)} ms`;
    const cpuParts = this.processes.map((process, index) => `${process.name} ${cpuEach(end.processes[index]! - this.start.processes[index]!)}`);
    cpuParts.push(
      `bench client ${cpuEach(end.bench - this.start.bench)}`,
      `redis-server ${cpuEach(end.redis - this.start.redis)}`,
      `postgres ${cpuEach(end.postgres - this.start.postgres)}`,
    );
    return (
      `${line} CPU per ${per.unit}: ${cpuParts.join(', ')}. Per ${per.unit} (whole servers, so other tenants count too): ${each(counters.redisCommands - this.start.redisCommands)} Redis commands, ` +
      `${each(counters.postgresTransactions - this.start.postgresTransactions)} PostgreSQL transactions (an autocommit statement is one), ` +
      `${each(counters.postgresRowsWritten - this.start.postgresRowsWritten)} rows written.`
    );
  }
}

async function read(processes: MeteredProcess[]): Promise<Reading> {
  const redis = connectRedis();
  try {
    const [redisCpu, redisCommands, activity] = await Promise.all([redisCpuSeconds(redis), redisCommandsProcessed(redis), postgresActivity()]);
    return {
      at: now(),
      processes: processes.map((process) => cpuSeconds(process.pid)),
      bench: ownCpuSeconds(),
      redis: redisCpu,
      postgres: postgresCpuSeconds(),
      redisCommands,
      postgresTransactions: activity.transactions,
      postgresRowsWritten: activity.rowsWritten,
    };
  } finally {
    redis.disconnect();
  }
}
