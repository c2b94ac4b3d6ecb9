// Asks a printer whose port just came back whether it reset: `start` says it did; an answer with its line counter
// (Marlin: `Error:Line Number is not Last Line Number+1, Last Line: N`) says it kept running and which line it had.
import { frameLine } from '../gcode/line.ts';
import type { LineTransport } from '../protocol/line-transport.ts';

export type ProbeResult = { kind: 'reset' } | { kind: 'counter'; line: number } | { kind: 'silent' };

/**
 * Opens `transport` (throws when it cannot be opened), sends a line numbered 0 — never the next one a firmware
 * expects, since counters start at 0 and M110 is not used — and reads until the firmware says `start` or its last line,
 * or `timeoutMs` passes. The probe is sent twice, the second time halfway: a board that rebooted on the open may miss
 * the first while it starts. Closes the transport before resolving.
 */
export async function probeLineCounter(transport: LineTransport, timeoutMs: number): Promise<ProbeResult> {
  await transport.open();
  let timer: NodeJS.Timeout | undefined;
  let again: NodeJS.Timeout | undefined;
  let onLine: ((line: string) => void) | undefined;
  let heard = false;
  let answered = false;
  let okAfterAnswer = false;
  let settled: (() => void) | undefined;
  try {
    const result = await new Promise<ProbeResult>((resolve) => {
      onLine = (line: string) => {
        heard = true;
        const text = line.trim();
        // The `ok` that follows the answer is read here, not left for the connection that opens next.
        if (answered && /^ok\b/.test(text)) {
          okAfterAnswer = true;
          settled?.();
        }
        if (/^start\b/i.test(text)) return resolve({ kind: 'reset' });
        const m = /Last Line:\s*(\d+)/i.exec(text);
        if (m && !answered) {
          answered = true;
          resolve({ kind: 'counter', line: Number(m[1]) });
        }
      };
      transport.on('line', onLine);
      transport.on('close', () => resolve({ kind: 'silent' }));
      const probe = frameLine(0, 'M105');
      const send = () => { transport.write(probe).catch(() => resolve({ kind: 'silent' })); };
      send();
      again = setTimeout(() => { if (!heard) send(); }, timeoutMs / 2);
      timer = setTimeout(() => resolve({ kind: 'silent' }), timeoutMs);
    });
    if (result.kind === 'counter' && !okAfterAnswer) {
      await new Promise<void>((resolve) => {
        settled = resolve;
        setTimeout(resolve, 300).unref();
      });
    }
    return result;
  } finally {
    clearTimeout(timer);
    clearTimeout(again);
    if (onLine) transport.off('line', onLine);
    await transport.close().catch(() => {});
  }
}
