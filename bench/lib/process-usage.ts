import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (100 almost everywhere; asked once). */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Resident set size in MiB, from /proc (what the kernel charges the process), or NaN once it is gone. */
export function rssMiB(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** User + system CPU seconds the process has used so far, or NaN once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const userTicks = Number(fields[11]);
    const systemTicks = Number(fields[12]);
    return (userTicks + systemTicks) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** CPU seconds of this (the bench client) process. */
export function ownCpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

/**
 * CPU seconds of every `postgres` process on the machine (server and backends). Backends that
 * exit between two readings take their time with them, so a difference can undercount; the
 * service's pools keep their connections, so in practice it does not.
 */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    const seconds = cpuSeconds(Number(entry));
    if (Number.isFinite(seconds)) total += seconds;
  }
  return total;
}
