// Helpers for printer HTTP tests: the shared connected-server helper and polling wait, re-exported for these tests.
export { waitFor } from '../helpers/wait.ts';
export { stateText, connectedServer } from '../helpers/connected-server.ts';
