// The OctoPrint release whose HTTP and push vocabulary Gantry speaks (clients gate features on it; slicers check the text).
export const OCTOPRINT_COMPAT_VERSION = '1.9.3';
export const API_VERSION = '0.1';
