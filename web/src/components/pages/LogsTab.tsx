// Logs: the server's log files (size, date), the tail of one followed live while it is shown, download and delete.
import { useEffect, useRef, useState } from 'preact/hooks';
import { del, get } from '../../lib/api.ts';
import { bytes, date } from '../../lib/format.ts';
import { confirmDialog } from '../../lib/dialogs.ts';
import { attempt } from '../../lib/store.ts';

interface LogFile { name: string; size: number; date: number; refs: { download: string } }
const TAIL = 64 * 1024;

export function LogsTab() {
  const [list, setList] = useState<LogFile[] | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  const [tail, setTail] = useState('');
  const pre = useRef<HTMLPreElement>(null);
  const reload = () => get<{ files: LogFile[] }>('/api/logs').then((r) => setList(r.files.sort((a, b) => b.date - a.date)), () => setList([]));
  useEffect(() => void reload(), []);

  // Follows the chosen file every 2 s while this tab is open and the page visible; the server's log is not the
  // printer, so this costs the printer nothing.
  useEffect(() => {
    if (!shown) return;
    let stop = false;
    const url = list?.find((f) => f.name === shown)?.refs.download;
    const read = async () => {
      if (!url || document.hidden) return;
      const res = await fetch(url, { credentials: 'same-origin', headers: { Range: `bytes=-${TAIL}` } }).catch(() => null);
      if (!res?.ok || stop) return;
      const text = await res.text();
      const atEnd = pre.current ? pre.current.scrollHeight - pre.current.scrollTop - pre.current.clientHeight < 30 : true;
      setTail(text.length > TAIL ? text.slice(-TAIL) : text);
      if (atEnd) requestAnimationFrame(() => { if (pre.current) pre.current.scrollTop = pre.current.scrollHeight; });
    };
    void read();
    const timer = setInterval(() => void read(), 2000);
    return () => { stop = true; clearInterval(timer); };
  }, [shown, list]);

  const remove = async (f: LogFile) => {
    if (!(await confirmDialog('Delete log', `Delete ${f.name}?`, 'Delete', { cancel: 'Keep', danger: true }))) return;
    if (await attempt('Delete', () => del(`/api/logs/${encodeURIComponent(f.name)}`))) { if (shown === f.name) setShown(null); void reload(); }
  };

  if (!list) return <p class="muted">Loading…</p>;
  return (
    <div class="pages">
      <section class="section wide" aria-label="Log files">
        {list.length === 0 ? <p class="muted">No log files.</p> : (
          <div class="scroll"><table>
            <thead><tr><th>File</th><th>Size</th><th>Changed</th><th /></tr></thead>
            <tbody>{list.map((f) => (
              <tr key={f.name} class={shown === f.name ? 'selected' : ''}>
                <td><button class="link" aria-pressed={shown === f.name} onClick={() => setShown(shown === f.name ? null : f.name)}>{f.name}</button></td>
                <td>{bytes(f.size)}</td><td>{date(f.date)}</td>
                <td class="actions"><a class="button small" href={f.refs.download} download>Download</a>
                  <button class="small danger" onClick={() => void remove(f)}>Delete</button></td>
              </tr>
            ))}</tbody>
          </table></div>
        )}
      </section>
      {shown && <pre class="log" ref={pre} data-testid="log-tail" aria-label={`End of ${shown}`} tabIndex={0}>{tail}</pre>}
    </div>
  );
}
