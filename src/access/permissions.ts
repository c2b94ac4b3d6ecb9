// Permission catalogue: every permission a route can require, with its role need and default groups (OctoPrint's keys).

export interface PermissionDef {
  key: string;
  name: string;
  description: string;
  roles: string[];
  dangerous: boolean;
  /** Group keys that receive it by default. */
  defaultGroups: string[];
  plugin?: string;
}

const A = 'admins', U = 'users', R = 'readonly';
const p = (key: string, name: string, role: string, dangerous: boolean, groups: string[], description: string, plugin?: string): PermissionDef =>
  ({ key, name, roles: [role], dangerous, defaultGroups: groups, description, ...(plugin ? { plugin } : {}) });

/** In the order clients see them (GET /api/access/permissions, push `connected`). */
export const PERMISSIONS: readonly PermissionDef[] = [
  p('ADMIN', 'Admin', 'admin', true, [A], 'Admin is allowed to do everything'),
  p('STATUS', 'Status', 'status', false, [U, R], 'Allows to gather basic status information, e.g. job progress, printer state, temperatures'),
  p('CONNECTION', 'Connection', 'connection', false, [U], 'Allows to connect to and disconnect from a printer'),
  p('WEBCAM', 'Webcam', 'webcam', false, [U, R], 'Allows to watch the webcam stream'),
  p('SYSTEM', 'System', 'system', true, [], 'Allows to run system commands, e.g. restart the server'),
  p('FILES_LIST', 'File List', 'files_list', false, [U, R], 'Allows to retrieve a list of all uploaded files'),
  p('FILES_UPLOAD', 'File Upload', 'files_upload', false, [U], 'Allows users to upload new files'),
  p('FILES_DOWNLOAD', 'File Download', 'files_download', false, [U, R], 'Allows users to download files'),
  p('FILES_DELETE', 'File Delete', 'files_delete', false, [U], 'Allows users to delete files'),
  p('FILES_SELECT', 'File Select', 'files_select', false, [U], 'Allows to select a file for printing'),
  p('PRINT', 'Print', 'print', false, [U], 'Allows to start, pause and cancel a print job'),
  p('GCODE_VIEWER', 'GCODE viewer', 'gcodeviewer', false, [U, R], 'Allows access to the GCODE viewer'),
  p('MONITOR_TERMINAL', 'Terminal', 'monitor_terminal', false, [U, R], 'Allows to watch the terminal tab'),
  p('CONTROL', 'Control', 'control', false, [U], 'Allows to control the printer: jog, home, temperatures, commands'),
  p('SLICE', 'Slice', 'slice', false, [U], 'Allows to slice files'),
  p('TIMELAPSE_LIST', 'Timelapse List', 'timelapse_list', false, [U, R], 'Allows to list timelapse videos'),
  p('TIMELAPSE_DOWNLOAD', 'Timelapse Download', 'timelapse_download', false, [U, R], 'Allows to download timelapse videos'),
  p('TIMELAPSE_DELETE', 'Timelapse Delete', 'timelapse_delete', false, [U], 'Allows to delete timelapse videos'),
  p('TIMELAPSE_MANAGE_UNRENDERED', 'Timelapse Manage Unrendered', 'timelapse_manage_unrendered', false, [U], 'Allows to manage unrendered timelapses'),
  p('TIMELAPSE_ADMIN', 'Timelapse Admin', 'timelapse_admin', false, [U], 'Allows to change the timelapse settings'),
  p('SETTINGS_READ', 'Settings Access', 'settings_read', false, [U, R], 'Allows to read non-sensitive settings'),
  p('SETTINGS', 'Settings Admin', 'settings', true, [], 'Allows to manage all settings'),
  p('PLUGIN_ACTION_COMMAND_NOTIFICATION_SHOW', 'Action Command Notification Support: Show', 'plugin_action_command_notification_show', false, [U], 'Allows to see printer notifications', 'action_command_notification'),
  p('PLUGIN_ACTION_COMMAND_NOTIFICATION_CLEAR', 'Action Command Notification Support: Clear', 'plugin_action_command_notification_clear', false, [U], 'Allows to clear printer notifications', 'action_command_notification'),
  p('PLUGIN_ACTION_COMMAND_PROMPT_INTERACT', 'Action Command Prompt Support: Interact', 'plugin_action_command_prompt_interact', false, [U], 'Allows to see and interact with printer prompts', 'action_command_prompt'),
  p('PLUGIN_APPKEYS_ADMIN', 'Application Keys Plugin: Admin', 'plugin_appkeys_admin', true, [A], 'Allows administrating all application keys', 'appkeys'),
  p('PLUGIN_PSUCONTROL_CONTROL', 'PSU Control: Control', 'plugin_psucontrol_control', true, [A], 'Allows switching the printer\'s power supply', 'psucontrol'),
  p('PLUGIN_APPKEYS_GRANT', 'Application Keys Plugin: Grant', 'plugin_appkeys_user', false, [U], 'Allows to grant app access', 'appkeys'),
];

export type PermissionKey = string;

const byKey = new Map(PERMISSIONS.map((d) => [d.key, d]));
export const permissionByKey = (key: string): PermissionDef | undefined => byKey.get(key);
