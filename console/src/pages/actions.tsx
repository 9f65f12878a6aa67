import { useState } from 'preact/hooks';
import { searchAll } from '../api.ts';
import { Heading, Loading, SecretOnce, Status, useAction, useConsole, useLoad, useSubmit } from '../components.tsx';
import { ConfirmButton } from '../confirm.tsx';
import { t } from '../i18n.ts';
import { ResultTable, type Column } from '../result-table.tsx';
import { href, navigate } from '../router.ts';
import type { CreatedTarget, DeliveryState, TargetView } from '../views.ts';
import { Executions } from './executions.tsx';
import { draftOf, NEW_TARGET, TargetForm, typeOf } from './target-form.tsx';

// Actions of the instance (docs/actions.md, IAM_OWNER): the targets the
// service calls, each with its delivery state, the signing key of a new one
// shown once, and the executions that say which events or token hooks call
// which targets.

const TARGETS = '/v2beta/actions/targets';

/** Where the target's deliveries stand: the last event delivered, failed attempts at the next, and why the last one failed. */
function Delivery({ targetId }: { targetId: string }) {
  const { api } = useConsole();
  const state = useLoad(() => api.call<DeliveryState>('GET', `${TARGETS}/${targetId}/state`), [targetId]);
  if (!state.data) return <Loading error={state.error} />;
  const { sequence, failures, lastError } = state.data;
  return (
    <>
      <div>{t('deliveredUpTo', { sequence })}</div>
      {failures > 0 && <div>{t('failures', { count: failures })}</div>}
      {lastError && <div>{t('lastError', { error: lastError })}</div>}
    </>
  );
}

function Targets({ onChanged }: { onChanged: () => void }) {
  const { api } = useConsole();
  const list = useLoad(() => searchAll<TargetView>(api, `${TARGETS}/_search`), []);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedTarget & { name: string }>();
  const [done, setDone] = useState('');
  const remove = useAction(
    (id: string) => api.call('DELETE', `${TARGETS}/${id}`),
    () => {
      setDone(t('removed'));
      list.reload();
      onChanged();
    },
  );
  const columns: Array<Column<TargetView>> = [
    { header: t('name'), cell: (target) => <a href={href(`/actions/targets/${target.id}`)}>{target.name}</a> },
    { header: t('endpoint'), cell: (target) => <code>{target.endpoint}</code> },
    { header: t('targetType'), cell: (target) => t(typeOf(target)) },
    { header: t('timeout'), cell: (target) => target.timeout },
    { header: t('delivery'), cell: (target) => <Delivery targetId={target.id} /> },
    {
      header: t('remove'),
      cell: (target) => (
        <ConfirmButton
          label={t('removeTarget')}
          question={t('confirmRemoveTarget', { name: target.name })}
          onConfirm={() => remove.run(target.id)}
          disabled={remove.busy}
        />
      ),
    },
  ];
  return (
    <section aria-labelledby="targets-heading">
      <h2 id="targets-heading">{t('targets')}</h2>
      <div class="toolbar">
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {t('newTarget')}
        </button>
      </div>
      {creating && (
        <TargetForm
          initial={NEW_TARGET}
          label={t('newTarget')}
          submitLabel={t('create')}
          send={(body) => api.call<CreatedTarget>('POST', TARGETS, body).then((answer) => ({ ...answer, name: body.name }))}
          onDone={(answer) => {
            setCreating(false);
            setCreated(answer);
            list.reload();
            onChanged();
          }}
        />
      )}
      {created && (
        <div>
          <p class="help">{t('signingKeyWarning')}</p>
          <SecretOnce label={`${t('signingKey')}: ${created.name}`} value={created.signingKey} fileName={`${created.id}.signing-key.txt`} />
        </div>
      )}
      <Status ok={done} error={remove.error} />
      <ResultTable caption={t('targets')} columns={columns} rowKey={(target) => target.id} list={list} empty={t('noTargets')} />
    </section>
  );
}

export function ActionsPage() {
  const [round, setRound] = useState(0);
  return (
    <>
      <Heading>{t('actions')}</Heading>
      <Targets onChanged={() => setRound((r) => r + 1)} />
      <Executions round={round} />
    </>
  );
}

/** One target: change it (its signing key and delivery cursor stay), or remove it. */
export function TargetPage({ targetId }: { targetId: string }) {
  const { api } = useConsole();
  const path = `${TARGETS}/${targetId}`;
  const target = useLoad(() => api.call<{ target: TargetView }>('GET', path).then((r) => r.target), [path]);
  const [done, setDone] = useState('');
  const removal = useSubmit(
    () => api.call('DELETE', path),
    () => navigate('/actions'),
  );
  if (!target.data) return <Loading error={target.error} />;
  const current = target.data;
  return (
    <>
      <Heading>{current.name}</Heading>
      <p>
        <a href={href('/actions')}>{t('back')}</a>
      </p>
      <Status ok={done} />
      <TargetForm
        key={current.details.sequence}
        initial={draftOf(current)}
        label={t('editTarget')}
        submitLabel={t('save')}
        send={(body) => api.call('PUT', path, body)}
        onDone={() => {
          setDone(t('saved'));
          target.reload();
        }}
      />
      <section aria-labelledby="target-delivery">
        <h2 id="target-delivery">{t('delivery')}</h2>
        <Delivery targetId={targetId} />
      </section>
      <section aria-labelledby="remove-target-heading" class="danger">
        <h2 id="remove-target-heading">{t('removeTarget')}</h2>
        <ConfirmButton
          label={t('removeTarget')}
          question={t('confirmRemoveTarget', { name: current.name })}
          onConfirm={() => removal.submit()}
          disabled={removal.busy}
        />
        <Status error={removal.error} />
      </section>
    </>
  );
}
