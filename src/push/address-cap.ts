// Push connections per client address: counted as they open and close, refused over `server.connections.maxPerAddress`.
import type { Logger } from '../core/logger.ts';

/** Close code (SockJS and websocket application range) for a push connection over the per-address cap. */
export const PUSH_CAP_CLOSE_CODE = 4029;

export interface AddressLimits {
  maxPerAddress: number;
  /** Addresses without the cap: a reverse proxy on this host carries every client. */
  uncapped: readonly string[];
}

/**
 * SockJS polling sessions hold no socket between polls, so the socket cap (http/connection-guard.ts) does not see
 * them: one address opening them as fast as it could grew the server by 60 MB in 10 s, without credentials.
 */
export class AddressCap {
  private readonly open = new Map<string, number>();
  /** Addresses at the cap that were logged already: a flood must not become a flood of log lines. */
  private readonly warned = new Set<string>();

  constructor(private readonly limits: () => AddressLimits, private readonly logger: Logger) {}

  /** Counts a new connection from `address`, or false (nothing counted) when that address is at its cap. */
  admit(address: string): boolean {
    const { maxPerAddress, uncapped } = this.limits();
    const open = this.open.get(address) ?? 0;
    if (maxPerAddress > 0 && open >= maxPerAddress && !uncapped.includes(address)) {
      if (!this.warned.has(address)) this.logger.warn({ remoteAddress: address, open }, 'push: too many connections from one address, closing new ones');
      this.warned.add(address);
      return false;
    }
    this.open.set(address, open + 1);
    return true;
  }

  /** A connection `admit` counted has closed. */
  release(address: string): void {
    const left = (this.open.get(address) ?? 1) - 1;
    if (left > 0) this.open.set(address, left);
    else this.open.delete(address);
    this.warned.delete(address);
  }
}
