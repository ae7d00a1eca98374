import type { Socket } from 'node:net';

/**
 * What keeps the receiver thread's memory bounded under a flood (issue 24): the number of connections
 * it holds, and the bytes of bodies it holds in memory at once. Thousands of slow connections with a
 * wrong token used to exhaust the thread's heap (each restart dropped every open connection).
 */

/**
 * At most `max` connections. When one more arrives, the oldest connection that carries no
 * authenticated call (still sending its headers, refused and draining, or idle between calls) is
 * closed to make room, so a flood of strangers' connections cannot keep head office out; a
 * connection carrying an authenticated call is never cut. Only when every held connection carries one
 * is the new connection closed instead.
 */
export class ConnectionGuard {
  /**
   * In order of arrival (a Map iterates in insertion order): the first evictable one is the oldest.
   * Keyed by the peer's address and port: over TLS the request's socket is not the one accepted.
   */
  private readonly open = new Map<Socket, string>();
  private readonly busy = new Set<string>();
  /** Connections closed to make room (or refused) since the start. */
  evicted = 0;

  constructor(private readonly max: number) {}

  private static key(socket: Socket): string {
    return `${socket.remoteAddress ?? ''}|${socket.remotePort ?? ''}`;
  }

  /** For the server's 'connection' event (the accepted TCP socket). */
  admit(socket: Socket): void {
    if (this.open.size >= this.max) {
      let victim: Socket | null = null;
      for (const [held, key] of this.open) {
        if (!this.busy.has(key)) {
          victim = held;
          break;
        }
      }
      this.evicted += 1;
      if (victim === null) {
        socket.destroy();
        return;
      }
      this.open.delete(victim);
      victim.destroy();
    }
    this.open.set(socket, ConnectionGuard.key(socket));
    socket.once('close', () => this.open.delete(socket));
  }

  /** The connection carries an authenticated call until its answer is sent (or it closes). */
  hold(socket: Socket, until: { once(event: 'close', listener: () => void): unknown }): void {
    const key = ConnectionGuard.key(socket);
    this.busy.add(key);
    until.once('close', () => this.busy.delete(key));
  }

  get size(): number {
    return this.open.size;
  }
}

/**
 * Bytes of bodies held in memory, over every call under way. A call reserves what it will hold (its
 * declared length, or chunk by chunk when it declares none) and gives it back once answered; a call
 * that would pass the budget is answered 503 with Retry-After (head office sends it again later).
 */
export class BodyBudget {
  private held = 0;

  constructor(private readonly max: number) {}

  /** Reserves `bytes`; false (nothing reserved) when that would pass the budget. */
  reserve(bytes: number): boolean {
    if (bytes < 0 || this.held + bytes > this.max) return false;
    this.held += bytes;
    return true;
  }

  /** Whether `bytes` more would fit now (nothing reserved). */
  wouldFit(bytes: number): boolean {
    return bytes >= 0 && this.held + bytes <= this.max;
  }

  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }

  get inUse(): number {
    return this.held;
  }
}
