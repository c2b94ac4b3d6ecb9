// Maps a port name to its transport: `VIRTUAL` → the simulator behind a loopback, anything else → a serial device.
import type { TransportFactory } from '../protocol/line-transport.ts';
import type { Config } from '../config/schema.ts';
import { VirtualPrinter } from '../virtual-printer/virtual-printer.ts';
import { FolderSdStorage, MemorySdStorage } from '../virtual-printer/sd-card.ts';
import type { VirtualPrinterOptions } from '../virtual-printer/options.ts';
import { LoopbackTransport } from './loopback-transport.ts';
import { SerialTransport } from './serial-transport.ts';
import { VIRTUAL_PORT } from './port-discovery.ts';
import type { BedShape } from '../virtual-printer/bed-shape.ts';

/** devel.virtualPrinter → simulator options. */
export function virtualPrinterOptions(vp: Config['devel']['virtualPrinter']): Partial<VirtualPrinterOptions> {
  const v = vp;
  return {
    numExtruders: v.numExtruders,
    sharedNozzle: v.sharedNozzle,
    hasBed: v.hasBed,
    hasChamber: v.hasChamber,
    sdCard: v.sdFiles,
    advancedOk: v.advancedOk,
    rxBuffer: v.rxBuffer,
    commandBuffer: v.commandBuffer,
    timeScale: v.throttle,
    okAfterResend: v.okAfterResend,
    forceChecksum: v.forceChecksum,
    busyInterval: v.busyInterval,
    corruptEveryN: v.resendEveryN,
    dropOkEveryN: v.dropOkEveryN,
    ...(v.firmwareName ? { firmwareName: v.firmwareName } : {}),
    disconnectAfterLines: v.disconnectAfterLines,
    bedShape: { ...v.bedShape, format: v.bedShape.format as BedShape['format'] },
  };
}

export interface TransportFactoryDeps {
  /** Settings are read when a connection is made, so changes apply to the next connect. */
  settings: () => Pick<Config, 'serial' | 'devel'>;
  /** Folder backing the virtual printer's SD card (null: in memory, lost on disconnect). */
  virtualSdFolder: string | null;
}

export function createTransportFactory(deps: TransportFactoryDeps): TransportFactory {
  return (port, baudrate) => {
    const cfg = deps.settings();
    if (port === VIRTUAL_PORT) {
      return new LoopbackTransport(() => new VirtualPrinter(
        virtualPrinterOptions(cfg.devel.virtualPrinter),
        deps.virtualSdFolder ? new FolderSdStorage(deps.virtualSdFolder) : new MemorySdStorage(),
      ));
    }
    const s = cfg.serial;
    return new SerialTransport(port, baudrate, {
      exclusive: s.exclusive,
      lowLatency: s.lowLatency,
      encoding: s.encoding,
      openTimeout: s.timeout.connection,
      parityWorkaround: s.useParityWorkaround,
      replySpinMicros: s.replySpinMicros,
      resetOnConnect: s.resetOnConnect,
    });
  };
}
