// Ends a server process once it has stopped: by letting its event loop run dry, with process.exit only as a bounded fallback.

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
