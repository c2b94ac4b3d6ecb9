// OctoPrint-MQTT and OctoPrint-HomeAssistant settings in an imported config.yaml become Gantry's MQTT settings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapSettings } from '../../src/import/settings-import.ts';
import { YamlFile } from '../../src/import/source.ts';
import { ImportReport } from '../../src/import/report.ts';

const CONFIG = `
plugins:
  _disabled: [foo]
  mqtt:
    _config_version: 1
    broker:
      url: broker.local
      port: 1884
      username: farm
      password: secret
    publish:
      eventActive: false
  homeassistant:
    node_id: 0123456789abcdef0123456789abcdef
    discovery_topic: ha
  someplugin:
    key: 1
`;

test('plugins.mqtt and plugins.homeassistant are taken key for key; the OctoPrint base topic is kept for an imported broker', () => {
  const report = new ImportReport();
  const patch = mapSettings(YamlFile.parse('config.yaml', CONFIG), report) as { plugins: Record<string, Record<string, Record<string, unknown>>> };
  assert.deepEqual(patch.plugins.mqtt.broker, { url: 'broker.local', port: 1884, username: 'farm', password: 'secret' });
  assert.equal(patch.plugins.mqtt.publish.eventActive, false);
  assert.equal(patch.plugins.mqtt.publish.baseTopic, 'octoPrint/');
  assert.equal(patch.plugins.homeassistant.node_id, '0123456789abcdef0123456789abcdef');
  assert.equal(patch.plugins.homeassistant.discovery_topic, 'ha');
  assert.ok(!('someplugin' in patch.plugins));
  const skipped = report.skipped.map((s) => s.what);
  assert.ok(skipped.includes('plugins.someplugin.key'));
  assert.ok(skipped.includes('plugins.mqtt._config_version'));
  assert.ok(!skipped.some((s) => s.startsWith('plugins.mqtt.broker') || s.startsWith('plugins.homeassistant.')));
});

test('an explicit base topic and a bad value are treated like every other key', () => {
  const kept = mapSettings(YamlFile.parse('config.yaml', 'plugins:\n  mqtt:\n    broker: {url: b}\n    publish: {baseTopic: farm/p1/}\n'), new ImportReport()) as
    { plugins: { mqtt: { publish: { baseTopic: string } } } };
  assert.equal(kept.plugins.mqtt.publish.baseTopic, 'farm/p1/');
  assert.throws(() => mapSettings(YamlFile.parse('config.yaml', 'plugins:\n  mqtt:\n    broker: {port: nope}\n'), new ImportReport()),
    (e: Error) => /config\.yaml/.test(e.message) && /plugins\.mqtt\.broker\.port/.test(e.message));
});
