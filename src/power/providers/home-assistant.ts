// A Home Assistant entity over its REST API with a long-lived token (docs/reference/plugins.md §1.5.4):
// POST /api/services/<domain>/turn_on|turn_off, GET /api/states/<entity> reading `state`.
import type { PowerDeviceSettings } from './settings.ts';
import { baseUrl, deviceError, json, request, type PowerProvider } from './provider.ts';

export function homeAssistant(s: PowerDeviceSettings): PowerProvider {
  const entity = s.entityId.includes('.') ? s.entityId : `switch.${s.entityId}`;
  const label = `Home Assistant entity ${entity}`;
  const domain0 = entity.slice(0, entity.indexOf('.'));
  const domain = domain0 === 'group' ? 'homeassistant' : domain0;
  const headers = { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' };
  return {
    label,
    async setPower(on) {
      await request(label, `${baseUrl(s.address)}/api/services/${domain}/turn_${on ? 'on' : 'off'}`, s.timeout,
        { method: 'POST', headers, body: JSON.stringify({ entity_id: entity }) });
    },
    async readState() {
      const st = json(label, await request(label, `${baseUrl(s.address)}/api/states/${encodeURIComponent(entity)}`, s.timeout, { headers }));
      if (st.state === 'on') return true;
      if (st.state === 'off') return false;
      throw deviceError(label, `is ${typeof st.state === 'string' ? `"${st.state}"` : 'in no known state'}`);
    },
  };
}
