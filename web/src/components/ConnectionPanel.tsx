// Connection panel: serial port, baud rate and printer profile, connect/disconnect, save and auto-connect.
import { useEffect, useState } from 'preact/hooks';
import { post } from '../lib/api.ts';
import { attempt, can, connection, loadConnection, printerState } from '../lib/store.ts';

export function ConnectionPanel() {
  const info = connection.value;
  const [port, setPort] = useState('');
  const [baud, setBaud] = useState('0');
  const [profile, setProfile] = useState('');
  const [save, setSave] = useState(false);
  const [autoconnect, setAutoconnect] = useState(false);
  const [busy, setBusy] = useState(false);

  // Fill the form from the server once it is known; later refreshes keep what the user picked.
  useEffect(() => {
    if (!info) return;
    const o = info.options;
    setPort((p) => p || info.current.port || o.portPreference || o.ports[0] || 'AUTO');
    setBaud((b) => (b !== '0' ? b : String(info.current.baudrate ?? o.baudratePreference ?? 0)));
    setProfile((p) => p || info.current.printerProfile || o.printerProfilePreference || o.printerProfiles[0]?.id || '');
    setAutoconnect(!!o.autoconnect);
  }, [info]);

  const closed = printerState.value.flags.closedOrError;
  const allowed = can('CONNECTION');

  const connect = async () => {
    setBusy(true);
    await attempt('Connect', () => post('/api/connection', {
      command: 'connect', port, baudrate: Number(baud), printerProfile: profile || undefined, save, autoconnect,
    }));
    setBusy(false);
    void loadConnection();
  };
  const disconnect = async () => {
    setBusy(true);
    await attempt('Disconnect', () => post('/api/connection', { command: 'disconnect' }));
    setBusy(false);
    void loadConnection();
  };

  return (
    <section class="panel" aria-label="Connection">
      <h2>Connection</h2>
      {!info ? <p class="muted">No connection information.</p> : (
        <div class="form">
          <label>Serial port
            <select name="port" value={port} disabled={!closed || !allowed} onChange={(e) => setPort(e.currentTarget.value)}>
              <option value="AUTO">AUTO</option>
              {info.options.ports.map((p) => <option key={p} value={p}>{p}</option>)}
            </select>
          </label>
          <label>Baud rate
            <select name="baudrate" value={baud} disabled={!closed || !allowed} onChange={(e) => setBaud(e.currentTarget.value)}>
              <option value="0">AUTO</option>
              {info.options.baudrates.map((b) => <option key={b} value={String(b)}>{b}</option>)}
            </select>
          </label>
          <label>Printer profile
            <select name="printerProfile" value={profile} disabled={!closed || !allowed} onChange={(e) => setProfile(e.currentTarget.value)}>
              {info.options.printerProfiles.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
            </select>
          </label>
          {closed && allowed && (
            <>
              <label class="check"><input type="checkbox" checked={save} onChange={(e) => setSave(e.currentTarget.checked)} /> Save connection settings</label>
              <label class="check"><input type="checkbox" checked={autoconnect} onChange={(e) => setAutoconnect(e.currentTarget.checked)} /> Auto-connect on server start</label>
            </>
          )}
          {allowed && (closed
            ? <button class="primary" disabled={busy} onClick={connect}>Connect</button>
            : <button disabled={busy} onClick={disconnect}>Disconnect</button>)}
        </div>
      )}
      <p class="status-line">State: <strong data-testid="connection-state">{printerState.value.text}</strong>
        {printerState.value.error ? <span class="error"> – {printerState.value.error}</span> : null}</p>
    </section>
  );
}
