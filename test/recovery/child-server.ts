// A Gantry in its own process for crash tests (run with `node --import tsx`): argv[2] the base dir, argv[3] settings
// JSON. Prints `READY <url> <apikey>` once listening; stops only when killed.
import { startGantry } from '../../src/main.ts';

const g = await startGantry({ baseDir: process.argv[2], host: '127.0.0.1', port: 0, settings: JSON.parse(process.argv[3] ?? '{}') as Record<string, unknown> });
process.stdout.write(`READY ${g.url} ${g.config.current.api.key ?? ''}\n`);
