// /api/printer/tool, /bed, /chamber: heater readings with optional history, targets, offsets, tool select, extrude,
// flow rate. The rules for the values live in src/printer/heater-rules.ts.
import { Type } from '../../config/typebox.ts';
import type { Static } from 'typebox';
import type { GantryApp } from '../types.ts';
import type { PrinterRouteDeps } from './printer.ts';
import { historyOf } from './printer.ts';
import { conflict, notOperational } from '../../core/errors.ts';
import { Param, commandOf, commandUnion } from './command-body.ts';
import { MISSING_HEATER, TOOL_KEY, extrusion, flowPercent, hasHeater, heaterOffset, heaterTarget, toolIndex, toolOffsets, toolTargets,
} from '../../printer/heater-rules.ts';
import { ToolReplySchema, heaterReplySchema } from '../../octoprint/temperature.ts';
import { NoContent } from '../../octoprint/schema-kit.ts';

const HistoryQuery = Type.Object({ history: Type.Optional(Type.String()), limit: Type.Optional(Type.String()) }, { additionalProperties: true });

const ToolCommand = commandUnion({
  target: { targets: Param },
  offset: { offsets: Param },
  select: { tool: Param },
  extrude: { amount: Param, speed: Param },
  flowrate: { factor: Param },
});
const HeaterCommand = commandUnion({ target: { target: Param }, offset: { offset: Param } });

export function registerPrinterHeaterRoutes(app: GantryApp, deps: PrinterRouteDeps): void {
  const { printer } = deps;
  const tools = () => printer.profile().extruder.count;

  app.get('/api/printer/tool', { config: { access: 'STATUS' }, schema: { querystring: HistoryQuery, response: { 200: ToolReplySchema } } }, async (request) => {
    if (!printer.isOperational()) throw notOperational();
    const temps = printer.temperatures();
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(temps)) if (TOOL_KEY.test(k)) out[k] = v;
    const history = historyOf(printer, request.query);
    if (history) {
      out.history = history.map((e) => Object.fromEntries(Object.entries(e).filter(([k]) => TOOL_KEY.test(k))));
    }
    return out as Static<typeof ToolReplySchema>;
  });

  app.post('/api/printer/tool', { config: { access: 'CONTROL' }, schema: { body: ToolCommand, response: { 204: NoContent } } }, async (request, reply) => {
    if (!printer.isOperational()) throw notOperational();
    const { command, body } = commandOf(request.body, ['target', 'offset', 'select', 'extrude', 'flowrate'] as const, {
      target: ['targets'], offset: ['offsets'], select: ['tool'], extrude: ['amount'], flowrate: ['factor'],
    });
    if ((command === 'select' || command === 'extrude') && printer.isBusy()) throw conflict('Printer is currently printing');
    switch (command) {
      case 'target':
        for (const [k, v] of toolTargets(body.targets, tools())) printer.setTemperature(k, v);
        break;
      case 'offset':
        printer.setTemperatureOffsets(toolOffsets(body.offsets, tools()));
        break;
      case 'select':
        printer.selectTool(toolIndex(body.tool, tools()));
        break;
      case 'extrude': {
        const { amount, speed } = extrusion(body.amount, body.speed);
        printer.extrude(amount, speed);
        break;
      }
      case 'flowrate':
        printer.flowRate(flowPercent(body.factor));
        break;
    }
    return reply.code(204).send();
  });

  for (const heater of ['bed', 'chamber'] as const) {
    const has = () => hasHeater(printer.profile(), heater);
    const missing = MISSING_HEATER[heater];

    app.get(`/api/printer/${heater}`, { config: { access: 'STATUS' }, schema: { querystring: HistoryQuery, response: { 200: heaterReplySchema(heater) } } }, async (request) => {
      if (!printer.isOperational()) throw notOperational();
      if (!has()) throw conflict(missing);
      const temps = printer.temperatures();
      const out: Record<string, unknown> = {};
      if (temps[heater]) out[heater] = temps[heater];
      const history = historyOf(printer, request.query);
      if (history) out.history = history.filter((e) => heater in e).map((e) => ({ [heater]: e[heater] }));
      return out as Static<ReturnType<typeof heaterReplySchema>>;
    });

    app.post(`/api/printer/${heater}`, { config: { access: 'CONTROL' }, schema: { body: HeaterCommand, response: { 204: NoContent } } }, async (request, reply) => {
      if (!printer.isOperational()) throw notOperational();
      if (!has()) throw conflict(missing);
      const { command, body } = commandOf(request.body, ['target', 'offset'] as const, { target: ['target'], offset: ['offset'] });
      if (command === 'target') printer.setTemperature(heater, heaterTarget(body.target));
      else printer.setTemperatureOffsets({ [heater]: heaterOffset(body.offset) });
      return reply.code(204).send();
    });
  }
}
