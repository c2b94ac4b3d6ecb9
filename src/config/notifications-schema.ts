// Settings of the notifier: `plugins.notifications` — the targets (Apprise URLs, JSON webhooks, ntfy), which events
// each gets, and the bounds that keep a chatty print or a dead target from costing anything.
import { Type } from './typebox.ts';

/** The events a target gets when its `events` list is left out: what a person wants on their phone. */
export const DEFAULT_NOTIFY_EVENTS = ['PrintStarted', 'PrintDone', 'PrintFailed', 'PrintCancelled', 'PrintPaused',
  'FilamentChange', 'PrintRecoveryAvailable', 'Error'];

const Target = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 128, description: 'Shown in the UI and the delivery log' })),
  url: Type.String({ minLength: 1, maxLength: 4096, description: 'An Apprise URL (tgram://, discord://, pover://, json://, …), an http(s):// JSON webhook, or ntfy://host/topic' }),
  events: Type.Optional(Type.Array(Type.String({ maxLength: 128 }), { maxItems: 64, description: 'OctoPrint event names this target gets (default: the print events, errors and recovery)' })),
  snapshot: Type.Optional(Type.Boolean({ description: 'Attach a webcam snapshot (webcam.snapshot) to the print events' })),
  snapshotAs: Type.Optional(Type.Union([Type.Literal('base64'), Type.Literal('link')], { description: 'JSON webhooks: the snapshot inline as base64, or the camera\'s snapshot URL' })),
  transport: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('apprise'), Type.Literal('builtin')], {
    description: 'auto: http(s) URLs are posted by Gantry, ntfy:// through apprise when installed (else by Gantry), every other scheme through apprise',
  })),
  enabled: Type.Optional(Type.Boolean()),
}, { additionalProperties: true });

const Message = Type.Object({
  title: Type.Optional(Type.String({ maxLength: 512 })),
  body: Type.Optional(Type.String({ maxLength: 4096 })),
}, { additionalProperties: false });

export const NotificationsSection = Type.Object({
  enabled: Type.Boolean({ default: true, description: 'Send notifications to the targets' }),
  targets: Type.Array(Target, { default: [], maxItems: 32, description: 'Where notifications go' }),
  progressStep: Type.Integer({ default: 25, minimum: 0, maximum: 100, description: 'PrintProgress every this many percent (0: never)' }),
  layers: Type.Array(Type.Integer({ minimum: 1, maximum: 100_000 }), { default: [], maxItems: 100, description: 'PrintLayer when the print reaches these layers (layer progress, src/layer-progress/)' }),
  layerStep: Type.Integer({ default: 0, minimum: 0, maximum: 100_000, description: 'PrintLayer every this many layers (0: never)' }),
  messages: Type.Record(Type.String(), Message, { default: {}, description: 'Per event: a title and body template ({printer}, {file}, {progress}, {time}, {reason}, {error}, {movie}, {event})' }),
  perMinute: Type.Integer({ default: 20, minimum: 1, maximum: 600, description: 'Most messages one target gets per minute (more wait, then the oldest are dropped)' }),
  queueSize: Type.Integer({ default: 50, minimum: 1, maximum: 1000, description: 'Messages waiting per target at most (the oldest dropped first)' }),
  retries: Type.Integer({ default: 3, minimum: 0, maximum: 10, description: 'Tries after a failed delivery' }),
  retryDelay: Type.Number({ default: 2, minimum: 0.01, maximum: 600, description: 'Seconds before the first retry (doubling)' }),
  timeout: Type.Number({ default: 15, minimum: 0.1, maximum: 300, description: 'Seconds one delivery may take' }),
}, { default: {}, additionalProperties: true, description: 'Notifications (Gantry, built in)' });
