// The first-run setup wizard (loaded when it opens): the admin password, the printer profile, connecting and testing the
// printer, the camera with a live check and this machine's system commands, one step at a time, each skippable.
import { useEffect, useState } from 'preact/hooks';
import { get, patch, post, put } from '../../lib/api.ts';
import { connection, loadConnection, loadProfiles, printerState, profiles, terminal, terminalVersion, userName } from '../../lib/store.ts';
import { endSetup } from '../../lib/setup.ts';
import { postSettings } from '../settings/SettingsTab.tsx';
import { Check, FieldErrors, Section, Text } from '../settings/fields.tsx';
import './setup.css';

const STEPS = ['Password', 'Printer', 'Connection', 'Camera', 'System commands'] as const;
const MIN_PASSWORD = 8;

export function SetupWizard() {
  const [step, setStep] = useState(0);
  const next = () => (step + 1 < STEPS.length ? setStep(step + 1) : void endSetup('done'));
  const skip = <button type="button" onClick={next}>Skip this step</button>;
  const View = [PasswordStep, PrinterStep, ConnectionStep, CameraStep, CommandsStep][step];
  return (
    <div class="overlay setup" role="dialog" aria-modal="true" aria-label="Set up Gantry">
      <div class="dialog wide">
        <div class="setup-head">
          <h2>Set up Gantry</h2>
          <button type="button" class="link" onClick={() => void endSetup('skipped')}>Skip setup</button>
        </div>
        <ol class="setup-steps" aria-label="Steps">
          {STEPS.map((s, i) => <li key={s} aria-current={i === step ? 'step' : undefined} class={i < step ? 'done' : ''}>{s}</li>)}
        </ol>
        <p class="muted small">Step {step + 1} of {STEPS.length}. Every step can be changed later in Settings, where this wizard can be opened again.</p>
        <View next={next} skip={skip} last={step === STEPS.length - 1} />
      </div>
    </div>
  );
}

type StepProps = { next(): void; skip: preact.JSX.Element; last: boolean };

function PasswordStep({ next, skip }: StepProps) {
  const [pw, setPw] = useState('');
  const [again, setAgain] = useState('');
  const save = async () => {
    if (pw !== again) throw new FieldErrors({ 'setup.again': 'the two passwords differ' });
    await put(`/api/access/users/${encodeURIComponent(userName.value ?? 'admin')}/password`, { password: pw });
    next();
  };
  return (
    <Section title="Admin password" onSave={save} saveLabel="Save and continue" actions={skip}>
      <p>You are logged in as <b>{userName.value}</b> with the password printed once when Gantry first started. Choose your own.</p>
      <Text label="New password" type="password" name="password" value={pw} onChange={setPw} required minLength={MIN_PASSWORD}
        placeholder={`at least ${MIN_PASSWORD} characters`} />
      <Text label="Repeat the password" type="password" name="setup.again" value={again} onChange={setAgain} required />
    </Section>
  );
}

function PrinterStep({ next, skip }: StepProps) {
  const all = Object.values(profiles.value);
  const p = all.find((x) => x.current) ?? all.find((x) => x.default);
  const [width, setWidth] = useState(String(p?.volume?.width ?? 200));
  const [depth, setDepth] = useState(String(p?.volume?.depth ?? 200));
  const [height, setHeight] = useState(String(p?.volume?.height ?? 200));
  const [nozzle, setNozzle] = useState(String(p?.extruder?.nozzleDiameter ?? 0.4));
  const [heated, setHeated] = useState(p?.heatedBed ?? true);
  const save = async () => {
    await patch(`/api/printerprofiles/${encodeURIComponent(p?.id ?? '_default')}`, {
      profile: { volume: { width: Number(width), depth: Number(depth), height: Number(height) }, extruder: { nozzleDiameter: Number(nozzle) }, heatedBed: heated },
    });
    await loadProfiles();
    next();
  };
  // The same bounds as the profile's own settings form (the server's profile check).
  const size = { min: 0.1, max: 9999, required: true };
  return (
    <Section title="Printer" onSave={save} saveLabel="Save and continue" actions={skip}>
      <fieldset class="grid"><legend>Bed size and build height (mm)</legend>
        <Text label="Bed width" type="number" name="profile.width" value={width} onChange={setWidth} {...size} />
        <Text label="Bed depth" type="number" name="profile.depth" value={depth} onChange={setDepth} {...size} />
        <Text label="Build height" type="number" name="profile.height" value={height} onChange={setHeight} {...size} />
      </fieldset>
      <Text label="Nozzle diameter (mm)" type="number" name="profile.nozzle" value={nozzle} onChange={setNozzle} min={0.05} max={5} required />
      <Check label="Heated bed" value={heated} onChange={setHeated} />
    </Section>
  );
}

function ConnectionStep({ next, skip }: StepProps) {
  useEffect(() => void loadConnection(), []);
  const c = connection.value;
  const [port, setPort] = useState('');
  const [baud, setBaud] = useState('');
  const [autoconnect, setAutoconnect] = useState(true);
  const [answer, setAnswer] = useState('');
  const [testing, setTesting] = useState(false);
  const state = printerState.value;
  const operational = state.flags.operational;
  // The test's answer: the firmware's reply to M115 among the terminal lines the push channel brings.
  useEffect(() => {
    if (!testing) return;
    const line = terminal.slice(-200).find((l) => /FIRMWARE_NAME/i.test(l));
    if (line) {
      setAnswer(line.replace(/^Recv:\s*/, ''));
      setTesting(false);
    }
  }, [testing, terminalVersion.value]);
  const connect = async () => {
    await post('/api/connection', { command: 'connect', port: port || undefined, baudrate: baud ? Number(baud) : undefined, save: true, autoconnect });
    await loadConnection();
  };
  const test = async () => {
    setAnswer('');
    setTesting(true);
    await post('/api/printer/command', { commands: ['M115'] });
  };
  return (
    <Section title="Connect the printer" onSave={operational ? next : connect} saveLabel={operational ? 'Continue' : 'Connect'} actions={skip}>
      <label>Serial port
        <select value={port} onChange={(e) => setPort(e.currentTarget.value)}>
          <option value="">AUTO (try each port)</option>
          {(c?.options.ports ?? []).map((p) => <option key={p} value={p}>{p === 'VIRTUAL' ? 'VIRTUAL (a simulated printer)' : p}</option>)}
        </select>
      </label>
      <label>Baud rate
        <select value={baud} onChange={(e) => setBaud(e.currentTarget.value)}>
          <option value="">AUTO</option>
          {(c?.options.baudrates ?? []).map((b) => <option key={b} value={String(b)}>{b}</option>)}
        </select>
      </label>
      <Check label="Connect automatically when Gantry starts" value={autoconnect} onChange={setAutoconnect} />
      <p role="status" data-testid="setup-printer-state">Printer: <b>{state.text}</b>{state.error ? ` (${state.error})` : ''}</p>
      {operational && (
        <div class="buttons start">
          <button type="button" onClick={() => void test()} disabled={testing}>{testing ? 'Asking the printer…' : 'Test: ask the firmware (M115)'}</button>
        </div>
      )}
      {answer && <p class="ok" data-testid="setup-printer-answer">The printer answered: <code>{answer}</code></p>}
    </Section>
  );
}

function CameraStep({ next, skip }: StepProps) {
  const [url, setUrl] = useState('');
  const [check, setCheck] = useState<{ url: string; result: 'checking' | 'ok' | 'failed'; size?: string } | null>(null);
  const save = async () => {
    if (url.trim()) {
      await postSettings({ webcam: { streamUrl: url }, plugins: { classicwebcam: { stream: url } } } as never);
    }
    next();
  };
  return (
    <Section title="Camera" onSave={save} saveLabel={url.trim() ? 'Save and continue' : 'Continue without a camera'} actions={skip}>
      <Text label="Stream or snapshot URL" type="url" name="webcam.streamUrl" value={url} onChange={(v) => { setUrl(v); setCheck(null); }}
        placeholder="http://192.168.1.20:8080/?action=stream" />
      <div class="buttons start">
        <button type="button" disabled={!url.trim()} onClick={() => setCheck({ url, result: 'checking' })}>Check the camera</button>
      </div>
      {check && (
        <>
          <img class="webcam" src={check.url} alt="Camera picture" style={check.result === 'ok' ? undefined : { display: 'none' }}
            onLoad={(e) => setCheck({ ...check, result: 'ok', size: `${e.currentTarget.naturalWidth}×${e.currentTarget.naturalHeight}` })}
            onError={() => setCheck({ ...check, result: 'failed' })} />
          <p role="status" data-testid="camera-check" class={check.result === 'failed' ? 'error' : check.result === 'ok' ? 'ok' : 'muted'}>
            {check.result === 'checking' ? 'Checking…' : check.result === 'ok' ? `The camera sends pictures (${check.size}).`
              : 'No picture came from this URL: check the address and that the camera is on.'}
          </p>
        </>
      )}
    </Section>
  );
}

interface Suggestions { serverRestartCommand: string; systemRestartCommand: string; systemShutdownCommand: string; basis: string }

function CommandsStep({ next, skip }: StepProps) {
  const [s, setS] = useState<Suggestions | null>(null);
  useEffect(() => void get<Suggestions>('/plugin/gantry/command-suggestions').then(setS, () => setS({ serverRestartCommand: '', systemRestartCommand: '', systemShutdownCommand: '', basis: '' })), []);
  if (!s) return <p class="muted">Loading…</p>;
  const field = (label: string, key: keyof Omit<Suggestions, 'basis'>) =>
    <Text label={label} value={s[key]} onChange={(v) => setS({ ...s, [key]: v })} name={`server.commands.${key}`} />;
  const save = async () => {
    await postSettings({ server: { commands: {
      serverRestartCommand: s.serverRestartCommand || null, systemRestartCommand: s.systemRestartCommand || null, systemShutdownCommand: s.systemShutdownCommand || null,
    } } } as never);
    next();
  };
  return (
    <Section title="System commands" onSave={save} saveLabel="Save and finish" actions={skip}>
      <p>The header's System menu runs these on this machine (after asking). {s.basis && <>Filled in for: {s.basis}.</>} Gantry's
        account needs the right to run them (for <code>sudo</code>, a sudoers rule without a password).</p>
      {field('Restart Gantry', 'serverRestartCommand')}
      {field('Reboot the machine', 'systemRestartCommand')}
      {field('Shut the machine down', 'systemShutdownCommand')}
    </Section>
  );
}
