// /api/printer: full state (temperatures, SD, state flags), printhead (jog/home/feedrate), SD card, arbitrary commands
// and scripts, custom controls. Heaters live in printer-heaters.ts.
import { Type } from '../../config/typebox.ts';
import type { Static } from 'typebox';
import type { GantryApp } from '../types.ts';
import type { ConfigStore } from '../../config/config-store.ts';
import type { PrinterApi } from '../../printer/printer-service.ts';
import type { TemperatureHistoryEntry } from '../../printer/types.ts';
import { DomainError, ErrorCodes, conflict, invalid, notFound, notOperational } from '../../core/errors.ts';
import { MAX_FEED_MM_MIN, MAX_MOVE_MM, factorPercent } from '../../printer/printer-commands.ts';
import { formatParameters } from '../../gcode/line.ts';
import { CommandBody, Param, commandOf, commandUnion, isNumber } from './command-body.ts';
import { truthy } from '../../core/values.ts';
import { shown } from '../../core/text.ts';
import { registerPrinterHeaterRoutes } from './printer-heaters.ts';
import { StateSchema, stateWire } from '../../octoprint/state.ts';
import { NoContent } from '../../octoprint/schema-kit.ts';
import { TemperaturesSchema } from '../../octoprint/temperature.ts';
import { splitLines } from '../../gcode/line-breaks.ts';

export interface PrinterRouteDeps {
  printer: PrinterApi;
  config: ConfigStore;
}

const HistoryQuery = Type.Object({
  history: Type.Optional(Type.String()),
  limit: Type.Optional(Type.String()),
  exclude: Type.Optional(Type.String()),
}, { additionalProperties: true });

const PrinterReply = Type.Object({
  temperature: Type.Optional(TemperaturesSchema),
  sd: Type.Optional(Type.Object({ ready: Type.Boolean() })),
  state: Type.Optional(StateSchema),
});
const SdReply = Type.Object({ ready: Type.Boolean() });

const PrintheadCommand = commandUnion({
  jog: { x: Param, y: Param, z: Param, absolute: Param, speed: Param },
  home: { axes: Param },
  feedrate: { factor: Param },
});
const SdCommand = commandUnion({ init: {}, refresh: {}, release: {} });
/** Custom controls as configured: OctoPrint's open control tree (sections, commands, scripts, inputs). */
const CustomControlsReply = Type.Object({ controls: Type.Array(Type.Unknown()) });

/** `?history=..&limit=..` → the history points (limit -1 = all), or undefined when not asked for. */
export function historyOf(printer: PrinterApi, q: { history?: string; limit?: string }): TemperatureHistoryEntry[] | undefined {
  if (!truthy(q.history)) return undefined;
  let limit: number | undefined;
  if (q.limit !== undefined && q.limit !== '') {
    const n = Number(q.limit);
    if (!Number.isInteger(n)) throw invalid('limit is invalid');
    limit = n;
  }
  return printer.temperatureHistory(limit);
}

export function registerPrinterRoutes(app: GantryApp, deps: PrinterRouteDeps): void {
  const { printer, config } = deps;

  app.get('/api/printer', { config: { access: 'STATUS' }, schema: { querystring: HistoryQuery, response: { 200: PrinterReply } } }, async (request) => {
    if (!printer.isOperational()) throw notOperational();
    const q = request.query;
    const exclude = new Set((q.exclude ?? '').split(',').map((s) => s.trim()).filter(Boolean));
    const out: Static<typeof PrinterReply> = {};
    if (!exclude.has('temperature')) {
      const temperature: Record<string, unknown> = { ...printer.temperatures() };
      const history = historyOf(printer, q);
      if (history) temperature.history = history;
      out.temperature = temperature;
    }
    if (!exclude.has('sd') && config.current.feature.sdSupport) out.sd = { ready: printer.sdReady() };
    if (!exclude.has('state')) {
      out.state = stateWire(printer.state());
    }
    return out;
  });

  app.post('/api/printer/printhead', { config: { access: 'CONTROL' }, schema: { body: PrintheadCommand, response: { 204: NoContent } } }, async (request, reply) => {
    if (!printer.isOperational()) throw notOperational();
    const { command, body } = commandOf(request.body, ['jog', 'home', 'feedrate'] as const, { home: ['axes'], feedrate: ['factor'] });
    if (command !== 'feedrate' && printer.isBusy()) throw conflict('Printer is currently printing');
    if (command === 'jog') {
      const axes: { x?: number; y?: number; z?: number } = {};
      for (const a of ['x', 'y', 'z'] as const) {
        if (body[a] === undefined) continue;
        if (!isNumber(body[a])) throw invalid(`Not a number for axis ${a}: ${shown(body[a])}`);
        if (Math.abs(body[a]) > MAX_MOVE_MM) throw invalid(`Out of range for axis ${a} [-${MAX_MOVE_MM}, ${MAX_MOVE_MM}]: ${body[a]}`);
        axes[a] = body[a];
      }
      const absolute = body.absolute;
      if (absolute !== undefined && typeof absolute !== 'boolean') throw invalid('absolute is invalid');
      let speed: number | false | undefined;
      if (body.speed !== undefined && body.speed !== true) {
        if (body.speed === false) speed = false;
        else if (isNumber(body.speed) && body.speed > 0 && body.speed <= MAX_FEED_MM_MIN) speed = body.speed;
        else throw invalid(`speed is invalid: ${shown(body.speed)}`);
      }
      if (Object.keys(axes).length > 0) printer.jog(axes, { relative: absolute !== true, speed });
    } else if (command === 'home') {
      const axes = body.axes;
      const list = typeof axes === 'string' ? [axes] : axes;
      if (!Array.isArray(list) || list.length === 0) throw invalid('axes is invalid');
      for (const a of list) if (a !== 'x' && a !== 'y' && a !== 'z') throw invalid(`Invalid axis: ${shown(a)}`);
      printer.home(list as Array<'x' | 'y' | 'z'>);
    } else {
      const percent = isNumber(body.factor) ? factorPercent(body.factor, 50, 200) : null;
      if (percent === null) throw invalid(`factor is invalid: ${shown(body.factor)}`);
      printer.feedRate(percent);
    }
    return reply.code(204).send();
  });

  app.get('/api/printer/sd', { config: { access: 'STATUS' }, schema: { response: { 200: SdReply } } }, async () => {
    if (!config.current.feature.sdSupport) throw notFound('SD support is disabled');
    return { ready: printer.sdReady() };
  });

  app.post('/api/printer/sd', { config: { access: 'CONTROL' }, schema: { body: SdCommand, response: { 204: NoContent } } }, async (request, reply) => {
    if (!config.current.feature.sdSupport) throw notFound('SD support is disabled');
    if (!printer.isOperational() || printer.isBusy()) throw new DomainError(ErrorCodes.PRINTER_BUSY, 'Printer is not operational or currently busy');
    const { command } = commandOf(request.body, ['init', 'refresh', 'release'] as const);
    if (command === 'init') printer.sdInit();
    else if (command === 'refresh') printer.sdRefresh();
    else printer.sdRelease();
    return reply.code(204).send();
  });

  app.post('/api/printer/command', { config: { access: 'CONTROL' }, schema: { body: CommandBody, response: { 204: NoContent } } }, async (request, reply) => {
    if (!printer.isOperational()) throw notOperational();
    const body = request.body as Record<string, unknown>;
    const hasCommand = 'command' in body, hasCommands = 'commands' in body, hasScript = 'script' in body;
    if (hasCommand && hasCommands) throw invalid("'command' and 'commands' are mutually exclusive");
    if ((hasCommand || hasCommands) && hasScript) throw invalid("'command'/'commands' and 'script' are mutually exclusive");
    if (!hasCommand && !hasCommands && !hasScript) throw invalid("Need one of 'command', 'commands' or 'script'");
    const parameters = body.parameters;
    if (parameters !== undefined && (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters))) throw invalid('parameters is invalid');
    if (hasScript) {
      if (typeof body.script !== 'string') throw invalid('script is invalid');
      const context = typeof body.context === 'object' && body.context !== null ? body.context as Record<string, unknown> : {};
      const ok = await printer.runScript(body.script, { ...context, parameters: parameters ?? {}, context });
      if (!ok) throw notFound('Unknown script');
      return reply.code(204).send();
    }
    let lines: unknown[];
    if (hasCommand) {
      if (typeof body.command !== 'string') throw invalid('command is invalid');
      lines = [body.command];
    } else {
      if (!Array.isArray(body.commands) || body.commands.some((c) => typeof c !== 'string')) throw invalid('commands is invalid');
      lines = body.commands;
    }
    let out = lines as string[];
    if (parameters) {
      try {
        out = out.map((l) => formatParameters(l, parameters as Record<string, unknown>));
      } catch (err) {
        throw invalid(`parameters is invalid: ${(err as Error).message}`);
      }
    }
    // Each line on its own, whatever ends it: a CR inside a line would end the command in the firmware, not here.
    printer.clientCommands(out.flatMap(splitLines));
    return reply.code(204).send();
  });

  app.get('/api/printer/command/custom', { config: { access: 'CONTROL' }, schema: { response: { 200: CustomControlsReply } } }, async () => ({ controls: config.current.controls }));

  registerPrinterHeaterRoutes(app, deps);
}
