/**
 * Requests that arrive from outside the page (the desktop tray menu) and wait until the
 * view that handles them is on screen.
 */
export const pending = $state({ clear: false });
