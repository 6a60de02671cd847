/**
 * The long-lived connections of this process (websockets, SSE streams) by the API key that
 * opened them, so that a revoked key's connections can be closed. Pure bookkeeping.
 */
export class OpenConnections {
  private readonly byKey = new Map<string, Set<(reason: string) => void>>();

  /** Registers a connection's close; returns its removal (call it when the connection ends). */
  add(keyId: string, close: (reason: string) => void): () => void {
    let closers = this.byKey.get(keyId);
    if (!closers) this.byKey.set(keyId, (closers = new Set()));
    closers.add(close);
    return () => {
      closers.delete(close);
      if (closers.size === 0 && this.byKey.get(keyId) === closers) this.byKey.delete(keyId);
    };
  }

  keyIds(): string[] {
    return [...this.byKey.keys()];
  }

  /** Closes every connection of the key; returns how many. */
  closeKey(keyId: string, reason: string): number {
    const closers = [...(this.byKey.get(keyId) ?? [])];
    this.byKey.delete(keyId);
    for (const close of closers) close(reason);
    return closers.length;
  }
}
