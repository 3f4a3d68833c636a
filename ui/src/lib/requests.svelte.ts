/**
 * Requests that arrive from outside the view that handles them (the desktop tray menu, the
 * command palette) and wait until that view is on screen: `clear` opens Settings' Clear
 * dialog, `newNote` the Notes view's new-note form, `distil` runs Activity's Distil now.
 */
export const pending = $state({ clear: false, newNote: false, distil: false });
