import { useState } from 'preact/hooks';
import { searchPage } from '../api.ts';
import { Field, Heading, Loading, Pager, commaList, useConsole, useLoad } from '../components.tsx';
import { formatDate, t } from '../i18n.ts';

// The event log of the instance, newest first (IAM_OWNER).

const PAGE = 25;

interface LoggedEvent {
  sequence: string;
  creationDate: string;
  type: string;
  aggregate: { id: string; type: string; resourceOwner: string };
  editor: { userId: string; impersonatedUserId?: string };
}

export function EventsPage() {
  const { api } = useConsole();
  const [text, setText] = useState('');
  const [types, setTypes] = useState<string[]>([]);
  const [offset, setOffset] = useState(0);
  const list = useLoad(
    () => searchPage<LoggedEvent>(api, '/admin/v1/events/_search', offset, PAGE, { asc: false, queries: types.length ? [{ eventTypesQuery: { types } }] : [] }),
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
      {!list.data ? (
        <Loading error={list.error} />
      ) : (
        <>
          <table>
            <caption>
              {t('events')} ({t('newestFirst')})
            </caption>
            <thead>
              <tr>
                <th scope="col">{t('sequence')}</th>
                <th scope="col">{t('date')}</th>
                <th scope="col">{t('type')}</th>
                <th scope="col">{t('aggregate')}</th>
                <th scope="col">{t('editor')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.result.map((e) => (
                <tr key={e.sequence}>
                  <td>{e.sequence}</td>
                  <td>{formatDate(e.creationDate)}</td>
                  <td>
                    <code>{e.type}</code>
                  </td>
                  <td>
                    {e.aggregate.type} <code>{e.aggregate.id}</code>
                  </td>
                  <td>
                    <code>{e.editor.userId}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.result.length === 0 && <p>{t('none')}</p>}
          <Pager offset={list.data.offset} limit={PAGE} total={Number(list.data.details.totalResult)} onMove={setOffset} />
        </>
      )}
    </>
  );
}
