// Home Assistant's command topics (hassControl/*), off unless enabled, and then run as the configured user through the
// API routes (so that user's permissions apply). Each outcome is reported on <base>hass/control_result.
import type { Logger } from '../core/logger.ts';
import type { MqttSettings } from './settings.ts';
import type { ApiCall, ApiDispatch, Publish } from './types.ts';

type Call = Omit<ApiCall, 'asUser'>;

const isTrue = (p: string) => p.trim().toLowerCase() === 'true';
const isFalse = (p: string) => p.trim().toLowerCase() === 'false';

function parseJson(p: string): unknown {
  try {
    return JSON.parse(p);
  } catch {
    return undefined;
  }
}

/** The API call a command stands for, or a reason it is not understood. */
export function commandCall(command: string, payload: string): Call | { error: string } {
  const post = (path: string, body: unknown): Call => ({ method: 'POST', path, body });
  switch (command) {
    case 'connect':
      if (isTrue(payload)) return post('/api/connection', { command: 'connect' });
      if (isFalse(payload)) return post('/api/connection', { command: 'disconnect' });
      break;
    case 'stop':
      return post('/api/printer/command', { commands: ['M112'] });
    case 'psu':
      // Power control (src/power/): an off while printing or heating is refused there (409, told on control_result).
      if (isTrue(payload)) return post('/api/plugin/psucontrol', { command: 'turnPSUOn' });
      if (isFalse(payload)) return post('/api/plugin/psucontrol', { command: 'turnPSUOff' });
      break;
    case 'cancel':
      return post('/api/job', { command: 'cancel' });
    case 'bedclear': {
      // The farm's queue: the payload names the printer whose bed is clear (empty: the default printer).
      const name = payload.trim() || 'default';
      if (/^[\w.-]{1,64}$/.test(name) && !/^\.+$/.test(name)) return post(`/api/farm/printers/${name}/bedclear`, {});
      break;
    }
    case 'pause':
      if (isTrue(payload)) return post('/api/job', { command: 'pause', action: 'pause' });
      if (isFalse(payload)) return post('/api/job', { command: 'pause', action: 'resume' });
      break;
    case 'shutdown':
    case 'reboot':
    case 'restart':
      return post(`/api/system/commands/core/${command}`, {});
    case 'home': {
      const axes = parseJson(payload);
      if (Array.isArray(axes)) {
        return post('/api/printer/printhead', { command: 'home', axes: axes.filter((a) => typeof a === 'string' && /^[xyze]$/i.test(a)).map((a: string) => a.toLowerCase()) });
      }
      break;
    }
    case 'jog': {
      const j = parseJson(payload) as Record<string, unknown> | undefined;
      if (j && typeof j === 'object' && !Array.isArray(j)) {
        const body: Record<string, unknown> = { command: 'jog' };
        for (const k of ['x', 'y', 'z', 'speed']) if (typeof j[k] === 'number') body[k] = j[k];
        return post('/api/printer/printhead', body);
      }
      break;
    }
    case 'commands': {
      const list = parseJson(payload);
      if (Array.isArray(list)) return post('/api/printer/command', { commands: list.filter((l) => typeof l === 'string') });
      return post('/api/printer/command', { commands: payload.split('\n').map((l) => l.trim()).filter(Boolean) });
    }
    default:
  }
  return { error: `Unknown message received: ${command} ${payload.slice(0, 100)}` };
}

export class HassControl {
  /** Commands dispatched and not answered yet; capped like the API bridge's requests (`api.concurrency`). */
  private inFlight = 0;

  constructor(
    private readonly s: MqttSettings,
    private readonly publish: Publish,
    private readonly dispatch: ApiDispatch,
    private readonly snapshot: () => Promise<Buffer>,
    private readonly camera: (jpeg: Buffer) => void,
    private readonly logger: Logger,
  ) {}

  /** The command topic filter, e.g. `gantry/ab12…/hassControl/+`. */
  get topicFilter(): string {
    return this.s.base + this.s.topics.controlSub('+');
  }

  private result(command: string, status: number, error?: string): void {
    this.publish(this.s.base + this.s.topics.hassSub('control_result'), { command, status, ...(error ? { error } : {}) },
      { retain: false, qos: this.s.stateQos });
  }

  handle(topic: string, raw: Buffer): void {
    const prefix = this.s.base + this.s.topics.controlSub('');
    if (!topic.startsWith(prefix)) return;
    const command = topic.slice(prefix.length);
    const payload = raw.toString('utf8');
    const { enabled, user } = this.s.control;
    if (!enabled || !user) {
      this.logger.warn({ command }, 'MQTT: command refused, commands over MQTT are off');
      return this.result(command, 403, enabled ? 'No user is configured for MQTT commands' : 'Commands over MQTT are off');
    }
    // Anyone who may publish to the broker may send these: a flood waits in the broker, not here.
    if (this.inFlight >= this.s.api.concurrency) return this.result(command, 503, 'Too many commands in flight, try again');
    this.inFlight++;
    void this.run(command, payload, user).catch((err: unknown) => {
      this.logger.error({ err, command }, 'MQTT: command failed');
      this.result(command, 500, 'Internal error');
    }).finally(() => { this.inFlight--; });
  }

  private async run(command: string, payload: string, user: string): Promise<void> {
    if (command === 'camera_snapshot') {
      const me = await this.dispatch({ method: 'GET', path: '/api/currentuser', asUser: user });
      const perms = (me.body as { permissions?: unknown } | null)?.permissions;
      if (me.status !== 200 || !Array.isArray(perms) || !perms.includes('WEBCAM')) return this.result(command, 403, 'Forbidden');
      this.camera(await this.snapshot());
      return this.result(command, 200);
    }
    const call = commandCall(command, payload);
    if ('error' in call) {
      this.logger.warn({ command }, call.error);
      return this.result(command, 400, call.error);
    }
    const res = await this.dispatch({ ...call, asUser: user });
    const error = res.status >= 400 ? (res.body as { error?: string } | null)?.error ?? `HTTP ${res.status}` : undefined;
    this.result(command, res.status, error);
  }
}
