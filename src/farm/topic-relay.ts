// The MQTT topics of the printers' power devices before and after the shared broker session exists: the units are
// built (and power starts) before the MQTT client, which needs the HTTP app; subscriptions made early are handed over.
import type { PowerMqtt } from '../power/providers/mqtt-topics.ts';

export class TopicLinkRelay implements PowerMqtt {
  private link: PowerMqtt | undefined;
  private readonly early: Array<{ topic: string; fn: (payload: string) => void; stop: () => void }> = [];

  /** Hands the early subscriptions to the broker session; what is asked for later goes to it directly. */
  connect(link: PowerMqtt): void {
    this.link = link;
    for (const e of this.early.splice(0)) e.stop = link.subscribe(e.topic, e.fn);
  }

  connected(): boolean {
    return this.link?.connected() ?? false;
  }

  publish(topic: string, payload: string): void {
    this.link?.publish(topic, payload);
  }

  subscribe(topic: string, fn: (payload: string) => void): () => void {
    if (this.link) return this.link.subscribe(topic, fn);
    const entry = { topic, fn, stop: () => { const i = this.early.indexOf(entry); if (i >= 0) this.early.splice(i, 1); } };
    this.early.push(entry);
    return () => entry.stop();
  }
}
