// Flow-control and signalling replies: ok (plain and ADVANCED_OK), resend requests, errors, busy, wait, start, actions.
// Sample lines:
//   ok                          ok T:21.5 /0.0 B:21.3 /0.0 @:0 B@:0          ok N1645 P57 B63
//   Resend: 123                 Resend:123          rs N123          rs 123
//   Error:checksum mismatch, Last Line: 41         Error:Line Number is not Last Line Number+1, Last Line: 41
//   Error:Printer halted. kill() called!           !! Lost communication with MCU 'mcu'     fatal:Heater decoupled
//   Error: G1: insufficient axes homed (RRF)       !! Must home axis first (Klipper)
//   echo:busy: processing       busy:processing    echo:busy: paused for user
//   wait                        start
//   //action:pause              // action:prompt_begin Filament runout     //action:notification Heating...

export const ReplyKind = { Other: 0, Ok: 1, Resend: 2, Error: 3, Busy: 4, Wait: 5, Start: 6, Action: 7 } as const;
export type ReplyKind = (typeof ReplyKind)[keyof typeof ReplyKind];

/** Cheap first-character dispatch: most lines are `ok`. */
export function replyKind(line: string): ReplyKind {
  const c = line.charCodeAt(0);
  if (c === 111 /* o */ && line.charCodeAt(1) === 107 /* k */ && (line.length === 2 || line.charCodeAt(2) === 32)) return ReplyKind.Ok;
  if (c === 82 || c === 114 /* R r */) {
    const low = line.slice(0, 6).toLowerCase();
    if (low === 'resend' || low.startsWith('rs ') || low.startsWith('rs:')) return ReplyKind.Resend;
  }
  if (c === 69 || c === 101 /* E e */) {
    if (line.length >= 6 && line.slice(0, 6).toLowerCase() === 'error:') return ReplyKind.Error;
    if (line.startsWith('echo:busy:')) return ReplyKind.Busy;
  }
  if (c === 33 && line.charCodeAt(1) === 33 /* !! */) return ReplyKind.Error;
  if (c === 102 && line.startsWith('fatal:')) return ReplyKind.Error;
  if (c === 98 && line.startsWith('busy:')) return ReplyKind.Busy;
  if (c === 119 && line === 'wait') return ReplyKind.Wait;
  if (c === 115 && line === 'start') return ReplyKind.Start;
  if (c === 47 && line.startsWith('//') && /^\/\/\s*action:/.test(line)) return ReplyKind.Action;
  return ReplyKind.Other;
}

export interface AdvancedOk {
  /** Line number the ok belongs to, or -1. */
  line: number;
  /** Free planner slots, or -1. */
  planner: number;
  /** Free command-queue slots, or -1. */
  buffer: number;
}

/** Parses `ok N<n> P<p> B<b>`; null when the ok carries none of them (plain or a temperature ok). */
export function parseAdvancedOk(line: string): AdvancedOk | null {
  if (line.length < 5 || line.charCodeAt(3) !== 78 /* N */ && line.charCodeAt(3) !== 80 /* P */) return null;
  let n = -1, p = -1, b = -1;
  let i = 3;
  while (i < line.length) {
    const key = line.charCodeAt(i);
    let j = i + 1;
    let v = 0;
    let digits = 0;
    while (j < line.length) {
      const d = line.charCodeAt(j);
      if (d < 48 || d > 57) break;
      v = v * 10 + (d - 48);
      digits++;
      j++;
    }
    if (digits === 0) return null;
    if (key === 78) n = v;
    else if (key === 80) p = v;
    else if (key === 66) b = v;
    else return null;
    while (j < line.length && line.charCodeAt(j) === 32) j++;
    i = j;
  }
  return p === -1 && b === -1 && n === -1 ? null : { line: n, planner: p, buffer: b };
}

/** The line number of a resend request, or null if none can be read. */
export function parseResend(line: string): number | null {
  // The first number right after white space, `N` or `:` (`Resend: 5`, `rs N5`, `Resend:N:5`), found by the one
  // character behind it: as `(?:N:?|:|\s)\s*(\d+)`, a run of 16 K spaces without a number took a second (every space
  // started a scan of the rest of the run).
  const m = /(?<=[\sN:])\d+/.exec(line.slice(2));
  return m ? Number(m[0]) : null;
}

export type ErrorClass = 'resendFollows' | 'recoverable' | 'sd' | 'unknownCommand' | 'fatal' | 'commandFailed';

/** Normalised error text (prefix removed) and its class. */
export function classifyError(line: string, firmware: string): { text: string; cls: ErrorClass } {
  let text = line;
  if (/^error:/i.test(text)) text = text.slice(6).trim();
  else if (text.startsWith('!!')) text = text.slice(2).trim();
  const low = text.toLowerCase();
  if (low.includes('no line number with checksum') || low.includes('missing linenumber')) return { text, cls: 'recoverable' };
  if (low.includes('line number') || low.includes('linenumber') || low.includes('checksum') || low.includes('format error') || low.includes('expected line')) {
    return { text, cls: 'resendFollows' };
  }
  if (['volume.init', 'openroot', 'workdir', 'error writing to file', 'cannot open', 'open failed', 'cannot enter'].some((s) => low.includes(s))) {
    return { text, cls: 'sd' };
  }
  if (low.includes('unknown command')) return { text, cls: 'unknownCommand' };
  // Per-command complaints that do not mean the machine is unsafe; OctoPrint treats them as fatal, users hate that.
  const fw = firmware.toLowerCase();
  if (!line.startsWith('fatal:') && !low.includes('kill() called') && !low.includes('halted') && !low.includes('thermal')
    && !low.includes('maxtemp') && !low.includes('mintemp') && !low.includes('heating failed') && !low.includes('lost communication')
    && !low.includes('shutdown') && !low.includes('stopped')) {
    if (fw.includes('klipper') && (low.includes('must home') || low.startsWith('unknown') || low.includes('out of range') || low.includes('move out of range'))) return { text, cls: 'commandFailed' };
    if (fw.includes('reprapfirmware') && /^[gmt]\d+:/i.test(text)) return { text, cls: 'commandFailed' };
  }
  return { text: line.startsWith('fatal:') ? `fatal:${text.slice(6)}` : text, cls: 'fatal' };
}

/** `//action:pause now` → {name: 'pause', params: 'now'}. */
export function parseAction(line: string): { name: string; params: string } {
  const body = line.replace(/^\/\/\s*action:/, '').trim();
  const sp = body.indexOf(' ');
  return sp === -1 ? { name: body, params: '' } : { name: body.slice(0, sp), params: body.slice(sp + 1).trim() };
}
