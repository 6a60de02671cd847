import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface OpenDescriptor {
  /** What the descriptor is open on: a path (` (deleted)` once unlinked), `socket:[inode]`, `pipe:[inode]`… */
  target: string;
  /** A TCP socket's remote port (0 for a listening one). */
  remotePort?: number;
}

/**
 * The descriptors a process on this machine holds open, read from /proc: what a leak of files or
 * connections shows in. A descriptor closed while being listed is left out.
 */
export function openDescriptors(pid: number): OpenDescriptor[] {
  const remotePorts = tcpRemotePorts(pid);
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      return [];
    }
    const remotePort = remotePorts.get(/^socket:\[(\d+)\]$/.exec(target)?.[1] ?? '');
    return [remotePort === undefined ? { target } : { target, remotePort }];
  });
}

/** Socket inode → remote port, from /proc/<pid>/net/tcp{,6} (`sl local rem st … inode`, ports in hex). */
function tcpRemotePorts(pid: number): Map<string, number> {
  const ports = new Map<string, number>();
  for (const table of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const columns = line.trim().split(/\s+/);
      const remote = columns[2];
      const inode = columns[9];
      if (remote && inode) ports.set(inode, parseInt(remote.slice(remote.lastIndexOf(':') + 1), 16));
    }
  }
  return ports;
}
