// Independent reference figures for analysis tests and the benchmark (shares no code with the analyser).

/**
 * Independent reference: filament per tool as the highest running sum of E moves, honouring M82/M83, G90/G91 and
 * G92. Deliberately naive (strings, split on whitespace), sharing nothing with the analyser.
 */
export function referenceFilament(text: string): number[] {
  const cur = [0], total = [0], max = [0];
  let tool = 0, relE = false, relAll = false;
  for (const raw of text.split('\n')) {
    const line = raw.split(';')[0].trim().toUpperCase();
    if (!line) continue;
    const [cmd, ...words] = line.split(/\s+/);
    const e = words.find((w) => w.startsWith('E'));
    if (cmd === 'M82') relE = false;
    else if (cmd === 'M83') relE = true;
    else if (cmd === 'G90') relAll = false;
    else if (cmd === 'G91') relAll = true;
    else if (cmd === 'G92') { if (e) cur[tool] = Number(e.slice(1)); else if (words.length === 0) cur[tool] = 0; }
    else if (/^G0?[0-3]$/.test(cmd) && e) {
      const v = Number(e.slice(1));
      const delta = relE || relAll ? v : v - cur[tool];
      cur[tool] += delta;
      total[tool] += delta;
      max[tool] = Math.max(max[tool], total[tool]);
    } else if (/^T\d+$/.test(cmd) && Number(cmd.slice(1)) <= 10) {
      tool = Number(cmd.slice(1));
      while (cur.length <= tool) { cur.push(0); total.push(0); max.push(0); }
    }
  }
  return max;
}
