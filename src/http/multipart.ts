// Streaming multipart/form-data reader for uploads: yields part headers and body chunks as they arrive (pull-based, so
// a slow disk slows the socket instead of filling memory). Own parser rather than busboy because the Encoding rule
// (docs/reference/interface-spec.md, Authentication 10) needs the raw header bytes: UTF-8 with an ISO-8859-1
// fallback, and `filename*` (RFC 5987) over `filename`.

export interface PartInfo {
  /** Form field name. */
  name: string;
  /** Present for file parts (may be ''). */
  filename?: string;
  contentType?: string;
}

export type MultipartEvent =
  | { type: 'part'; part: PartInfo }
  | { type: 'data'; chunk: Buffer }
  | { type: 'end' };

export class MultipartError extends Error {}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEADER_BYTES = 16 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes (as a latin1 "binary" string or Buffer) to text: UTF-8 when valid, else ISO-8859-1. */
export function decodeHeaderText(raw: string | Buffer): string {
  const bytes = typeof raw === 'string' ? Buffer.from(raw, 'latin1') : raw;
  try {
    return utf8.decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

/** The boundary of a multipart/form-data Content-Type, or undefined. */
export function boundaryOf(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data/i.test(contentType)) return undefined;
  const params = parseParams(contentType.slice(contentType.indexOf(';') + 1));
  const b = params.get('boundary');
  return b && b.length <= 200 ? b : undefined;
}

/** `a=1; b="x y"; c*=UTF-8''%C3%A4` → raw (still byte-valued) values; keys lower-cased. */
function parseParams(s: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < s.length) {
    while (i < s.length && (s[i] === ';' || s[i] === ' ' || s[i] === '\t')) i++;
    const eq = s.indexOf('=', i);
    if (eq === -1) break;
    const key = s.slice(i, eq).trim().toLowerCase();
    i = eq + 1;
    let value = '';
    if (s[i] === '"') {
      i++;
      while (i < s.length && s[i] !== '"') {
        if (s[i] === '\\' && i + 1 < s.length) i++;
        value += s[i++];
      }
      i++;
      while (i < s.length && s[i] !== ';') i++;
    } else {
      const semi = s.indexOf(';', i);
      value = (semi === -1 ? s.slice(i) : s.slice(i, semi)).trim();
      i = semi === -1 ? s.length : semi;
    }
    if (key && !out.has(key)) out.set(key, value);
  }
  return out;
}

/** RFC 5987 ext-value (`charset'lang'pct-encoded`) → text; undefined when malformed. */
function decodeExtValue(v: string): string | undefined {
  const m = /^([^']*)'[^']*'(.*)$/.exec(v);
  if (!m) return undefined;
  const bytes: number[] = [];
  const enc = m[2];
  for (let i = 0; i < enc.length; i++) {
    if (enc[i] === '%' && /^[0-9a-fA-F]{2}$/.test(enc.slice(i + 1, i + 3))) {
      bytes.push(parseInt(enc.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(enc.charCodeAt(i) & 0xff);
    }
  }
  const buf = Buffer.from(bytes);
  return /^iso-8859-1$/i.test(m[1]) ? buf.toString('latin1') : decodeHeaderText(buf);
}

function parsePartHeaders(block: string): PartInfo | undefined {
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'content-disposition') disposition = value;
    else if (key === 'content-type') contentType = value;
  }
  if (!disposition || !/^form-data\s*(;|$)/i.test(disposition)) return undefined;
  const params = parseParams(disposition.slice(disposition.indexOf(';') + 1 || disposition.length));
  const name = params.get('name');
  if (name === undefined) return undefined;
  const ext = params.get('filename*');
  const plain = params.get('filename');
  const filename = ext !== undefined ? (decodeExtValue(ext) ?? (plain !== undefined ? decodeHeaderText(plain) : undefined))
    : plain !== undefined ? decodeHeaderText(plain) : undefined;
  return { name: decodeHeaderText(name), filename, contentType };
}

/** Parses a multipart body; throws MultipartError on malformed or truncated input. */
export async function* readMultipart(source: AsyncIterable<Buffer | string>, boundary: string): AsyncGenerator<MultipartEvent> {
  const delim = Buffer.from(`\r\n--${boundary}`, 'latin1');
  const keep = delim.length - 1;
  type State = 'preamble' | 'afterDelim' | 'headers' | 'body' | 'epilogue';
  let state: State = 'preamble';
  // The first boundary has no CRLF before it; pretend it has one so one delimiter form fits all.
  let buf: Buffer = Buffer.from(CRLF);
  for await (const raw of source) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw, 'latin1') : raw;
    if (state === 'epilogue') continue;
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      if (state === 'preamble') {
        const at = buf.indexOf(delim);
        if (at === -1) {
          buf = buf.subarray(Math.max(0, buf.length - keep));
          break;
        }
        buf = buf.subarray(at + delim.length);
        state = 'afterDelim';
      } else if (state === 'afterDelim') {
        if (buf.length < 2) break;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          state = 'epilogue';
          break;
        }
        const eol = buf.indexOf(CRLF);
        if (eol === -1) {
          if (buf.length > 256) throw new MultipartError('Malformed multipart boundary line');
          break;
        }
        buf = buf.subarray(eol + 2);
        state = 'headers';
      } else if (state === 'headers') {
        let end: number;
        let skip: number;
        if (buf.length >= 2 && buf[0] === 0x0d && buf[1] === 0x0a) {
          end = 0;
          skip = 2;
        } else {
          end = buf.indexOf(HEADER_END);
          skip = 4;
        }
        if (end === -1) {
          if (buf.length > MAX_HEADER_BYTES) throw new MultipartError('Multipart part headers too large');
          break;
        }
        const part = parsePartHeaders(buf.subarray(0, end).toString('latin1'));
        if (!part) throw new MultipartError('Multipart part without a form-data Content-Disposition');
        buf = buf.subarray(end + skip);
        state = 'body';
        yield { type: 'part', part };
      } else if (state === 'body') {
        const at = buf.indexOf(delim);
        if (at === -1) {
          if (buf.length > keep) {
            const out = buf.subarray(0, buf.length - keep);
            buf = buf.subarray(buf.length - keep);
            yield { type: 'data', chunk: out };
          }
          break;
        }
        if (at > 0) yield { type: 'data', chunk: buf.subarray(0, at) };
        buf = buf.subarray(at + delim.length);
        state = 'afterDelim';
        yield { type: 'end' };
      } else {
        break;
      }
    }
    // Detach the remainder from the big chunk so it can be collected.
    if (buf.length && buf.length < 4096) buf = Buffer.from(buf);
  }
  if (state !== 'epilogue') throw new MultipartError('Unexpected end of multipart data');
}
