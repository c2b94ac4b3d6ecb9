// The overlay over the page while the server is out of reach or the login has ended; the page under it stays inert.
import { at } from '../lib/base.ts';
import { useState } from 'preact/hooks';
import { ApiError, messageOf } from '../lib/api.ts';
import { expiredUser, link, relogin, retryNow, userName } from '../lib/store.ts';

export function LinkOverlay() {
  const l = link.value;
  if (l === 'offline') {
    return (
      <div class="overlay link-overlay" role="alertdialog" aria-modal="true" aria-labelledby="link-title" data-testid="link-overlay">
        <div class="dialog">
          <h2 id="link-title">Server offline</h2>
          <p>Gantry cannot be reached. The page reconnects by itself when it is back; until then nothing shown is live and
            the controls are off.</p>
          <div class="buttons"><button class="primary" onClick={retryNow}>Try now</button></div>
        </div>
      </div>
    );
  }
  return l === 'expired' ? <Relogin /> : null;
}

function Relogin() {
  const [user, setUser] = useState(expiredUser.value ?? userName.value ?? '');
  const [pass, setPass] = useState('');
  const [remember, setRemember] = useState(true);
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    setError('');
    try {
      await relogin(user, pass, remember);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 403 ? 'Wrong user name or password.' : messageOf(err));
    }
  };
  return (
    <div class="overlay link-overlay" data-testid="link-overlay" role="dialog" aria-modal="true" aria-label="Login expired">
      <form class="dialog" aria-label="Log in again" onSubmit={submit}>
        <h2>Login expired</h2>
        <p>The server was restarted or your session ended. Log in again to carry on where you were.</p>
        <label>User name<input autocomplete="username" value={user} onInput={(e) => setUser(e.currentTarget.value)} required /></label>
        <label>Password<input type="password" autocomplete="current-password" value={pass} onInput={(e) => setPass(e.currentTarget.value)} required autofocus /></label>
        <label class="check"><input type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} /> Remember me</label>
        {error && <p class="error" role="alert">{error}</p>}
        <div class="buttons"><a class="button" href={at('/login')}>Log in page</a><button class="primary" type="submit">Log in</button></div>
      </form>
    </div>
  );
}
