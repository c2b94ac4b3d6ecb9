// /api/connection: the current link and the options to make one; connect (port/baudrate/profile/save/autoconnect),
// disconnect, fake_ack.
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import { NoContent, Nullable } from '../../octoprint/schema-kit.ts';
import { shortLived, SCAN_REUSE_MS } from '../short-lived.ts';
import type { ConfigStore } from '../../config/config-store.ts';
import type { PortChoices, PrinterApi } from '../../printer/printer-service.ts';
import type { PrinterProfiles } from '../../printer/profiles/printer-profiles.ts';
import { invalid } from '../../core/errors.ts';
import { Param, commandOf, commandUnion, isNumber } from './command-body.ts';

export interface ConnectionRouteDeps {
  printer: PrinterApi;
  ports: PortChoices;
  printerProfiles: PrinterProfiles;
  config: ConfigStore;
}

const ConnectionCommand = commandUnion({
  connect: { port: Param, baudrate: Param, printerProfile: Param, save: Param, autoconnect: Param },
  disconnect: {},
  fake_ack: {},
});

const ConnectionReply = Type.Object({
  current: Type.Object({ state: Type.String(), port: Nullable('string'), baudrate: Nullable('number'), printerProfile: Type.String() }),
  options: Type.Object({
    ports: Type.Array(Type.String()),
    baudrates: Type.Array(Type.Number()),
    printerProfiles: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
    portPreference: Nullable('string'),
    baudratePreference: Nullable('number'),
    printerProfilePreference: Nullable('string'),
    autoconnect: Type.Boolean(),
  }),
});

export function registerConnectionRoutes(app: GantryApp, deps: ConnectionRouteDeps): void {
  const { printer, ports, printerProfiles, config } = deps;
  // Polling clients share one port scan a second (a scan reads /dev and may run udevadm); connect still checks afresh.
  const portList = shortLived(() => ports.listPorts(), SCAN_REUSE_MS);

  app.get('/api/connection', { config: { access: 'STATUS' }, schema: { response: { 200: ConnectionReply } } }, async () => {
    const serial = config.current.serial;
    return {
      current: printer.connection(),
      options: {
        ports: await portList.get(),
        baudrates: ports.baudrates(),
        printerProfiles: printerProfiles.list().map((p) => ({ id: p.id, name: p.name })),
        portPreference: serial.port,
        baudratePreference: serial.baudrate,
        printerProfilePreference: printerProfiles.defaultId,
        autoconnect: serial.autoconnect,
      },
    };
  });

  app.post('/api/connection', { config: { access: 'CONNECTION' }, schema: { body: ConnectionCommand, response: { 204: NoContent } } }, async (request, reply) => {
    const { command, body } = commandOf(request.body, ['connect', 'disconnect', 'fake_ack'] as const);
    if (command === 'disconnect') {
      await printer.disconnect();
      return reply.code(204).send();
    }
    if (command === 'fake_ack') {
      printer.fakeAck();
      return reply.code(204).send();
    }
    const serial = config.current.serial;
    let port: string | undefined;
    if (body.port !== undefined && body.port !== null) {
      if (typeof body.port !== 'string') throw invalid('port is invalid');
      if (body.port !== 'AUTO' && !(await ports.listPorts()).includes(body.port)) throw invalid('port is invalid');
      port = body.port;
    } else port = serial.port ?? undefined;
    let baudrate: number | undefined;
    if (body.baudrate !== undefined && body.baudrate !== null) {
      const b = typeof body.baudrate === 'string' ? Number(body.baudrate) : body.baudrate;
      if (!isNumber(b) || (b !== 0 && !ports.baudrates().includes(b))) throw invalid('baudrate is invalid');
      baudrate = b;
    } else baudrate = serial.baudrate ?? undefined;
    let profileId: string | undefined;
    if (body.printerProfile !== undefined && body.printerProfile !== null) {
      if (typeof body.printerProfile !== 'string' || !printerProfiles.exists(body.printerProfile)) throw invalid('printerProfile is invalid');
      profileId = body.printerProfile;
    }
    const patch: Record<string, unknown> = {};
    if (body.save === true) {
      patch.serial = { port: port ?? null, baudrate: baudrate ?? null };
      if (profileId) patch.printerProfiles = { default: profileId };
    }
    if (typeof body.autoconnect === 'boolean') patch.serial = { ...(patch.serial as object | undefined), autoconnect: body.autoconnect };
    if (Object.keys(patch).length > 0) await config.patch(patch);
    // The link comes up asynchronously; clients watch the state.
    void printer.connect({ port, baudrate, profileId }).catch((err: unknown) => request.log.warn({ err }, 'connect failed'));
    return reply.code(204).send();
  });
}
