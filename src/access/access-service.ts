// Access service: turns credentials (API keys, sessions, passwords) into an Identity, and owns first-run set-up.
import { ConfigError } from '../config/config-store.ts';
import type { ConfigSlice } from '../config/config-slice.ts';
import type { Logger } from '../core/logger.ts';
import type { Clock } from '../core/clock.ts';
import { makeIdentity, fullAdminIdentity, type Identity, type LoginMechanism } from './identity.ts';
import { UserStore } from './user-store.ts';
import type { GroupRecord, UserRecord } from './user-records.ts';
import { SessionStore, type SessionEndReason } from './sessions.ts';
import { SecretProbe, generateApiKey } from './keys.ts';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { AppKeyService, type AppKeyTimeouts } from './appkeys.ts';
import { AppSessionKeys, type AppSessionTimeouts } from './app-sessions.ts';
import { LoginThrottle } from './login-throttle.ts';
import { makeRememberToken, checkRememberToken } from './remember.ts';
import { isExternalAddress, inNetworks, networkList } from './network.ts';
import { Listeners } from '../core/listeners.ts';

/**
 * Someone must authenticate again: the sessions of `user` (or, with `user` undefined, every anonymous caller) lost or
 * changed their rights. `session` is set when one particular session ended. The push channel sends `reauthRequired`.
 */
export interface ReauthNotice { user: string | undefined; session?: string; reason: SessionEndReason }

/**
 * Resolves a key that is neither the global nor a user key (app keys, app session keys). `probe` is the same key,
 * hashed once, for constant-time comparisons against stored keys.
 */
export type KeyResolver = (key: string, probe: SecretProbe) => { user: string; mechanism: LoginMechanism } | 'global' | undefined;

export const GLOBAL_KEY_USER = '_api';
const FULL_ADMIN_IDENTITY = fullAdminIdentity();
const GLOBAL_KEY_IDENTITY = makeIdentity({ name: GLOBAL_KEY_USER, groups: ['admins', 'users'], permissions: ['ADMIN'], loginMechanism: 'apikey' });

export class AccessService {
  readonly users: UserStore;
  readonly sessions: SessionStore;
  /** Application keys workflow (apps asking users for a key). */
  readonly appKeys: AppKeyService;
  /** Deprecated signed app session keys (`/apps/auth`). */
  readonly appSessions: AppSessionKeys;
  /** Failed password logins per client address. */
  readonly loginThrottle: LoginThrottle;
  private keyResolvers: KeyResolver[] = [];
  /** Identities without a session, per user record and login mechanism (see identityForUser). */
  private readonly identities = new WeakMap<UserRecord, Map<LoginMechanism, Identity>>();
  private readonly guestIdentities = new WeakMap<GroupRecord, Identity>();
  private readonly reauthListeners: Listeners<[ReauthNotice]>;

  constructor(
    private readonly config: ConfigSlice<'accessControl' | 'api' | 'server'>,
    paths: { users: string; groups: string; appKeys?: string },
    private readonly clock: Clock,
    private readonly logger: Logger,
    options: { appKeyTimeouts?: Partial<AppKeyTimeouts>; appSessionTimeouts?: Partial<AppSessionTimeouts> } = {},
  ) {
    this.reauthListeners = new Listeners((err) => logger.error({ err }, 'reauth listener failed'));
    this.users = new UserStore(paths.users, paths.groups);
    this.sessions = new SessionStore(clock, () => this.config.get().accessControl.sessionValidityHours * 3600_000);
    this.appKeys = new AppKeyService(paths.appKeys ?? join(dirname(paths.users), 'data', 'appkeys', 'keys.yaml'), clock, options.appKeyTimeouts);
    this.appSessions = new AppSessionKeys(() => this.config.get().api.apps, clock, options.appSessionTimeouts);
    this.loginThrottle = new LoginThrottle(clock);
    this.sessions.onEnd((s, reason) => this.reauth({ user: s.user, session: s.id, reason }));
    this.users.onGroupChanged((key) => { if (key === 'guests') this.reauth({ user: undefined, reason: 'modified' }); });
    this.users.onUserChanged((name) => {
      const u = this.users.getUser(name);
      this.reauth({ user: name, reason: u ? 'modified' : 'removed' });
      if (!u || !u.active) this.sessions.deleteForUser(name, u ? 'modified' : 'removed');
      if (!u) {
        this.appKeys.removeUser(name).catch((err: unknown) => this.logger.error({ err, user: name }, 'could not drop app keys of removed user'));
      }
    });
    // App keys act as the user who approved them; one approved through the global key acts as the global key.
    this.registerKeyResolver((_key, probe) => {
      const owner = this.appKeys.ownerOf(probe);
      if (owner === undefined) return undefined;
      return owner === GLOBAL_KEY_USER ? 'global' : { user: owner, mechanism: 'appkey' };
    });
    this.registerKeyResolver((_key, probe) => (this.appSessions.isValid(probe) ? 'global' : undefined));
  }

  onReauthRequired(fn: (n: ReauthNotice) => void): () => void {
    return this.reauthListeners.add(fn);
  }

  private reauth(n: ReauthNotice): void {
    this.reauthListeners.emit(n);
  }

  get enabled(): boolean {
    return this.config.get().accessControl.enabled;
  }

  /** The global API key (the server's, shared by every printer of a farm), or null when none is set. */
  globalKey(): string | null {
    return this.config.get().api.key ?? null;
  }

  async start(): Promise<void> {
    await this.users.load();
    await this.appKeys.start();
    if (!this.config.get().server.secretKey) await this.config.patch({ server: { secretKey: randomBytes(32).toString('base64url') } });
    await this.firstRun();
  }

  async stop(): Promise<void> {
    await this.appKeys.stop();
  }

  /**
   * With access control on and no users: create `admin` with a random password and make sure a global API key exists.
   * Both are printed once; only the password hash is stored.
   */
  private async firstRun(): Promise<void> {
    if (!this.enabled || this.users.hasUsers()) return;
    // An existing file without users is damage (a truncated save, a bad edit), not a first run: a silent new admin
    // with a fresh password would hand the printer to whoever reads the console.
    if (this.users.usersFileFound) {
      throw new ConfigError(`${this.users.usersPath}: holds no users; refusing to start. Restore it, add a user with "gantry user add NAME --password PW --admin", or delete the file to start over with a new admin.`);
    }
    const password = randomBytes(12).toString('base64url');
    await this.users.addUser({ name: 'admin', password, groups: ['admins', 'users'], generatedPassword: true });
    // The web UI's setup wizard opens at this account's first login, until it is finished or skipped.
    await this.users.patchSettings('admin', { gantry: { setup: 'pending' } });
    let key = this.config.get().api.key;
    if (!key) key = await this.regenerateGlobalKey();
    await this.config.patch({ server: { firstRun: false } });
    const banner = [
      '',
      '==================================================================',
      ' First start: created the administrator account.',
      `   user:     admin`,
      `   password: ${password}`,
      `   global API key: ${key}`,
      ' They are shown only now. Change the password after logging in.',
      '==================================================================',
      '',
    ].join('\n');
    process.stdout.write(banner);
    this.logger.info({ user: 'admin' }, 'first run: created admin user');
  }

  async regenerateGlobalKey(): Promise<string> {
    const key = generateApiKey();
    await this.config.patch({ api: { key } });
    return key;
  }

  registerKeyResolver(fn: KeyResolver): void {
    this.keyResolvers.push(fn);
  }

  identityForUser(u: UserRecord, mechanism: LoginMechanism, sessionId?: string): Identity {
    if (sessionId !== undefined) return makeIdentity({ name: u.name, groups: u.groups, permissions: this.users.userPermissions(u), loginMechanism: mechanism, sessionId });
    // Identities are immutable and every change to users or groups replaces the records (user-store.ts `change`), so
    // one per record and mechanism serves every request with that key: no permission set built per request.
    let byMechanism = this.identities.get(u);
    if (!byMechanism) this.identities.set(u, (byMechanism = new Map()));
    let id = byMechanism.get(mechanism);
    if (!id) byMechanism.set(mechanism, (id = makeIdentity({ name: u.name, groups: u.groups, permissions: this.users.userPermissions(u), loginMechanism: mechanism })));
    return id;
  }

  globalKeyIdentity(sessionId?: string): Identity {
    if (sessionId === undefined) return GLOBAL_KEY_IDENTITY;
    return makeIdentity({ name: GLOBAL_KEY_USER, groups: ['admins', 'users'], permissions: ['ADMIN'], loginMechanism: 'apikey', sessionId });
  }

  anonymous(): Identity {
    if (!this.enabled) return FULL_ADMIN_IDENTITY;
    // One per guests record, which every change to users or groups replaces (as in identityForUser).
    const guests = this.users.getGroup('guests');
    let id = guests && this.guestIdentities.get(guests);
    if (!id) {
      id = makeIdentity({ name: undefined, groups: ['guests'], permissions: this.users.groupPermissions('guests'), loginMechanism: 'none' });
      if (guests) this.guestIdentities.set(guests, id);
    }
    return id;
  }

  /**
   * Identity for an API key, or undefined when the key is unknown (callers answer 403 "Invalid API key"). The key may
   * come already hashed (a connection that sent the same key before, http/auth.ts).
   */
  identityForApiKey(sent: string | SecretProbe): Identity | undefined {
    const probe = typeof sent === 'string' ? new SecretProbe(sent) : sent;
    const key = probe.value;
    const global = this.config.get().api.key;
    if (global && probe.matches(global)) return this.globalKeyIdentity();
    const u = this.users.findByApiKey(probe);
    if (u) return u.active ? this.identityForUser(u, 'apikey') : undefined;
    for (const r of this.keyResolvers) {
      const hit = r(key, probe);
      if (hit === 'global') return this.globalKeyIdentity();
      if (hit) {
        const owner = this.users.getUser(hit.user);
        if (owner?.active) return this.identityForUser(owner, hit.mechanism);
      }
    }
    return undefined;
  }

  /** Identity for a session id (cookie or push `auth`), if the session is alive and its user still active. */
  identityForSession(sessionId: string): Identity | undefined {
    const s = this.sessions.get(sessionId);
    if (!s) return undefined;
    // Access control off: a session (from a passive login) is just a handle for the push channel; everyone is admin.
    if (!this.enabled) return makeIdentity({ name: 'admin', groups: ['admins', 'users'], permissions: ['ADMIN'], loginMechanism: s.mechanism, sessionId: s.id });
    if (s.user === GLOBAL_KEY_USER) return this.globalKeyIdentity(s.id);
    const u = this.users.getUser(s.user);
    if (!u || !u.active) {
      this.sessions.delete(sessionId, 'removed');
      return undefined;
    }
    return this.identityForUser(u, s.mechanism, s.id);
  }

  /** Checks credentials; the session is created by the caller once it decides to log in. */
  async checkCredentials(name: string, password: string): Promise<UserRecord | undefined> {
    const u = await this.users.checkPassword(name, password);
    return u && u.active ? u : undefined;
  }

  now(): number {
    return this.clock.now();
  }

  /** A remember-me cookie value for the user (valid 90 days, dies with a password change). */
  rememberToken(user: UserRecord): { token: string; expires: number } {
    return makeRememberToken(this.secret(), user, this.clock.now());
  }

  /** The active user a remember-me cookie vouches for. */
  userForRememberToken(token: string): UserRecord | undefined {
    const name = checkRememberToken(this.secret(), token, (n) => this.users.getUser(n), this.clock.now());
    const u = name === undefined ? undefined : this.users.getUser(name);
    return u?.active ? u : undefined;
  }

  private secret(): string {
    // Without a stored secret (offline CLI use) nothing can be remembered; an empty secret would be guessable.
    return this.config.get().server.secretKey ?? randomBytes(32).toString('hex');
  }

  /** Whether a login response should flag the client as outside the local network. */
  isExternalClient(address: string | undefined): boolean {
    const ipCheck = this.config.get().server.ipCheck;
    return ipCheck.enabled && isExternalAddress(address, ipCheck.trustedSubnets);
  }

  /** The user a passive login from `address` is logged in as automatically, if local autologin is configured. */
  autologinUser(address: string | undefined): UserRecord | undefined {
    const ac = this.config.get().accessControl;
    if (!this.enabled || !ac.autologinLocal || !ac.autologinAs) return undefined;
    if (!inNetworks(address, networkList(ac.localNetworks))) return undefined;
    const u = this.users.getUser(ac.autologinAs);
    return u?.active ? u : undefined;
  }
}
