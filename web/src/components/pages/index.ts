// The built-in pages, registered in their navigation order. A new page registers itself from its own file, imported here.
import { registerPage } from '../../lib/pages.ts';
import { TemperatureTab } from '../TemperatureTab.tsx';
import { ControlTab } from '../ControlTab.tsx';
import { TerminalTab } from '../TerminalTab.tsx';
import { PreviewTab } from '../PreviewTab.tsx';
import { SettingsTab } from '../settings/SettingsTab.tsx';
import { HistoryTab } from './HistoryTab.tsx';
import { TimelapseTab } from './TimelapseTab.tsx';
import { LogsTab } from './LogsTab.tsx';
import { StatusPage } from './StatusPage.tsx';
import { FilesPage } from './FilesPage.tsx';
import { LazyBedMeshTab } from '../bed-mesh/LazyBedMeshTab.tsx';
import { LazySpoolsTab } from '../spools/LazySpoolsTab.tsx';
import { LazyFarmPage } from '../farm/LazyFarmPage.tsx';

registerPage({ id: 'status', label: 'Status', icon: '◉', perm: 'STATUS', view: StatusPage, order: 0, bar: 1, phoneOnly: true });
registerPage({ id: 'files', label: 'Files', icon: '🗀', perm: 'FILES_LIST', view: FilesPage, order: 15, bar: 2 });
registerPage({ id: 'temperature', label: 'Temperature', icon: '🌡', perm: 'STATUS', view: TemperatureTab, order: 10, bar: 3 });
registerPage({ id: 'control', label: 'Control', icon: '✥', perm: 'CONTROL', view: ControlTab, order: 20, bar: 4 });
registerPage({ id: 'terminal', label: 'Terminal', icon: '›_', perm: 'MONITOR_TERMINAL', view: TerminalTab, order: 30 });
registerPage({ id: 'preview', label: 'G-code', icon: '▦', perm: 'FILES_DOWNLOAD', view: PreviewTab, order: 40 });
registerPage({ id: 'history', label: 'History', icon: '↺', perm: 'FILES_LIST', view: HistoryTab, order: 50 });
registerPage({ id: 'timelapse', label: 'Timelapse', icon: '▶', perm: 'TIMELAPSE_LIST', view: TimelapseTab, order: 60 });
registerPage({ id: 'bedmesh', label: 'Bed mesh', icon: '▤', perm: 'STATUS', view: LazyBedMeshTab, order: 65 });
registerPage({ id: 'spools', label: 'Spools', icon: '◎', perm: 'STATUS', view: LazySpoolsTab, order: 66 });
registerPage({ id: 'farm', label: 'Farm', icon: '▦▦', perm: 'STATUS', view: LazyFarmPage, order: 67 });
registerPage({ id: 'logs', label: 'Logs', icon: '≡', perm: 'ADMIN', view: LogsTab, order: 70 });
registerPage({ id: 'settings', label: 'Settings', icon: '⚙', perm: 'SETTINGS_READ', view: SettingsTab, order: 80 });
