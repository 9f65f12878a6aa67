import { useState } from 'preact/hooks';
import { searchPage } from '../api.ts';
import { Field, Heading, commaList, useConsole, useLoad } from '../components.tsx';
import { formatDate, t } from '../i18n.ts';
import { ResultTable, type Column } from '../result-table.tsx';
import type { EventView } from '../views.ts';

// The event log of the instance, newest first (IAM_OWNER).

const PAGE = 25;

const COLUMNS: Array<Column<EventView>> = [
  { header: t('sequence'), cell: (e) => e.sequence },
  { header: t('date'), cell: (e) => formatDate(e.creationDate) },
  { header: t('type'), cell: (e) => <code>{e.type}</code> },
  {
    header: t('aggregate'),
    cell: (e) => (
      <>
        {e.aggregate.type} <code>{e.aggregate.id}</code>
      </>
    ),
  },
  { header: t('editor'), cell: (e) => <code>{e.editor.userId}</code> },
];

export function EventsPage() {
  const { api } = useConsole();
  const [text, setText] = useState('');
  const [types, setTypes] = useState<string[]>([]);
  const [offset, setOffset] = useState(0);
  const list = useLoad(
    () => searchPage<EventView>(api, '/admin/v1/events/_search', offset, PAGE, { asc: false, queries: types.length ? [{ eventTypesQuery: { types } }] : [] }),
    [types, offset],
  );
  return (
    <>
      <Heading>{t('events')}</Heading>
      <form
        noValidate
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setTypes(commaList(text));
        }}
      >
        <Field label={t('eventTypes')} name="types" value={text} onInput={setText} />
        <button type="submit">{t('filter')}</button>
      </form>
      <ResultTable
        caption={`${t('events')} (${t('newestFirst')})`}
        columns={COLUMNS}
        rowKey={(e) => e.sequence}
        list={list}
        paging={{ limit: PAGE, onMove: setOffset }}
        empty={t('noEvents')}
      />
    </>
  );
}
