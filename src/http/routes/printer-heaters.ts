// /api/printer/tool, /bed, /chamber: heater readings with optional history, targets, offsets, tool select, extrude,
// flow rate.
import { Type } from 'typebox';
import type { GantryApp } from '../types.ts';
import type { PrinterRouteDeps } from './printer.ts';
import { historyOf } from './printer.ts';
import { conflict, invalid, notOperational } from '../../core/errors.ts';
import { factorPercent } from '../../printer/printer-commands.ts';
import { CommandBody, commandOf, isNumber } from './command-body.ts';

const HistoryQuery = Type.Object({ history: Type.Optional(Type.String()), limit: Type.Optional(Type.String()) }, { additionalProperties: true });

const TOOL_KEY = /^tool(\d+)$/;
const OFFSET_LIMIT = 50;

export function registerPrinterHeaterRoutes(app: GantryApp, deps: PrinterRouteDeps): void {
  const { printer } = deps;

  const toolIndex = (key: unknown): number => {
    const m = typeof key === 'string' ? TOOL_KEY.exec(key) : null;
    const n = m ? Number(m[1]) : NaN;
    if (!m || n >= printer.profile().extruder.count) throw invalid(`Invalid tool: ${JSON.stringify(key)}`);
    return n;
  };
  const mapOf = (v: unknown, what: string): Record<string, unknown> => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(`${what} is invalid`);
    return v as Record<string, unknown>;
  };

  app.get('/api/printer/tool', { config: { access: 'STATUS' }, schema: { querystring: HistoryQuery } }, async (request) => {
    if (!printer.isOperational()) throw notOperational();
    const temps = printer.temperatures();
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(temps)) if (TOOL_KEY.test(k)) out[k] = v;
    const history = historyOf(printer, request.query);
    if (history) {
      out.history = history.map((e) => Object.fromEntries(Object.entries(e).filter(([k]) => TOOL_KEY.test(k))));
    }
    return out;
  });

  app.post('/api/printer/tool', { config: { access: 'CONTROL' }, schema: { body: CommandBody } }, async (request, reply) => {
    if (!printer.isOperational()) throw notOperational();
    const { command, body } = commandOf(request.body, ['target', 'offset', 'select', 'extrude', 'flowrate'] as const, {
      target: ['targets'], offset: ['offsets'], select: ['tool'], extrude: ['amount'], flowrate: ['factor'],
    });
    if ((command === 'select' || command === 'extrude') && printer.isBusy()) throw conflict('Printer is currently printing');
    switch (command) {
      case 'target': {
        const targets = mapOf(body.targets, 'targets');
        const valid: Array<[string, number]> = [];
        for (const [k, v] of Object.entries(targets)) {
          toolIndex(k);
          if (!isNumber(v) || v < 0 || v > 1500) throw invalid(`Not a number or out of range for ${k}: ${JSON.stringify(v)}`);
          valid.push([k, v]);
        }
        for (const [k, v] of valid) printer.setTemperature(k, v);
        break;
      }
      case 'offset': {
        const offsets = mapOf(body.offsets, 'offsets');
        const valid: Record<string, number> = {};
        for (const [k, v] of Object.entries(offsets)) {
          toolIndex(k);
          if (!isNumber(v) || v < -OFFSET_LIMIT || v > OFFSET_LIMIT) throw invalid(`Offset not in range [-${OFFSET_LIMIT}, ${OFFSET_LIMIT}] for ${k}: ${JSON.stringify(v)}`);
          valid[k] = v;
        }
        printer.setTemperatureOffsets(valid);
        break;
      }
      case 'select':
        printer.selectTool(toolIndex(body.tool));
        break;
      case 'extrude': {
        if (!isNumber(body.amount)) throw invalid(`Not a number for extrusion amount: ${JSON.stringify(body.amount)}`);
        let speed: number | undefined;
        if (body.speed !== undefined) {
          if (!isNumber(body.speed) || body.speed <= 0) throw invalid(`speed is invalid: ${JSON.stringify(body.speed)}`);
          speed = body.speed;
        }
        printer.extrude(body.amount, speed);
        break;
      }
      case 'flowrate': {
        const percent = isNumber(body.factor) ? factorPercent(body.factor, 75, 125) : null;
        if (percent === null) throw invalid(`factor is invalid: ${JSON.stringify(body.factor)}`);
        printer.flowRate(percent);
        break;
      }
    }
    return reply.code(204).send();
  });

  for (const heater of ['bed', 'chamber'] as const) {
    const has = () => (heater === 'bed' ? printer.profile().heatedBed : printer.profile().heatedChamber);
    const missing = heater === 'bed' ? 'Printer does not have a heated bed' : 'Printer does not have a heated chamber';

    app.get(`/api/printer/${heater}`, { config: { access: 'STATUS' }, schema: { querystring: HistoryQuery } }, async (request) => {
      if (!printer.isOperational()) throw notOperational();
      if (!has()) throw conflict(missing);
      const temps = printer.temperatures();
      const out: Record<string, unknown> = {};
      if (temps[heater]) out[heater] = temps[heater];
      const history = historyOf(printer, request.query);
      if (history) out.history = history.filter((e) => heater in e).map((e) => ({ [heater]: e[heater] }));
      return out;
    });

    app.post(`/api/printer/${heater}`, { config: { access: 'CONTROL' }, schema: { body: CommandBody } }, async (request, reply) => {
      if (!printer.isOperational()) throw notOperational();
      if (!has()) throw conflict(missing);
      const { command, body } = commandOf(request.body, ['target', 'offset'] as const, { target: ['target'], offset: ['offset'] });
      if (command === 'target') {
        if (!isNumber(body.target) || body.target < 0 || body.target > 1500) throw invalid('target is invalid');
        printer.setTemperature(heater, body.target);
      } else {
        if (!isNumber(body.offset) || body.offset < -OFFSET_LIMIT || body.offset > OFFSET_LIMIT) throw invalid('offset is invalid');
        printer.setTemperatureOffsets({ [heater]: body.offset });
      }
      return reply.code(204).send();
    });
  }
}
