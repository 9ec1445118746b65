// Spec 4.1 and 3.1: run task stages and results, and the override action.

import { MirrorError } from '../../errors.js';
import { canAccess, canOverride, type Principal } from '../auth.js';
import { stageIncludes, taskResultResource, taskStageResource } from '../documents.js';
import { includesOf, notFound, pageLinksAndMeta, paginate, type Reply } from '../jsonapi.js';
import type { Store } from '../store.js';
import type { Data, TaskStage } from '../types.js';
import { statusTimestamp } from '../time.js';

const STAGE_INCLUDES = ['run', 'run.workspace', 'task-results', 'policy-evaluations'] as const;

/** A run the caller may see, or 404 (not found and not authorized look the same). */
function visibleRun(data: Data, principal: Principal, runId: string) {
  const run = data.runs.find((r) => r.id === runId);
  const organization = run && data.organizations.find((o) => o.name === run.organization);
  if (!run || !organization || !canAccess(data, principal, organization)) throw notFound();
  return { run, organization };
}

function visibleStage(data: Data, principal: Principal, stageId: string) {
  const stage = data.taskStages.find((s) => s.id === stageId);
  if (!stage) throw notFound();
  return { stage, ...visibleRun(data, principal, stage.run) };
}

export function listStages(data: Data, principal: Principal, runId: string, query: URLSearchParams): Reply {
  visibleRun(data, principal, runId);
  const include = includesOf(query, STAGE_INCLUDES);
  const page = paginate(
    data.taskStages.filter((s) => s.run === runId),
    query,
  );
  const included = include.length > 0 ? stageIncludes(data, page.items, include) : undefined;
  return {
    status: 200,
    document: {
      data: page.items.map((s) => taskStageResource(data, s)),
      ...(included ? { included } : {}),
      ...pageLinksAndMeta(page, `/api/v2/runs/${runId}/task-stages`, query),
    },
  };
}

export function showStage(data: Data, principal: Principal, stageId: string, query: URLSearchParams): Reply {
  const { stage } = visibleStage(data, principal, stageId);
  const include = includesOf(query, STAGE_INCLUDES);
  return {
    status: 200,
    document: { data: taskStageResource(data, stage), ...(include.length > 0 ? { included: stageIncludes(data, [stage], include) } : {}) },
  };
}

export function showResult(data: Data, principal: Principal, resultId: string): Reply {
  const result = data.taskResults.find((r) => r.id === resultId);
  if (!result) throw notFound();
  const { stage } = visibleStage(data, principal, result.taskStage);
  return { status: 200, document: { data: taskResultResource(result, stage) } };
}

function overrideAttributes(principal: Principal, organization: Parameters<typeof canOverride>[1], stage: TaskStage) {
  const allowed = canOverride(principal, organization);
  return {
    permissions: { 'can-override-policy': allowed, 'can-override-tasks': allowed, 'can-override': allowed },
    actions: { 'is-overridable': allowed && stage.status === 'awaiting_override' },
  };
}

/** awaiting_override -> running (spec 3.1), recording both timestamps; anything else is a 409. */
export async function overrideStage(store: Store, principal: Principal, stageId: string): Promise<Reply> {
  const { stage, organization } = visibleStage(store.read(), principal, stageId);
  if (!canOverride(principal, organization))
    throw new MirrorError('FORBIDDEN', 'You may not override this stage: only organization owners, site administrators and organization tokens can.');
  const updated = await store.mutate(['taskStages'], (data) => {
    const current = data.taskStages.find((s) => s.id === stage.id);
    if (!current) throw notFound();
    if (current.status !== 'awaiting_override') {
      throw new MirrorError('CONFLICT', `The stage is ${current.status}; only a stage awaiting_override can be overridden.`);
    }
    const now = new Date();
    current.statusTimestamps['awaiting-override-at'] ??= statusTimestamp(now);
    current.statusTimestamps['running-at'] = statusTimestamp(now);
    current.status = 'running';
    current.updatedAt = now.toISOString();
    return current;
  });
  return { status: 200, document: { data: taskStageResource(store.read(), updated, overrideAttributes(principal, organization, updated)) } };
}
