// Login page: credentials with remember-me; an existing session (or remember-me cookie) goes straight to the panel.
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

export function LoginPage() {
  const [user, setUser] = useState('');
  const [pass, setPass] = useState('');
  const [remember, setRemember] = useState(false);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

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
      location.replace(target());
    } catch (err) {
      if (err instanceof ApiError && err.status === 403) setError('Wrong user name or password.');
      else if (err instanceof ApiError && err.status === 429) {
        const s = err.retryAfter;
        setError(`Too many failed attempts: logging in is locked ${s ? `for ${s >= 90 ? `${Math.ceil(s / 60)} minutes` : `${s} seconds`}` : 'for a while'}. Wait, then try again.`);
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
        <button class="primary" type="submit" disabled={busy}>Log in</button>
      </form>
    </main>
  );
}
