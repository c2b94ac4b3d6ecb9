// The connection scripts: afterPrinterConnected runs once the link is up, beforePrinterDisconnected reaches the firmware
// before the port closes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer, waitFor, stateText } from './helpers.ts';

test('afterPrinterConnected and beforePrinterDisconnected scripts are sent around the link', async (t) => {
  const s = await connectedServer(t, {
    serial: { terminalLogSize: 2000 },
    scripts: { gcode: { afterPrinterConnected: 'M117 hello', beforePrinterDisconnected: 'M117 goodbye\nM18' } },
  });
  await waitFor('hello sent', () => s.printer.terminal().some((l) => /^Send: (N\d+ )?M117 hello/.test(l)) || undefined);
  const sentLines: string[] = [];
  s.events.onAny('test', (name) => { if (name === 'Disconnected') sentLines.push(...s.printer.terminal()); });
  assert.equal((await s.api('/api/connection', { method: 'POST', json: { command: 'disconnect' } })).status, 204);
  await waitFor('Closed', async () => ((await stateText(s)) === 'Closed' ? true : undefined));
  const log = sentLines.length ? sentLines : s.printer.terminal();
  const bye = log.findIndex((l) => /^Send: (N\d+ )?M117 goodbye/.test(l));
  assert.ok(bye >= 0, 'goodbye script sent');
  assert.ok(log.slice(bye).some((l) => /^Send: (N\d+ )?M18/.test(l)), 'whole script sent');
  assert.ok(log.slice(bye).some((l) => l === 'Recv: ok'), 'and acknowledged before the port closed');
});
