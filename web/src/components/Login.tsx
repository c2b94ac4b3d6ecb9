// Login page: credentials with remember-me; an existing session (or remember-me cookie) goes straight to the panel.
// Until someone has logged in from this browser it also points OctoPrint users at the import command.
import { at } from '../lib/base.ts';
import { useEffect, useState } from 'preact/hooks';
import { post, ApiError } from '../lib/api.ts';
import type { LoginResponse } from '../lib/types.ts';

/** Only same-site relative targets, so the redirect parameter cannot send the user elsewhere. */
function target(): string {
  const r = new URLSearchParams(location.search).get('redirect');
  if (r && r.startsWith('/') && !r.startsWith('//') && !r.startsWith('/login')) return at(r);
  return at('/');
}

/** Set after the first login from this browser: from then on the page is a login, not a first visit. */
const LOGGED_IN_BEFORE = 'gantry.loggedInBefore';

function firstVisit(): boolean {
  try {
    return localStorage.getItem(LOGGED_IN_BEFORE) === null;
  } catch {
    return true;
  }
}

export function LoginPage() {
  const [user, setUser] = useState('');
  const [pass, setPass] = useState('');
  const [remember, setRemember] = useState(false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  /** Epoch ms until which the server refuses logins (its Retry-After); the form counts down to it. */
  const [lockedUntil, setLockedUntil] = useState(0);
  const [now, setNow] = useState(Date.now());
  const left = Math.max(0, Math.ceil((lockedUntil - now) / 1000));

  useEffect(() => {
    if (!lockedUntil) return;
    const t = setInterval(() => {
      const n = Date.now();
      setNow(n);
      if (n >= lockedUntil) { setLockedUntil(0); setError(''); clearInterval(t); }
    }, 250);
    return () => clearInterval(t);
  }, [lockedUntil]);

  useEffect(() => {
    post<LoginResponse>('/api/login', { passive: true })
      .then((r) => { if (r.name) location.replace(target()); })
      .catch(() => undefined);
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await post<LoginResponse>('/api/login', { user, pass, remember });
      try { localStorage.setItem(LOGGED_IN_BEFORE, '1'); } catch { /* private mode: the hint just stays */ }
      location.replace(target());
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) setError('Wrong user name or password.');
      else if (err instanceof ApiError && err.status === 429) {
        setNow(Date.now());
        setLockedUntil(Date.now() + (err.retryAfter ?? 60) * 1000);
        setError('');
      }
      else setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  };

  return (
    <main class="login">
      <form class="card" onSubmit={submit} aria-label="Log in">
        <h1>Gantry</h1>
        <p class="muted">Log in to control your printer.</p>
        <label>User name<input name="user" autocomplete="username" value={user} onInput={(e) => setUser(e.currentTarget.value)} required autofocus /></label>
        <label>Password<input name="pass" type="password" autocomplete="current-password" value={pass} onInput={(e) => setPass(e.currentTarget.value)} required /></label>
        <label class="check"><input name="remember" type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} /> Remember me</label>
        {error && <p class="error" role="alert">{error}</p>}
        {left > 0 && (
          <p class="error" role="alert" data-testid="lockout">
            Too many failed attempts: logging in is locked. Try again in <strong data-testid="lockout-seconds">{left >= 90 ? `${Math.ceil(left / 60)} min` : `${left} s`}</strong>.
          </p>
        )}
        <button class="primary" type="submit" disabled={busy || left > 0}>Log in</button>
        {firstVisit() && (
          <div class="muted first-run" data-testid="first-run-help">
            <p><strong>First start?</strong> The account is <code>admin</code>. Its password was printed once in Gantry's
              console when it first started (the terminal you started it in, or <code>journalctl -u gantry</code> for the
              service). Lost it? Run <code>gantry user password admin --password NEW</code> on this machine.</p>
          </div>
        )}
        {firstVisit() && (
          <p class="muted first-run" data-testid="import-hint">
            Moving from OctoPrint? Stop Gantry and run <code>gantry import-octoprint --from ~/.octoprint --merge</code>
          </p>
        )}
      </form>
    </main>
  );
}
