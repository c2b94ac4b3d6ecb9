// machine.system_info and machine.proc_stats (docs/reference/moonraker.md §3.1): the host as Node sees it, and the
// server's own CPU and memory once a second (kept for the last 30 s, sent as notify_proc_stat_update).
import { cpus, freemem, networkInterfaces, totalmem, uptime, hostname, arch } from 'node:os';
import { readFile } from 'node:fs/promises';

export interface ProcSample { time: number; cpu_usage: number; memory: number; mem_units: 'kB' }

let osRelease: Promise<Record<string, string>> | undefined;
function readOsRelease(): Promise<Record<string, string>> {
  osRelease ??= readFile('/etc/os-release', 'utf8').then((t) => Object.fromEntries(t.split('\n').filter((l) => l.includes('='))
    .map((l) => { const i = l.indexOf('='); return [l.slice(0, i), l.slice(i + 1).replace(/^"|"$/g, '')]; })), () => ({}));
  return osRelease;
}

export async function systemInfo(instance: string): Promise<Record<string, unknown>> {
  const os = await readOsRelease();
  const list = cpus();
  const version = (os.VERSION_ID ?? '').split('.');
  const network: Record<string, unknown> = {};
  for (const [name, addrs] of Object.entries(networkInterfaces())) {
    if (!addrs || name === 'lo') continue;
    network[name] = {
      mac_address: addrs[0]?.mac ?? '',
      ip_addresses: addrs.map((a) => ({ family: a.family === 'IPv6' ? 'ipv6' : 'ipv4', address: a.address, is_link_local: a.address.startsWith('fe80') })),
    };
  }
  return {
    system_info: {
      provider: 'none',
      cpu_info: {
        cpu_count: list.length, bits: arch().includes('64') ? '64bit' : '32bit', processor: arch(), cpu_desc: list[0]?.model ?? '',
        serial_number: '', hardware_desc: '', model: list[0]?.model ?? '', total_memory: Math.round(totalmem() / 1024), memory_units: 'kB',
      },
      sd_info: {},
      distribution: {
        name: os.PRETTY_NAME ?? 'Linux', id: os.ID ?? 'linux', version: os.VERSION_ID ?? '',
        version_parts: { major: version[0] ?? '', minor: version[1] ?? '', build_number: version[2] ?? '' }, like: os.ID_LIKE ?? '', codename: os.VERSION_CODENAME ?? '',
      },
      virtualization: { virt_type: 'none', virt_identifier: 'none' },
      network,
      canbus: {},
      available_services: [],
      service_state: {},
      instance_ids: { moonraker: instance, klipper: instance },
      python: { version: process.versions.node.split('.').map(Number), version_string: `Node.js ${process.version} (Gantry)` },
      hostname: hostname(),
    },
  };
}

/** Whole-system CPU use since the last call, in percent. */
class SystemCpu {
  private last = cpus().map((c) => ({ ...c.times }));
  sample(): Record<string, number> {
    const now = cpus().map((c) => ({ ...c.times }));
    const out: Record<string, number> = {};
    let busyAll = 0;
    let totalAll = 0;
    now.forEach((t, i) => {
      const b = this.last[i] ?? t;
      const total = t.user + t.nice + t.sys + t.idle + t.irq - (b.user + b.nice + b.sys + b.idle + b.irq);
      const busy = total - (t.idle - b.idle);
      busyAll += busy;
      totalAll += total;
      out[`cpu${i}`] = total > 0 ? Math.round((busy / total) * 10000) / 100 : 0;
    });
    this.last = now;
    return { cpu: totalAll > 0 ? Math.round((busyAll / totalAll) * 10000) / 100 : 0, ...out };
  }
}

export class ProcStats {
  private readonly samples: ProcSample[] = [];
  private lastCpu = process.cpuUsage();
  private lastAt = performance.now();
  private readonly system = new SystemCpu();
  private systemUsage: Record<string, number> = { cpu: 0 };

  /** Called once a second. */
  sample(): ProcSample {
    const cpu = process.cpuUsage();
    const at = performance.now();
    const used = (cpu.user - this.lastCpu.user + cpu.system - this.lastCpu.system) / 1000;
    const usage = at > this.lastAt ? Math.round((used / (at - this.lastAt)) * 10000) / 100 : 0;
    this.lastCpu = cpu;
    this.lastAt = at;
    const s: ProcSample = { time: Date.now() / 1000, cpu_usage: usage, memory: Math.round(process.memoryUsage.rss() / 1024), mem_units: 'kB' };
    this.samples.push(s);
    if (this.samples.length > 30) this.samples.shift();
    this.systemUsage = this.system.sample();
    return s;
  }

  notification(latest: ProcSample, websockets: number): Record<string, unknown> {
    return { moonraker_stats: latest, cpu_temp: null, network: {}, system_cpu_usage: this.systemUsage, websocket_connections: websockets };
  }

  full(websockets: number): Record<string, unknown> {
    const total = Math.round(totalmem() / 1024);
    const available = Math.round(freemem() / 1024);
    return {
      moonraker_stats: [...this.samples], throttled_state: null, cpu_temp: null, network: {}, system_cpu_usage: this.systemUsage,
      system_memory: { total, available, used: total - available }, system_uptime: uptime(), websocket_connections: websockets,
    };
  }
}
