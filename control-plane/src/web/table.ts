import { html, type Child, type Html } from './html.ts';

/** A column: its heading, and the class its heading and cells share (`num`, `hide-sm`). */
export type Column = string | readonly [heading: string, className: string];

/**
 * A table in its wrapper, which scrolls sideways on its own when the table is wider than the
 * screen (the page itself never does). With no rows, `empty` stands in its place.
 */
export function dataTable(columns: readonly Column[], rows: readonly Html[], opts: { empty?: Child; className?: string } = {}): Html {
  if (rows.length === 0 && opts.empty !== undefined) return html`<div class="empty"><p>${opts.empty}</p></div>`;
  return html`<div class="table-wrap">
    <table${opts.className ? html` class="${opts.className}"` : ''}>
      <thead>
        <tr>
          ${columns.map((c) =>
            // A column without a heading (its buttons) still names itself to screen readers.
            typeof c === 'string'
              ? html`<th>${c === '' ? html`<span class="sr-only">Actions</span>` : c}</th>`
              : html`<th class="${c[1]}">${c[0]}</th>`,
          )}
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
  </div>`;
}

/** A list page's content: the list, or (with nothing in it yet) a card inviting the first one. */
export function listOrEmpty(count: number, empty: Html, list: () => Html): Html {
  return count === 0 ? html`<div class="card">${empty}</div>` : list();
}
