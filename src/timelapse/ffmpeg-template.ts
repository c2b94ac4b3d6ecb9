// `webcam.ffmpegCommandline` / `ffmpegThumbnailCommandline`: OctoPrint's command templates, checked at config time and
// expanded into an argv. The template is split into words first and the placeholders filled in afterwards, so a
// value (a path with spaces or quotes, a filter graph) is always exactly one argument and no shell ever runs.
import { invalid } from '../core/errors.ts';

/** What 1.9.3 fills in (timelapse.md §6.2); `{filters}` is the `-vf` option with its filter graph. */
export const RENDER_PLACEHOLDERS = ['ffmpeg', 'fps', 'input', 'output', 'videocodec', 'threads', 'bitrate', 'containerformat', 'filters'] as const;
export const THUMBNAIL_PLACEHOLDERS = ['ffmpeg', 'input', 'output'] as const;
const REQUIRED = ['ffmpeg', 'input', 'output'];

export type TemplateValues = Partial<Record<(typeof RENDER_PLACEHOLDERS)[number], string>>;

/** Shell-like words: blanks separate, '…' is literal, "…" and a backslash escape as in sh. No expansion of any kind. */
export function splitWords(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < text.length && '"\\$`'.includes(text[i + 1])) word += text[++i];
      else word += c;
    } else if (c === ' ' || c === '\t' || c === '\n') {
      if (word !== null) words.push(word);
      word = null;
    } else {
      word ??= '';
      if (c === '"' || c === "'") quote = c;
      else if (c === '\\' && i + 1 < text.length) word += text[++i];
      else word += c;
    }
  }
  if (quote) throw new Error(`unclosed ${quote} quote`);
  if (word !== null) words.push(word);
  return words;
}

/** Python str.format's fields in one word: `{name}` parts and literal text (`{{`/`}}` are braces). */
function fields(word: string): Array<{ text: string } | { name: string }> {
  const out: Array<{ text: string } | { name: string }> = [];
  let text = '';
  for (let i = 0; i < word.length; i++) {
    const c = word[i];
    if ((c === '{' || c === '}') && word[i + 1] === c) {
      text += c;
      i++;
    } else if (c === '{') {
      const end = word.indexOf('}', i);
      if (end < 0) throw new Error(`"{" without "}" in ${word}`);
      if (text) out.push({ text });
      text = '';
      out.push({ name: word.slice(i + 1, end) });
      i = end;
    } else if (c === '}') {
      throw new Error(`single "}" in ${word}`);
    } else {
      text += c;
    }
  }
  if (text) out.push({ text });
  return out;
}

/**
 * Template → argv (binary first). A word that is exactly `{filters}` becomes `-vf <graph>` (two arguments, as the
 * shell-quoted expansion does in OctoPrint); any other placeholder is replaced inside its word.
 */
export function expandCommandline(template: string, values: TemplateValues, known: readonly string[] = RENDER_PLACEHOLDERS): string[] {
  const argv: string[] = [];
  for (const word of splitWords(template)) {
    const parts = fields(word);
    if (parts.length === 1 && 'name' in parts[0] && parts[0].name === 'filters') {
      if (values.filters !== undefined) argv.push('-vf', values.filters);
      continue;
    }
    argv.push(parts.map((p) => {
      if ('text' in p) return p.text;
      if (!known.includes(p.name)) throw new Error(`unknown placeholder {${p.name}}`);
      const v = values[p.name as keyof TemplateValues];
      if (v === undefined) throw new Error(`{${p.name}} has no value here`);
      return v;
    }).join(''));
  }
  return argv;
}

/** The config-time check (`POST /api/settings`): the three placeholders present and a template that expands. */
export function checkCommandline(template: string, setting = 'webcam.ffmpegCommandline', known: readonly string[] = RENDER_PLACEHOLDERS): void {
  const missing = REQUIRED.filter((p) => !template.includes(`{${p}}`));
  if (missing.length > 0) throw invalid(`Invalid ${setting} setting: it needs ${missing.map((p) => `{${p}}`).join(', ')}`);
  try {
    const argv = expandCommandline(template, Object.fromEntries(known.map((k) => [k, 'x'])), known);
    if (argv.length === 0) throw new Error('it is empty');
  } catch (err) {
    throw invalid(`Invalid ${setting} setting: ${(err as Error).message}`);
  }
}
