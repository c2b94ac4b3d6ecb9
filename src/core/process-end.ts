// Ends a server process: a stop on SIGINT/SIGTERM (forced by a second signal or a bound), then its event loop run dry, with process.exit only as a bounded fallback.

// process.exit() tears down V8's thread pool while the main isolate still lives: a background compile job (concurrent
// Sparkplug or Maglev, on by default from Node 24) that waits in V8 for a garbage collection only the main thread can
// run then waits for ever, and so does the exit that joins it (nodejs/node#54918, #64274; seen here as a server that
// logged "Gantry stopped" and never ended). A process whose loop runs dry disposes of its isolate first, which releases
// such jobs. A stopped server holds nothing open, so that is immediate; should something still hold the loop, the
// fallback names it and exits after graceMs.

export interface ProcessEndOptions {
  graceMs?: number;
  /** Where the fallback says what still held the process (stderr by default). */
  report?: (line: string) => void;
}

export function endProcessWhenIdle(code: number, options: ProcessEndOptions = {}): void {
  const { graceMs = 3_000, report = (line: string) => process.stderr.write(`${line}\n`) } = options;
  process.exitCode = code;
  setTimeout(() => {
    const held = process.getActiveResourcesInfo(); // an unref'd timer, as this one, is not listed
    report(`still running ${graceMs} ms after stopping (held by: ${held.join(', ') || 'nothing named'}); exiting now`);
    process.exit(code);
  }, graceMs).unref();
}

/** A server as its process's signal handling sees it. */
export interface StoppingServer {
  stop(): Promise<void>;
  /** What the stop under way waits for (a service's name), named by a forced exit. */
  stopStage(): string | undefined;
}

export interface StopSignalOptions extends ProcessEndOptions {
  /**
   * How long a stop may take before the process ends anyway. Under the systemd unit's TimeoutStopSec (20 s): the
   * process says what it was waiting for instead of being killed without a word.
   */
  stopBoundMs?: number;
  /**
   * A signal within this long of the first is a duplicate of it, not a second request: a terminal's Ctrl-C reaches
   * every process of its group, and `npm start` forwards the one it got as well.
   */
  repeatMs?: number;
  /** Where the "shutting down" line goes (stdout by default). */
  announce?: (line: string) => void;
}

/**
 * SIGINT and SIGTERM stop the server (once it has started; before, there is nothing to stop), then end the process
 * by endProcessWhenIdle. A stop that hangs (a service that never gives back) would leave a person at the terminal
 * pressing Ctrl-C to no effect: a second signal during the stop (a second or more after the first), or a stop still
 * unfinished after stopBoundMs, ends the process at once with 1, saying what the stop was waiting for.
 */
export function stopOnSignals(server: () => Promise<StoppingServer> | undefined, options: StopSignalOptions = {}): { signalled(): boolean } {
  const { stopBoundMs = 15_000, repeatMs = 1_000, announce = (line: string) => process.stdout.write(`${line}\n`) } = options;
  const report = options.report ?? ((line: string) => process.stderr.write(`${line}\n`));
  let stopping: { stage: () => string | undefined; since: number } | undefined;
  const forced = (why: string): void => {
    const stage = stopping?.stage();
    report(`${why}: exiting without waiting for the stop to finish (${stage ? `stopping: ${stage}` : 'still starting'})`);
    process.exit(1);
  };
  const onSignal = (sig: NodeJS.Signals): void => {
    if (stopping) {
      if (performance.now() - stopping.since >= repeatMs) forced(`${sig} again`);
      return;
    }
    const starting = server();
    if (!starting) {
      announce(`\n${sig}: shutting down...`);
      process.exit(0); // nothing started yet, nothing to stop
    }
    let current: StoppingServer | undefined;
    stopping = { stage: () => current?.stopStage(), since: performance.now() };
    announce(`\n${sig}: shutting down... (${sig} again to exit at once)`);
    const bound = setTimeout(() => forced(`the stop took longer than ${stopBoundMs / 1000} s`), stopBoundMs).unref();
    starting
      .then((g) => { current = g; return g.stop(); })
      .then(() => { clearTimeout(bound); endProcessWhenIdle(0, options); }, (err: unknown) => {
        clearTimeout(bound);
        report(`shutdown failed: ${String(err)}`);
        endProcessWhenIdle(1, options);
      });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { signalled: () => stopping !== undefined };
}
