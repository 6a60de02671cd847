import { EventEmitter, once } from 'node:events';
import net from 'node:net';

/**
 * Every command a Redis runs, read through MONITOR on a socket of its own; emits `command` with
 * the command's arguments. Not ioredis's monitor(): it marks its connection as monitoring in a
 * promise continuation after MONITOR's OK, so on a busy Redis a command line that arrives in the
 * same read as that OK is taken for a reply to nothing and fails the connection ("Command queue
 * state error").
 */
export class RedisMonitor extends EventEmitter {
  private constructor(private readonly socket: net.Socket) {
    super();
  }

  static async start(redisUrl: string): Promise<RedisMonitor> {
    const { hostname, port } = new URL(redisUrl);
    const socket = net.connect(Number(port || 6379), hostname);
    const monitor = new RedisMonitor(socket);
    await once(socket, 'connect');
    let pending = '';
    let started: () => void;
    const ok = new Promise<void>((resolve) => (started = resolve));
    socket.on('error', (error) => monitor.emit('error', error));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\r\n');
      pending = lines.pop()!;
      for (const line of lines) {
        if (line === '+OK') started();
        else if (line.startsWith('+')) monitor.emit('command', commandArgs(line));
        else if (line.startsWith('-')) monitor.emit('error', new Error(`MONITOR refused: ${line.slice(1)}`));
      }
    });
    socket.write('MONITOR\r\n');
    await ok;
    return monitor;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** `+1339518083.107412 [0 127.0.0.1:60866] "set" "k\"ey" "v"` → ['set', 'k"ey', 'v']. */
function commandArgs(line: string): string[] {
  const quoted = line.slice(line.indexOf('] ') + 2);
  return [...quoted.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]!.replace(/\\(["\\])/g, '$1'));
}
