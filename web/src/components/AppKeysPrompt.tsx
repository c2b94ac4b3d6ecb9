// App-key approval prompt: an application (slicer, phone app) asked for an API key; the user allows or denies it.
import { post } from '../lib/api.ts';
import { appKeyRequests, attempt, notify } from '../lib/store.ts';
import type { AppKeyRequest } from '../lib/types.ts';

async function decide(r: AppKeyRequest, decision: boolean): Promise<void> {
  const ok = await attempt('App access decision', () => post(`/plugin/appkeys/decision/${encodeURIComponent(r.user_token)}`, { decision }));
  // The server also announces the end of the request; drop it here too so the prompt closes at once.
  appKeyRequests.value = appKeyRequests.value.filter((x) => x.user_token !== r.user_token);
  if (ok) notify(decision ? `Access granted to ${r.app_name}` : `Access denied to ${r.app_name}`);
}

export function AppKeysPrompt() {
  const r = appKeyRequests.value[0];
  if (!r) return null;
  return (
    <div class="overlay">
      <div class="dialog" role="dialog" aria-label="Access request">
        <h2>Access request</h2>
        <p><strong data-testid="appkey-app">{r.app_name}</strong> is asking for access to this printer{r.user_id ? ` as ${r.user_id}` : ''}.
          Allowing it gives the application an API key with your permissions.</p>
        <p class="muted">Only allow this if you just started the request yourself.</p>
        <div class="buttons">
          <button class="danger" onClick={() => void decide(r, false)}>Deny</button>
          <button class="primary" onClick={() => void decide(r, true)}>Allow</button>
        </div>
      </div>
    </div>
  );
}
