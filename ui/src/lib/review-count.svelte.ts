/**
 * The number of open review entries as Review last read them, for the sidebar's badge; null
 * until Review has read the inbox (the inbox is not read in the background: finding stale
 * items reads projects' working trees).
 */
export const reviewCount = $state<{ open: number | null }>({ open: null });
