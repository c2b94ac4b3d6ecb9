// Application-keys prompts on the push channel: pending requests become `plugin` messages of plugin `appkeys`
// (`request_access` / `end_request`), which OctoPrint's UI and the apps' users answer with a decision.

/** The app-keys workflow as the push channel sees it (AccessService.appKeys satisfies it). */
export interface AppKeyRequests {
  onRequest(fn: (r: { appId: string; userId: string | null; userToken: string }) => void): () => void;
  onEnd(fn: (userToken: string) => void): () => void;
}

export interface PluginSender {
  sendPlugin(plugin: string, data: unknown, opts?: { permissions?: string[] }): void;
}

/** Returns the function that stops forwarding. */
export function bridgeAppKeys(appKeys: AppKeyRequests, push: PluginSender): () => void {
  const offRequest = appKeys.onRequest((r) => {
    // Only users who may grant keys see the prompt: its user_token is what a decision is made with.
    push.sendPlugin('appkeys', { type: 'request_access', app_name: r.appId, user_token: r.userToken, user_id: r.userId },
      { permissions: ['STATUS', 'PLUGIN_APPKEYS_GRANT'] });
  });
  const offEnd = appKeys.onEnd((userToken) => {
    push.sendPlugin('appkeys', { type: 'end_request', user_token: userToken });
  });
  return () => { offRequest(); offEnd(); };
}
