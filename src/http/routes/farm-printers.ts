// /api/farm/printers (admin): the farm's printers with their state (the Farm page and the queue's cards), and adding or
// removing one on the running server — persisted in config.yaml `printers` before the answer.
import { Type } from '../../config/typebox.ts';
import { PrinterEntry } from '../../config/printers-schema.ts';
import type { GantryApp } from '../types.ts';
import type { PrinterApi } from '../../printer/printer-service.ts';
import type { JobApi } from './job.ts';
import { AnyJson, NoContent } from '../../octoprint/schema-kit.ts';
import { notFound } from '../../core/errors.ts';

/** One printer as this route lists it. */
export interface FarmPrinterView {
  name: string;
  /** Its own HTTP port (the default printer's is the main port); null: only under its prefix on the main port. */
  httpPort: number | null;
  /** Its path prefix on the main port, `/printer/NAME/`. */
  prefix: string;
  printer: PrinterApi;
  jobs: JobApi;
  snapshotUrl(): string | null;
  /** How it was added (null: the default printer, which is the main config's). */
  entry: PrinterEntry | null;
}

export interface FarmPrintersApi {
  views(): FarmPrinterView[];
  add(entry: PrinterEntry): Promise<void>;
  remove(name: string): Promise<void>;
}

const Printer = Type.Object({
  name: Type.String(),
  httpPort: Type.Union([Type.Integer(), Type.Null()]),
  prefix: Type.String(),
  state: Type.Object({ text: Type.String(), flags: AnyJson }),
  job: AnyJson,
  temperatures: AnyJson,
  webcam: Type.Object({ snapshot: Type.Union([Type.String(), Type.Null()]) }),
  config: Type.Union([AnyJson, Type.Null()]),
});
const Name = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });

function wire(v: FarmPrinterView) {
  return {
    name: v.name, httpPort: v.httpPort, prefix: v.prefix,
    state: { text: v.jobs.stateText(), flags: v.printer.state().flags }, job: v.jobs.snapshot(), temperatures: v.printer.temperatures(),
    webcam: { snapshot: v.snapshotUrl() }, config: v.entry,
  };
}

export function registerFarmPrinterRoutes(app: GantryApp, deps: { farm: FarmPrintersApi }): void {
  const { farm } = deps;
  app.get('/api/farm/printers', { config: { access: 'ADMIN' }, schema: { response: { 200: Type.Object({ printers: Type.Array(Printer) }) } } }, async () => (
    { printers: farm.views().map(wire) }));

  app.post('/api/farm/printers', { config: { access: 'ADMIN' }, schema: { body: PrinterEntry, response: { 201: Type.Object({ printer: Printer }) } } }, async (request, reply) => {
    await farm.add(request.body);
    const added = farm.views().find((v) => v.name === request.body.name);
    if (!added) throw notFound(`Printer ${request.body.name} left the farm while it was added`);
    return reply.code(201).send({ printer: wire(added) });
  });

  app.delete('/api/farm/printers/:name', { config: { access: 'ADMIN' }, schema: { params: Name, response: { 204: NoContent } } }, async (request, reply) => {
    await farm.remove(request.params.name);
    return reply.code(204).send();
  });
}
