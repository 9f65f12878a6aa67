import { useState } from 'preact/hooks';
import { searchAll } from '../api.ts';
import { Check, Field, Select, Status, useAction, useConsole, useLoad, useSubmit } from '../components.tsx';
import { ConfirmButton } from '../confirm.tsx';
import { ruleText, t, type MessageKey } from '../i18n.ts';
import { ResultTable, type Column } from '../result-table.tsx';
import type { ExecutionView, TargetView } from '../views.ts';
import type { ConditionInput, FunctionName } from '../../../src/domain/actions.ts';

// Executions (docs/api/actions.md): which event, group of events, every
// event or token hook calls which targets, in order. One execution per
// condition: setting it again replaces its targets; removing it is setting
// it to no targets, after a confirmation.

const EXECUTIONS = '/v2beta/actions/executions';
const FUNCTIONS: FunctionName[] = ['preaccesstoken', 'preuserinfo', 'presamlresponse'];
const KINDS = ['event', 'group', 'all', 'function'] as const;
type Kind = (typeof KINDS)[number];
const KIND_LABELS: Record<Kind, MessageKey> = { event: 'condEvent', group: 'condGroup', all: 'condAll', function: 'condFunction' };

/** A condition in words: "Events of the group user", "Token hook: Before an access token is issued". */
export function conditionText(condition: ConditionInput): string {
  if (condition.function) return t('onFunction', { name: t(condition.function.name) });
  if (condition.event?.event !== undefined) return t('onEvent', { name: condition.event.event });
  if (condition.event?.group !== undefined) return t('onGroup', { name: condition.event.group });
  return t('onAll');
}

function conditionOf(kind: Kind, value: string, fn: FunctionName): ConditionInput {
  if (kind === 'function') return { function: { name: fn } };
  if (kind === 'all') return { event: { all: true } };
  return { event: { [kind]: value.trim() } };
}

function SetExecution({ targets, onSet }: { targets: TargetView[]; onSet: () => void }) {
  const { api } = useConsole();
  const [kind, setKind] = useState<Kind>('event');
  const [value, setValue] = useState('');
  const [fn, setFn] = useState<FunctionName>('preaccesstoken');
  const [chosen, setChosen] = useState<string[]>([]);
  const [done, setDone] = useState('');
  const { submit, busy, error, violations } = useSubmit(
    () => api.call('PUT', EXECUTIONS, { condition: conditionOf(kind, value, fn), targets: chosen.map((target) => ({ target })) }),
    () => {
      setDone(t('executionSet'));
      onSet();
    },
  );
  const valueField = kind === 'event' ? 'condition.event.event' : 'condition.event.group';
  return (
    <form noValidate class="panel" onSubmit={submit} aria-labelledby="set-execution-heading">
      <h3 id="set-execution-heading">{t('setExecution')}</h3>
      <Select
        label={t('conditionKind')}
        value={kind}
        onChange={(k) => setKind(k as Kind)}
        options={KINDS.map((k): [string, string] => [k, t(KIND_LABELS[k])])}
      />
      {(kind === 'event' || kind === 'group') && (
        <Field
          key={kind}
          label={t(kind === 'event' ? 'eventType' : 'eventGroup')}
          name={valueField}
          value={value}
          onInput={setValue}
          required
          violations={violations}
          fields={[valueField, 'condition.event', 'condition']}
        />
      )}
      {kind === 'function' && (
        <Select label={t('functionName')} value={fn} onChange={(f) => setFn(f as FunctionName)} options={FUNCTIONS.map((f): [string, string] => [f, t(f)])} />
      )}
      <fieldset>
        <legend>{t('callsTargets')}</legend>
        {targets.map((target) => (
          <Check
            key={target.id}
            label={target.name}
            checked={chosen.includes(target.id)}
            onChange={(on) => setChosen(on ? [...chosen, target.id] : chosen.filter((id) => id !== target.id))}
          />
        ))}
        {violations
          .filter((v) => v.field.startsWith('targets'))
          .map((v) => (
            <p class="field-error" key={v.field}>
              {targets.find((target) => target.id === chosen[Number(/\[(\d+)\]/.exec(v.field)?.[1])])?.name ?? t('callsTargets')}: {ruleText(v.description)}
            </p>
          ))}
      </fieldset>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {t('setExecution')}
        </button>
      </div>
      <Status ok={done} error={error} />
    </form>
  );
}

/** `round` moves when the targets change: an execution loses a removed target. */
export function Executions({ round }: { round: number }) {
  const { api } = useConsole();
  const list = useLoad(() => searchAll<ExecutionView>(api, `${EXECUTIONS}/_search`), [round]);
  const targets = useLoad(() => searchAll<TargetView>(api, '/v2beta/actions/targets/_search'), [round]);
  const remove = useAction(
    (condition: ConditionInput) => api.call('PUT', EXECUTIONS, { condition, targets: [] }),
    () => list.reload(),
  );
  const nameOf = (id: string) => targets.data?.result.find((target) => target.id === id)?.name ?? t('unknownTarget', { id });
  const columns: Array<Column<ExecutionView>> = [
    { header: t('condition'), cell: (execution) => conditionText(execution.condition) },
    { header: t('targets'), cell: (execution) => execution.targets.map((target) => nameOf(target.target)).join(', ') },
    {
      header: t('remove'),
      cell: (execution) => (
        <ConfirmButton
          label={t('removeExecution')}
          question={t('confirmRemoveExecution', { name: conditionText(execution.condition) })}
          onConfirm={() => remove.run(execution.condition)}
          disabled={remove.busy}
        />
      ),
    },
  ];
  return (
    <section aria-labelledby="executions-heading">
      <h2 id="executions-heading">{t('executions')}</h2>
      <ResultTable
        caption={t('executions')}
        columns={columns}
        rowKey={(execution) => JSON.stringify(execution.condition)}
        list={list}
        empty={t('noExecutions')}
      />
      <Status error={remove.error} />
      {targets.data && <SetExecution targets={targets.data.result} onSet={list.reload} />}
    </section>
  );
}
