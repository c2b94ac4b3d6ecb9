// Typed event bus: the one place services announce what happened; listeners are grouped by owner so stop() can drop them all.
import type { EventMap, EventName } from './events.ts';

export type EventListener<K extends EventName> = (payload: EventMap[K], name: K) => void;
export type AnyEventListener = <K extends EventName>(name: K, payload: EventMap[K]) => void;

interface Registration {
  owner: string;
  name: EventName | '*';
  fn: (payload: unknown, name: EventName) => void;
}

export class EventBus {
  private registrations: Registration[] = [];
  private readonly onListenerError: (err: unknown, name: EventName, owner: string) => void;

  constructor(onListenerError?: (err: unknown, name: EventName, owner: string) => void) {
    this.onListenerError = onListenerError ?? (() => {});
  }

  on<K extends EventName>(owner: string, name: K, fn: EventListener<K>): () => void {
    const reg: Registration = { owner, name, fn: fn as Registration['fn'] };
    this.registrations = [...this.registrations, reg];
    return () => { this.registrations = this.registrations.filter((r) => r !== reg); };
  }

  /** Every event, in emit order (push channel, event subscriptions). */
  onAny(owner: string, fn: AnyEventListener): () => void {
    const reg: Registration = { owner, name: '*', fn: (payload, name) => fn(name, payload as never) };
    this.registrations = [...this.registrations, reg];
    return () => { this.registrations = this.registrations.filter((r) => r !== reg); };
  }

  removeOwner(owner: string): void {
    this.registrations = this.registrations.filter((r) => r.owner !== owner);
  }

  /** Synchronous fan-out; a throwing listener is reported and never stops the others or the emitter. */
  emit<K extends EventName>(name: K, payload: EventMap[K]): void {
    // The array is replaced (never mutated) on (un)registration, so iterating a snapshot is safe.
    const regs = this.registrations;
    for (let i = 0; i < regs.length; i++) {
      const r = regs[i];
      if (r.name !== name && r.name !== '*') continue;
      try {
        r.fn(payload, name);
      } catch (err) {
        this.onListenerError(err, name, r.owner);
      }
    }
  }
}
