// Which sender a target's URL goes to: http(s) is Gantry's JSON webhook, ntfy is Apprise's when it is installed (else
// Gantry's own), every other scheme is Apprise's.
import type { Sender } from './notification.ts';
import { WebhookSender } from './webhook-sender.ts';
import { NtfySender } from './ntfy-sender.ts';
import { AppriseSender } from './apprise-sender.ts';

export type Transport = 'auto' | 'apprise' | 'builtin';

export function chooseSender(url: string, transport: Transport, appriseInstalled: boolean): Sender {
  const scheme = /^([a-z][a-z0-9+.-]{0,31}):\/\//i.exec(url)?.[1].toLowerCase();
  if (!scheme) throw new Error('a target URL starts with its scheme (tgram://, json://, https://, ntfy://, …)');
  const builtin = scheme === 'http' || scheme === 'https' || scheme === 'ntfy' || scheme === 'ntfys';
  if (transport === 'builtin' && !builtin) throw new Error(`Gantry has no built-in sender for ${scheme}:// (only http, https, ntfy, ntfys)`);
  if (transport === 'apprise' || (transport === 'auto' && !builtin) || (transport === 'auto' && scheme.startsWith('ntfy') && appriseInstalled)) {
    return new AppriseSender(url);
  }
  return scheme.startsWith('ntfy') ? new NtfySender(url) : new WebhookSender(url);
}
