// What the push channel needs from the rest of the host: access control, the status sources, config, clock, timelapse.
import type { ConfigSlice } from '../config/config-slice.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import type { Clock } from '../core/clock.ts';
import type { Identity } from '../access/identity.ts';
import type { ClientLimits } from './push-client.ts';
import type { JobStatusSource, PrinterStatusSource } from './sources.ts';

/** What the push channel needs from access control (AccessService satisfies it). */
export interface PushAccess {
  readonly enabled: boolean;
  anonymous(): Identity;
  identityForSession(sessionId: string): Identity | undefined;
  users: {
    onUserChanged(fn: (name: string) => void): () => void;
    onGroupChanged?(fn: (key: string) => void): () => void;
    getUser(name: string): unknown;
  };
  sessions: { onEnd?(fn: (s: { id: string; user: string }, reason: 'logout' | 'stale' | 'removed' | 'modified') => void): () => void };
}

/** The push channel's slice of the settings: the connection cap, the temperature history's length, cross-origin sockets. */
export type PushConfig = ConfigSlice<'server' | 'temperature' | 'api'>;

export interface PushServiceDeps {
  config: PushConfig;
  /** The settings' hash as clients compare it (`connected.config_hash`): over the whole saved file, not this slice. */
  configHash: () => string;
  events: EventBus;
  access: PushAccess;
  logger: Logger;
  clock: Clock;
  printer?: PrinterStatusSource;
  jobs?: JobStatusSource;
  /** Where the `timelapse` message and a running render come from when a client registers (absent: `null`). */
  timelapse?: TimelapseSource;
  limits?: Partial<ClientLimits>;
  /** Base period of `current` (OctoPrint: 500 ms); a client's throttle multiplies it. */
  intervalMs?: number;
}

export type ReauthReason = 'logout' | 'stale' | 'removed' | 'modified';

export interface TimelapseSource {
  config(): unknown;
  rendering(): unknown;
}
