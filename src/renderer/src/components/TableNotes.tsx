import type { MouseEvent, ReactNode } from 'react';

/** Each distinct note once, numbered from `first` in the order met: a note shared by several rows is listed once. */
export function numberNotes(
  texts: readonly (string | null | undefined)[],
  first = 1,
): { notes: string[]; first: number; numberOf: (text: string | null | undefined) => number | null } {
  const notes = [...new Set(texts.filter((text): text is string => typeof text === 'string' && text.length > 0))];
  return { notes, first, numberOf: (text) => (text ? notes.indexOf(text) + first : null) };
}

const noteId = (prefix: string, number: number) => `${prefix}-note-${number}`;

/**
 * A short cell's pointer to its note under the table. It scrolls the note into view rather than
 * setting the address: the fragment is the app's route (`#/experiments/ID`).
 */
export function NoteLink({ prefix, number, children }: { prefix: string; number: number; children?: ReactNode }) {
  const open = (event: MouseEvent) => {
    event.preventDefault();
    const note = document.getElementById(noteId(prefix, number));
    note?.scrollIntoView({ block: 'nearest' });
    note?.focus();
  };
  return (
    <a href={`#${noteId(prefix, number)}`} onClick={open}>
      {children ?? `note ${number}`}
    </a>
  );
}

/** The notes a table's cells point to, under it, with the numbers the cells show. */
export function TableNotes({ prefix, notes, first, label }: { prefix: string; notes: readonly string[]; first: number; label: string }) {
  if (notes.length === 0) return null;
  return (
    <ol className="table-notes" start={first} aria-label={label}>
      {notes.map((note, index) => (
        <li key={note} id={noteId(prefix, first + index)} tabIndex={-1}>
          {note}
        </li>
      ))}
    </ol>
  );
}
