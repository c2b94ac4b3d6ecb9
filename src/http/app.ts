// HTTP adapter: builds the Fastify app from the services (does not listen). The route list below is the API's table of contents.
import Fastify, { LogController } from 'fastify';
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from '../core/logger.ts';
import type { ConfigStore } from '../config/config-store.ts';
import type { Paths } from '../config/paths.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { AccessService } from '../access/access-service.ts';
import type { SlicingService } from '../slicing/slicing-service.ts';
import { registerSlicingRoutes } from './routes/slicing.ts';
import type { GantryApp } from './types.ts';
import { registerAuth } from './auth.ts';
import { registerCors } from './cors.ts';
import { guardConnections, serverTimeouts } from './connection-guard.ts';
import { lazyValidators } from './lazy-validators.ts';
import { lazySerializers } from './lazy-serializers.ts';
import { registerPrintFirst } from './print-first.ts';
import { errorHandler, sendError } from './error-mapper.ts';
import { DomainError } from '../core/errors.ts';
import { registerVersionRoutes } from './routes/version.ts';
import { registerUiRoutes } from './routes/ui.ts';
import { registerLoginRoutes } from './routes/login.ts';
import { registerAccessRoutes } from './routes/access.ts';
import { registerAppKeyRoutes } from './routes/appkeys.ts';
import { registerAppsAuthRoutes } from './routes/apps-auth.ts';
import { registerSettingsApiKeyRoutes } from './routes/settings-apikey.ts';
import { registerPrinterProfileRoutes } from './routes/printerprofiles.ts';
import type { PrinterProfiles } from '../printer/profiles/printer-profiles.ts';
import type { FileService } from '../files/file-service.ts';
import type { SdCardFiles } from '../files/sd-card.ts';
import type { JobControl } from '../printer/job/job-types.ts';
import { registerJobRoutes, type JobApi } from './routes/job.ts';
import type { SliceHook } from './routes/files-commands.ts';
import { registerFilesRoutes } from './routes/files.ts';
import { registerDownloadRoutes } from './routes/downloads.ts';
import { registerConnectionRoutes } from './routes/connection.ts';
import { registerPrinterRoutes } from './routes/printer.ts';
import type { PortChoices, PrinterApi } from '../printer/printer-service.ts';
import { registerSettingsRoutes, type SerialOptionsProvider } from './routes/settings.ts';
import { registerSystemRoutes } from './routes/system.ts';
import { registerLanguageRoutes } from './routes/languages.ts';
import { registerLogRoutes } from './routes/logs.ts';
import { registerRecoveryRoutes } from './routes/recovery.ts';
import { registerNotificationRoutes } from './routes/notifications.ts';
import type { NotificationService } from '../notifications/notification-service.ts';
import { registerBedMeshRoutes } from './routes/bed-mesh.ts';
import type { BedMeshService } from '../bed-mesh/bed-mesh-service.ts';
import { registerPsuControlRoutes } from './routes/psucontrol.ts';
import { registerSpoolmanRoutes } from './routes/spoolman.ts';
import type { SpoolService } from '../spools/spool-service.ts';
import { registerLayerProgressRoutes } from './routes/layer-progress.ts';
import { registerCancelObjectRoutes } from './routes/cancelobject.ts';
import type { CancelObjectService } from '../objects/cancel-object-service.ts';
import type { LayerProgressService } from '../layer-progress/layer-progress-service.ts';
import type { PowerService } from '../power/power-service.ts';
import type { PrintJournal } from '../recovery/print-journal.ts';
import { registerTimelapseRoutes } from './routes/timelapse.ts';
import { registerGantryExtraRoutes } from './routes/gantry-extras.ts';
import { registerSystemInfoRoutes } from './routes/system-info.ts';
import { registerUtilRoutes } from './routes/util.ts';
import { firstQueryValues } from './query-string.ts';
import type { SystemCommands } from '../system/system-commands.ts';
import type { LanguagePacks } from '../system/language-packs.ts';
import type { LogFiles } from '../system/log-files.ts';
import type { TimelapseService } from '../timelapse/timelapse-service.ts';
import type { PrintQueue } from '../queue/print-queue.ts';
import { registerFarmQueueRoutes } from './routes/farm-queue.ts';
import { registerFarmPrinterRoutes, type FarmPrintersApi } from './routes/farm-printers.ts';

/** Whether `text` parses as plain JSON (asked only after Fastify's parser refused it, so never on the way of a good body). */
function isWellFormedJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Everything the routes may use. Each route file takes only the services it needs. */
export interface AppServices {
  config: ConfigStore;
  paths: Paths;
  events: EventBus;
  access: AccessService;
  printerProfiles: PrinterProfiles;
  slicing: SlicingService;
  files: FileService;
  /** The printer's job runner: selection for the files API, job control and history for the job API. */
  jobs?: JobControl & JobApi;
  /** The files API's `slice` command (slicing module); without it `slice` answers 415 "no slicer available". */
  slice?: SliceHook;
  /** The printer's SD card as the `sdcard` files location. */
  sdFiles?: SdCardFiles;
  systemCommands: SystemCommands;
  languagePacks: LanguagePacks;
  logFiles: LogFiles;
  /** Timelapse capture, rendering and folders (/api/timelapse). */
  timelapse?: TimelapseService;
  /** Live serial port/baudrate choices for /api/settings (the printer link's); config-only fallback when absent. */
  serialOptions?: SerialOptionsProvider;
  /** The printer link and the ports it can use. */
  printer?: PrinterApi;
  ports?: PortChoices;
  /** The print journal: resume offers for interrupted prints (/api/plugin/recovery). */
  recovery?: PrintJournal;
  /** The notifier: its targets, deliveries and a test message (/api/plugin/notifications). */
  notifications?: NotificationService;
  /** The printer's bed meshes (/api/plugin/bedmesh, /api/plugin/bedlevelvisualizer). */
  bedMesh?: BedMeshService;
  /** Power control (/api/plugin/psucontrol, src/power/). */
  power?: PowerService;
  /** Layer progress, the printer's screen and preheat (/plugin/DisplayLayerProgress, src/layer-progress/). */
  layerProgress?: LayerProgressService;
  /** Spoolman: the active spools and Spoolman's spools (/api/plugin/spoolman, src/spools/). */
  spools?: SpoolService;
  /** The farm's print queue (/api/farm/queue, src/queue/). */
  queue?: PrintQueue;
  /** The farm's printers: list, add, remove (/api/farm/printers; the main app's only). */
  farm?: FarmPrintersApi;
  /** Cancelling one object (/api/plugin/cancelobject, src/objects/). */
  cancelObjects?: CancelObjectService;
  logger: Logger;
  version: string;
}

/** Methods a route can be registered for; a path known for any of them exists (404 vs 405). */
const ROUTABLE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Internal marker (never sent): an unrouted 404/405 that must not get the API's cache headers. */
const NO_CACHE_HEADERS = 'x-gantry-unrouted';

/** Whether a logger writes debug lines (a logger without levels counts as writing everything). */
const debugEnabled = (logger: object): boolean => (logger as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled?.('debug') !== false;

/** Longest URL parameter the router takes, in decoded characters: a name of up to 255 bytes. */
export const MAX_PARAM_LENGTH = 255;

export async function buildApp(services: AppServices): Promise<GantryApp> {
  const { config } = services;
  const app = Fastify({
    loggerInstance: services.logger as never,
    logController: new LogController({ disableRequestLogging: true }),
    // A child logger per request (bound to its id) only when requests are logged (debug): at info it was pure cost.
    childLoggerFactory: (logger, bindings, opts) => (debugEnabled(logger) ? logger.child(bindings, opts) : logger),
    bodyLimit: config.current.server.maxSize,
    // Clients such as Home Assistant's library send `//api/printer/bed`; answer it as the single-slash path.
    rewriteUrl: (req) => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = q === -1 ? url : url.slice(0, q);
      return path.includes('//') ? path.replace(/\/{2,}/g, '/') + (q === -1 ? '' : url.slice(q)) : url;
    },
    // Header and keep-alive timeouts (server.connections); the body-progress watch and per-address cap follow below.
    ...serverTimeouts(config.current.server.connections),
    return503OnClosing: false,
    forceCloseConnections: true,
    // A URL parameter holds a file, log, timelapse or profile name: up to 255 bytes, so up to 255 characters once
    // decoded, which is what the router counts (its default of 100 made a timelapse of a long file name impossible to
    // fetch or delete).
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, querystringParser: firstQueryValues },
    // A URL the router cannot take (bad percent-encoding, a parameter over that length) is answered like any other error.
    frameworkErrors: errorHandler,
    // Validators are compiled on each route's first request (a third of the start-up CPU otherwise), and once per
    // process for identical schemas (tests build hundreds of apps).
    schemaController: { compilersFactory: { buildValidator: lazyValidators(), buildSerializer: lazySerializers() } },
    // Ajv checks each schema against JSON Schema's meta-schema before compiling it, and compiles that meta-schema first:
    // ≈ 80 ms of the first request to any route with a request schema (first GET /api/printer 114 → 36 ms). The
    // schemas are the code's own, not a client's, so test/http/request-schemas.test.ts makes that check for every route.
    ajv: { customOptions: { validateSchema: false } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as GantryApp;

  guardConnections(app.server, () => config.current.server.connections, services.logger);

  app.setErrorHandler(errorHandler);
  // An empty body labelled application/json is no body, on every route: FDM Monster sends that header on every request
  // (DELETE included) and OctoPrint ignores a body it does not read. Anything else goes to Fastify's own safe parser.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0) return done(null, undefined);
    parseJson(request, body as string, (err, value) => {
      // Fastify's parser answers "malformed" for well-formed JSON it refuses too: keys that could reach Object.prototype.
      if (err && isWellFormedJson(body as string)) {
        return done(new DomainError('INVALID_REQUEST', 'The JSON body has a key that is not allowed: __proto__, or constructor holding prototype'), undefined);
      }
      done(err, value);
    });
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    // A known path with another method: OPTIONS is answered like Flask's automatic options (200, empty, no CORS
    // headers while CORS is off — with CORS on the cors plugin answers preflights before this); others are 405.
    const allowed = path.startsWith('/downloads/') ? [] : ROUTABLE_METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
    if (allowed.length > 0) {
      const allow = [...allowed, 'OPTIONS'].join(', ');
      if (request.method === 'OPTIONS') return reply.code(200).header('Allow', allow).type('text/html; charset=utf-8').send('');
      if (path.startsWith('/api') || path.startsWith('/plugin/')) {
        // Like OctoPrint's unrouted errors, these carry no Cache-Control (the onSend hook skips them).
        reply.header('Allow', allow).header(NO_CACHE_HEADERS, '1');
        return sendError(reply, 405);
      }
      return reply.code(405).header('Allow', allow).type('text/html; charset=utf-8').send('<html><title>405: Method Not Allowed</title><body>405: Method Not Allowed</body></html>');
    }
    if (path.startsWith('/api') || path.startsWith('/plugin/')) {
      reply.header(NO_CACHE_HEADERS, '1');
      return sendError(reply, 404);
    }
    return reply.code(404).type('text/html; charset=utf-8').send('<html><title>404: Not Found</title><body>404: Not Found</body></html>');
  });

  // One line per request (method, path, status, time) at debug level (`gantry serve --log-level debug`): at info it
  // cost every request a log write, a large share of a cheap route's time. The level is fixed for the server's life,
  // so below debug the hook is not even registered. A plain hook, not async: no promise per request.
  if (debugEnabled(services.logger)) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.debug({ method: request.method, path: request.url.split('?')[0], status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request');
      done();
    });
  }

  // A plain hook, not async: no promise per request.
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('X-Robots-Tag', 'noindex, nofollow, noimageindex');
    if (!config.current.server.allowFraming) reply.header('X-Frame-Options', 'sameorigin');
    const unrouted = reply.hasHeader(NO_CACHE_HEADERS);
    if (unrouted) reply.removeHeader(NO_CACHE_HEADERS);
    if (request.url.startsWith('/api') && !unrouted && !reply.hasHeader('Cache-Control')) {
      if (request.method === 'GET') reply.header('Cache-Control', 'max-age=0');
      else {
        reply.header('Cache-Control', 'no-store, no-cache, must-revalidate, post-check=0, pre-check=0, max-age=0');
        reply.header('Pragma', 'no-cache');
        reply.header('Expires', '-1');
      }
    }
    done(null, payload);
  });

  // While printing on a saturated event loop, status polls are shed (503 + Retry-After) so firmware replies come first.
  const printer = services.printer;
  // Only a link on the main thread shares its event loop with the API; a link thread's replies never wait behind it.
  if (printer) {
    app.decorate('loopPressure', registerPrintFirst(app, { printing: () => config.current.serial.linkThread === 'main' && printer.state().flags.printing }));
  }

  await app.register(cookie);
  registerCors(app, () => config.current.api.allowCrossOrigin);

  registerAuth(app, services);

  // @fastify/multipart serves the language pack and slicer profile uploads only (file uploads have their own
  // streaming parser), so it lives in their scope: registered globally, its hooks (an async onRequest adding a close
  // listener, an async onResponse) ran on every request. Elsewhere a multipart body is accepted unread, as the plugin's
  // parser did, and the route's own body rules answer.
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
  await app.register(async (scope: GantryApp) => {
    scope.removeContentTypeParser('multipart/form-data');
    // Each route streams its parts and sets its own size limits (the default below is the upload limit).
    await scope.register(multipart, { limits: { fileSize: config.current.server.uploads.maxSize, files: 1, fields: 50, fieldSize: 1024 * 1024 } });
    registerSlicingRoutes(scope, services);
    registerLanguageRoutes(scope, services);
  });

  registerUiRoutes(app, services);
  registerVersionRoutes(app, services);
  registerLoginRoutes(app, services);
  registerAccessRoutes(app, services);
  registerAppKeyRoutes(app, services);
  registerAppsAuthRoutes(app, services);
  registerSettingsApiKeyRoutes(app, services);
  registerPrinterProfileRoutes(app, services);
  registerFilesRoutes(app, services);
  registerDownloadRoutes(app, services);
  if (services.printer && services.ports) {
    registerConnectionRoutes(app, { ...services, printer: services.printer, ports: services.ports });
    registerPrinterRoutes(app, { ...services, printer: services.printer });
    registerSystemInfoRoutes(app, { ...services, printer: services.printer });
  }
  if (services.jobs && services.printer) registerJobRoutes(app, { jobRunner: services.jobs, printer: services.printer });
  registerSettingsRoutes(app, services);
  registerSystemRoutes(app, services);
  registerLogRoutes(app, services);
  registerTimelapseRoutes(app, services);
  registerGantryExtraRoutes(app, services);
  registerUtilRoutes(app);
  if (services.recovery) registerRecoveryRoutes(app, { recovery: services.recovery });
  if (services.notifications) registerNotificationRoutes(app, { notifications: services.notifications });
  if (services.bedMesh) registerBedMeshRoutes(app, { bedMesh: services.bedMesh });
  if (services.power) registerPsuControlRoutes(app, { power: services.power });
  if (services.layerProgress) registerLayerProgressRoutes(app, { layerProgress: services.layerProgress });
  if (services.spools) registerSpoolmanRoutes(app, { spools: services.spools });
  if (services.queue) registerFarmQueueRoutes(app, { queue: services.queue });
  if (services.farm) registerFarmPrinterRoutes(app, { farm: services.farm });
  if (services.cancelObjects) registerCancelObjectRoutes(app, { cancelObjects: services.cancelObjects });

  return app;
}
