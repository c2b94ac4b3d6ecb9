// The system commands this machine most likely uses (restart Gantry, reboot, shut down), offered by the setup wizard
// so the System menu works out of the box; nothing runs them until an admin saves them as settings.
import { access } from 'node:fs/promises';
import { unitPath } from './systemd-unit.ts';

export interface CommandSuggestions {
  serverRestartCommand: string;
  systemRestartCommand: string;
  systemShutdownCommand: string;
  /** In words, how the guess was made (shown next to the fields). */
  basis: string;
}

const exists = (path: string) => access(path).then(() => true, () => false);

/**
 * systemd (its runtime folder exists): the installed gantry unit is restarted through the scope it was installed in
 * (`gantry install-service`), and the machine through systemctl. Without systemd: the classic commands; macOS: shutdown.
 */
export async function suggestCommands(platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env): Promise<CommandSuggestions> {
  if (platform === 'darwin') {
    return { serverRestartCommand: '', systemRestartCommand: 'sudo shutdown -r now', systemShutdownCommand: 'sudo shutdown -h now', basis: 'macOS' };
  }
  if (platform !== 'linux') return { serverRestartCommand: '', systemRestartCommand: '', systemShutdownCommand: '', basis: `no suggestion for ${platform}` };
  if (!(await exists('/run/systemd/system'))) {
    return { serverRestartCommand: '', systemRestartCommand: 'sudo reboot', systemShutdownCommand: 'sudo poweroff', basis: 'Linux without systemd' };
  }
  const user = await exists(unitPath('user', env));
  const system = await exists(unitPath('system', env));
  return {
    serverRestartCommand: user && !system ? 'systemctl --user restart gantry' : 'sudo systemctl restart gantry',
    systemRestartCommand: 'sudo systemctl reboot',
    systemShutdownCommand: 'sudo systemctl poweroff',
    basis: user && !system ? 'systemd, Gantry as a user service' : system ? 'systemd, Gantry as a system service' : 'systemd (no gantry service installed yet)',
  };
}
