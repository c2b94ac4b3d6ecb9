// A device behind an MQTT topic pair (PSU Control-MQTT's shape, docs/reference/plugins.md §1.4): on/off payloads
// published to the control topic, the state the last message on the state topic (a plain payload or a JSON one such
// as {"POWER":"ON"}), through Gantry's own broker connection.
import type { PowerDeviceSettings } from './settings.ts';
import { deviceError, type PowerProvider } from './provider.ts';

/** The broker connection as power control needs it (src/mqtt/ implements it; main.ts passes it). */
export interface PowerMqtt {
  /** False while the broker is away: a switch would only be queued. */
  connected(): boolean;
  publish(topic: string, payload: string): void;
  /** Every message on `topic` from now on (retained ones included); returns the way to stop. */
  subscribe(topic: string, onMessage: (payload: string) => void): () => void;
}

/** What a state payload means: true, false, or undefined when it is neither configured value. */
export function mqttState(payload: string, on: string, off: string): boolean | undefined {
  const p = payload.trim();
  const match = (want: string): boolean => {
    const w = want.trim();
    if (w.startsWith('{')) {
      try {
        const spec = JSON.parse(w) as Record<string, unknown>;
        const got = JSON.parse(p) as Record<string, unknown>;
        const [key] = Object.keys(spec);
        return key !== undefined && String(got[key]).toUpperCase() === String(spec[key]).toUpperCase();
      } catch {
        return false;
      }
    }
    return p.toUpperCase() === w.toUpperCase();
  };
  if (match(on)) return true;
  if (match(off)) return false;
  return undefined;
}

export function mqttTopics(s: PowerDeviceSettings, broker: PowerMqtt | undefined): PowerProvider {
  const label = `MQTT topic ${s.controlTopic}`;
  let last: boolean | undefined;
  const waiters: Array<(v: boolean) => void> = [];
  const stop = broker && s.stateTopic !== '' ? broker.subscribe(s.stateTopic, (payload) => {
    const v = mqttState(payload, s.stateOn, s.stateOff);
    if (v === undefined) return;
    last = v;
    for (const w of waiters.splice(0)) w(v);
  }) : () => {};
  return {
    label,
    async setPower(on) {
      if (!broker) throw deviceError(label, 'cannot be used: MQTT is not configured (plugins.mqtt.broker.url)');
      if (s.controlTopic === '') throw deviceError(label, 'is not set (plugins.psucontrol.gantry.controlTopic)');
      if (!broker.connected()) throw deviceError(label, 'cannot be reached: the MQTT broker is not connected');
      broker.publish(s.controlTopic, on ? s.onPayload : s.offPayload);
      if (s.stateTopic === '') { last = on; return; }
      // The device confirms on its state topic; without that within the timeout it did not answer.
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          const i = waiters.indexOf(got);
          if (i >= 0) waiters.splice(i, 1);
          reject(deviceError(label, `got no state on ${s.stateTopic} within ${s.timeout} s`));
        }, Math.round(s.timeout * 1000));
        const got = (v: boolean) => {
          if (v !== on) { waiters.push(got); return; }
          clearTimeout(timer);
          resolve();
        };
        waiters.push(got);
      });
    },
    async readState() {
      if (last === undefined) throw deviceError(label, s.stateTopic === '' ? 'has not been switched yet (no state topic)' : `has sent no state on ${s.stateTopic}`);
      return last;
    },
    close: () => stop(),
  };
}
