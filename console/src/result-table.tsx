import type { ComponentChildren } from 'preact';
import type { SearchPage } from './api.ts';
import { Loading } from './components.tsx';
import { t } from './i18n.ts';

// A list answer as a table: its caption names the list (the table's
// accessible name), a column header per field; an empty list says what to
// do next instead of a header over nothing; a search longer than a page has
// the pager. At phone width each row is a card (style.css, table.cards),
// each cell labelled with its column's name.

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
}

interface Loaded<Answer> {
  data?: Answer;
  error?: unknown;
}

/** A search answer moves by pages of `limit`; any other list is shown whole. */
type Listing<T> =
  | { list: Loaded<{ result: T[] }>; paging?: undefined }
  | { list: Loaded<SearchPage<T>>; paging: { limit: number; onMove: (offset: number) => void } };

type ResultTableProps<T> = Listing<T> & {
  caption: string;
  columns: Array<Column<T>>;
  rowKey: (row: T) => string;
  /** What an empty list means and what to do next ("No projects yet: create one with New project."). */
  empty?: string;
};

export function ResultTable<T>(props: ResultTableProps<T>) {
  const { caption, columns, rowKey } = props;
  const { data, error } = props.list;
  if (!data) return <Loading error={error} />;
  const total = props.paging ? Number((data as SearchPage<T>).details.totalResult) : data.result.length;
  if (total === 0 && data.result.length === 0)
    return (
      <p class="empty" role="status">
        {props.empty ?? t('emptyList')}
      </p>
    );
  return (
    <>
      <table class="cards">
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column.header}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {data.result.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((column) => (
                <td key={column.header} data-label={column.header}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      {props.paging && props.list.data && total > props.paging.limit && (
        <Pager offset={props.list.data.offset} limit={props.paging.limit} total={Number(props.list.data.details.totalResult)} onMove={props.paging.onMove} />
      )}
    </>
  );
}

/** Page controls: where we are in the list, and buttons to move. */
function Pager({ offset, limit, total, onMove }: { offset: number; limit: number; total: number; onMove: (offset: number) => void }) {
  const from = total === 0 ? 0 : offset + 1;
  const to = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label={t('showing', { from, to, total })}>
      <button type="button" disabled={offset === 0} onClick={() => onMove(Math.max(0, offset - limit))}>
        {t('previous')}
      </button>
      <span>{t('showing', { from, to, total })}</span>
      <button type="button" disabled={to >= total} onClick={() => onMove(offset + limit)}>
        {t('next')}
      </button>
    </nav>
  );
}
