// GET /api/farm/printers over the one default printer, for the farm dashboard until the farm of printer units (#53)
// answers it for all of them, in the same shape: name, HTTP port, prefix, state, job, temperatures.
import { Type } from '../../config/typebox.ts';
import type { GantryApp } from '../types.ts';
import type { PrinterApi } from '../../printer/printer-service.ts';
import type { JobApi } from './job.ts';
import { AnyJson } from '../../octoprint/schema-kit.ts';

const Printer = Type.Object({
  name: Type.String(),
  httpPort: Type.Union([Type.Integer(), Type.Null()]),
  prefix: Type.String(),
  state: Type.Object({ text: Type.String(), flags: AnyJson }),
  job: AnyJson,
  temperatures: AnyJson,
  webcam: Type.Object({ snapshot: Type.Union([Type.String(), Type.Null()]) }),
});

export function registerFarmPrinterRoutes(app: GantryApp, deps: { printer: PrinterApi; jobRunner: JobApi; snapshotUrl: () => string | null }): void {
  const { printer, jobRunner } = deps;
  app.get('/api/farm/printers', { config: { access: 'STATUS' }, schema: { response: { 200: Type.Object({ printers: Type.Array(Printer) }) } } }, async (request) => {
    const state = printer.state();
    return {
      printers: [{
        name: 'default', httpPort: request.socket.localPort ?? null, prefix: '/printer/default/',
        state: { text: jobRunner.stateText(), flags: state.flags }, job: jobRunner.snapshot(), temperatures: printer.temperatures(),
        webcam: { snapshot: deps.snapshotUrl() },
      }],
    };
  });
}
