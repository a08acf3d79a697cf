import type { ReactNode } from 'react';

/**
 * A table that may be wider than its card or view. Its cells stay on one line and it scrolls
 * sideways inside this box with its first column kept in view, so the card's headings, notes and
 * buttons stay where they are (styles.css, `.table-scroll`). A cell that holds prose is given the
 * class `wraps`.
 */
export function TableScroll({ children }: { children: ReactNode }) {
  return <div className="table-scroll">{children}</div>;
}
