// @nodelet/systemd: unit files (systemd/units) and sd_notify for the long-lived processes.
export * from './notify.js';
export * from './units.js';
export * from './test-hang.js';
export * from './termination.js';
