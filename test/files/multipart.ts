// Test helper: builds multipart/form-data bodies byte by byte (so tests control raw header encodings).

export interface FormPart {
  name: string;
  value?: string | Buffer;
  /** Sets a file part; the raw header text is written as latin1 bytes unless `rawDisposition` is given. */
  filename?: string;
  /** Full Content-Disposition header value as raw bytes (for non-UTF-8 and RFC 5987 cases). */
  rawDisposition?: Buffer;
  contentType?: string;
}

export const BOUNDARY = '----gantrytestboundary7MA4YWxkTrZu0gW';

export function multipartBody(parts: FormPart[]): { body: Buffer; contentType: string } {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    chunks.push(Buffer.from(`--${BOUNDARY}\r\n`));
    const disp = p.rawDisposition ?? Buffer.from(`form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ''}`, 'utf8');
    chunks.push(Buffer.from('Content-Disposition: '), disp, Buffer.from('\r\n'));
    if (p.filename !== undefined || p.contentType) chunks.push(Buffer.from(`Content-Type: ${p.contentType ?? 'application/octet-stream'}\r\n`));
    chunks.push(Buffer.from('\r\n'));
    chunks.push(typeof p.value === 'string' ? Buffer.from(p.value, 'utf8') : (p.value ?? Buffer.alloc(0)));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${BOUNDARY}` };
}

export const GCODE = 'G28\nG1 X10 Y10 Z0.2 F3000\nG1 X20 E1.5 F1200\nG1 Y20 E3.0\nM84\n';
