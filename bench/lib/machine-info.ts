import os from 'node:os';
import { connectRedis, postgresVersion, redisVersion } from './backing-services';

export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  redis: string;
  postgres: string;
  os: string;
  loadAverage: string;
}

/** What the figures were measured on; they mean little without it. */
export async function machineInfo(): Promise<MachineInfo> {
  const redis = connectRedis();
  try {
    return {
      cores: os.cpus().length,
      cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
      node: process.version,
      redis: await redisVersion(redis),
      postgres: await postgresVersion(),
      os: `${os.type()} ${os.release()} (${os.arch()})`,
      loadAverage: os
        .loadavg()
        .map((load) => load.toFixed(2))
        .join(' / '),
    };
  } finally {
    redis.disconnect();
  }
}
