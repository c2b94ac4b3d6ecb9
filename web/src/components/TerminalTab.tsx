// Terminal tab: serial log from the push channel with the configured filters, and command entry with history.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { post } from '../lib/api.ts';
import { attempt, can, printerState, settings, terminal, terminalVersion } from '../lib/store.ts';

const HISTORY_KEY = 'gantry.terminalHistory';
const SHOWN = 500;

function loadHistory(): string[] {
  try {
    const v = JSON.parse(localStorage.getItem(HISTORY_KEY) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function TerminalTab() {
  const version = terminalVersion.value;
  const filters = settings.value?.terminalFilters ?? [];
  const [active, setActive] = useState<Set<string>>(() => new Set());
  const [autoscroll, setAutoscroll] = useState(true);
  const [line, setLine] = useState('');
  const [history, setHistory] = useState<string[]>(loadHistory);
  const [pos, setPos] = useState(-1);
  const pre = useRef<HTMLPreElement>(null);

  const regexes = useMemo(() => filters.filter((f) => active.has(f.name)).flatMap((f) => {
    try {
      return [new RegExp(f.regex)];
    } catch {
      return [];
    }
  }), [filters, active]);

  const shown = useMemo(() => {
    const lines = regexes.length ? terminal.filter((l) => !regexes.some((r) => r.test(l))) : terminal;
    return lines.slice(-SHOWN).join('\n');
  }, [version, regexes]);

  useEffect(() => {
    if (autoscroll && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [shown, autoscroll]);

  const send = async (e: Event) => {
    e.preventDefault();
    const cmd = line.trim();
    if (!cmd) return;
    // Like OctoPrint, upper-case the command word (firmware commands are case-sensitive) but not its text arguments.
    const toSend = /^[a-z]\d/i.test(cmd) && !/^M11[78]\b/i.test(cmd) ? cmd.toUpperCase() : cmd;
    const ok = await attempt('Send', () => post('/api/printer/command', { command: toSend }));
    if (!ok) return;
    const next = [...history.filter((h) => h !== cmd), cmd].slice(-50);
    setHistory(next);
    localStorage.setItem(HISTORY_KEY, JSON.stringify(next));
    setPos(-1);
    setLine('');
  };
  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'ArrowUp' && history.length) {
      e.preventDefault();
      const p = pos < 0 ? history.length - 1 : Math.max(0, pos - 1);
      setPos(p);
      setLine(history[p]);
    } else if (e.key === 'ArrowDown' && pos >= 0) {
      e.preventDefault();
      const p = pos + 1;
      if (p >= history.length) {
        setPos(-1);
        setLine('');
      } else {
        setPos(p);
        setLine(history[p]);
      }
    }
  };

  const toggle = (name: string) => {
    const next = new Set(active);
    if (next.has(name)) next.delete(name);
    else next.add(name);
    setActive(next);
  };

  return (
    <div class="terminal">
      <pre ref={pre} class="log" data-testid="terminal-log" aria-label="Serial log" aria-live="off">{shown}</pre>
      {can('CONTROL') && (
        <form class="inline terminal-input" onSubmit={send}>
          <input name="command" placeholder="G-code command, e.g. M115" autocomplete="off" value={line} aria-label="Command"
            disabled={!printerState.value.flags.operational} onInput={(e) => { setLine(e.currentTarget.value); setPos(-1); }} onKeyDown={onKey} />
          <button type="submit" disabled={!printerState.value.flags.operational}>Send</button>
        </form>
      )}
      <div class="filters">
        <label class="check"><input type="checkbox" checked={autoscroll} onChange={(e) => setAutoscroll(e.currentTarget.checked)} /> Autoscroll</label>
        {filters.map((f) => (
          <label key={f.name} class="check"><input type="checkbox" checked={active.has(f.name)} onChange={() => toggle(f.name)} /> {f.name}</label>
        ))}
      </div>
    </div>
  );
}
