// One notification as every kind of target receives it, and what a target's sender promises.

export interface Snapshot {
  /** A JPEG (or whatever the camera sends) on disk, removed once every target had it. */
  file: string;
  mimetype: string;
  /** The camera's snapshot URL, for targets that take a link instead of the picture. */
  url: string;
}

export interface Notification {
  /** The OctoPrint event name (or PrintProgress, Test). */
  event: string;
  title: string;
  body: string;
  /** info, success, warning or failure: Apprise's types, shown as colours or icons by most services. */
  type: 'info' | 'success' | 'warning' | 'failure';
  printer: string;
  payload: Record<string, unknown>;
  /** ms since the epoch. */
  time: number;
  snapshot: Snapshot | null;
}

export interface SendOptions {
  timeoutMs: number;
  snapshotAs: 'base64' | 'link';
  signal: AbortSignal;
}

/** Delivers to one URL; rejects with a reason fit for the delivery log (never the URL itself). */
export interface Sender {
  readonly kind: 'webhook' | 'ntfy' | 'apprise';
  send(n: Notification, opts: SendOptions): Promise<void>;
}
