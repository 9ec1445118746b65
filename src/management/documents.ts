// JSON:API resource objects of spec 2.2-2.5, as pure functions of the data.

import type { Principal } from './auth.js';
import type { Data, Organization, Run, TaskResult, TaskStage, User } from './types.js';

const API = '/api/v2';

export function userResource(user: User, options: { self: boolean; principal?: Principal }) {
  const { principal } = options;
  const authenticated =
    principal === undefined
      ? undefined
      : principal.kind === 'team'
        ? { data: { id: principal.team.id, type: 'teams' }, links: { related: `${API}/teams/${principal.team.id}` } }
        : principal.kind === 'organization'
          ? { data: { id: principal.organization.name, type: 'organizations' }, links: { related: `${API}/organizations/${principal.organization.name}` } }
          : { data: { id: user.id, type: 'users' }, links: { related: `${API}/users/${user.id}` } };
  const isService = principal !== undefined && principal.kind !== 'user';
  return {
    id: user.id,
    type: 'users',
    attributes: {
      username: user.username,
      // The address is the caller's own business: shown on their account only.
      ...(options.self ? { email: user.email, 'unconfirmed-email': user.unconfirmedEmail } : {}),
      'is-service-account': isService,
      'auth-method': 'tfe',
      'avatar-url': `https://www.gravatar.com/avatar/${user.id}?s=100&d=mm`,
      'v2-only': false,
      'is-site-admin': user.isSiteAdmin,
      'is-sso-login': false,
      permissions: { 'can-create-organizations': !isService, 'can-change-email': !isService, 'can-change-username': !isService },
    },
    relationships: {
      'authentication-tokens': { links: { related: `${API}/users/${user.id}/authentication-tokens` } },
      ...(authenticated ? { 'authenticated-resource': authenticated } : {}),
    },
    links: { self: `${API}/users/${user.id}` },
  };
}

export function organizationResource(org: Organization) {
  const self = `${API}/admin/organizations/${encodeURIComponent(org.name)}`;
  return {
    id: org.name,
    type: 'organizations',
    attributes: {
      name: org.name,
      'external-id': org.externalId,
      'access-beta-tools': org.accessBetaTools,
      'is-disabled': org.isDisabled,
      'apply-timeout': org.applyTimeout,
      'plan-timeout': org.planTimeout,
      'terraform-worker-sudo-enabled': org.terraformWorkerSudoEnabled,
      'notification-email': org.email,
      'global-module-sharing': org.globalModuleSharing,
      'global-provider-sharing': org.globalProviderSharing,
      'sso-enabled': org.ssoEnabled,
      'workspace-limit': org.workspaceLimit,
    },
    relationships: {
      owners: { data: org.owners.map((id) => ({ id, type: 'users' })) },
      subscription: { data: null },
      'feature-set': { data: null },
      'module-consumers': { links: { related: `${self}/relationships/module-consumers` } },
      'provider-consumers': { links: { related: `${self}/relationships/provider-consumers` } },
    },
    links: { self },
  };
}

export function taskResultResource(result: TaskResult, stage: TaskStage) {
  return {
    id: result.id,
    type: 'task-results',
    attributes: {
      status: result.status,
      message: result.message,
      'status-timestamps': result.statusTimestamps,
      url: result.url,
      'created-at': result.createdAt,
      'updated-at': result.updatedAt,
      'task-id': result.taskId,
      'task-name': result.taskName,
      'task-url': result.taskUrl,
      stage: stage.stage,
      'is-speculative': result.isSpeculative,
      'workspace-task-id': result.workspaceTaskId,
      'workspace-task-enforcement-level': result.workspaceTaskEnforcementLevel,
    },
    relationships: { 'task-stage': { data: { id: stage.id, type: 'task-stages' } } },
    links: { self: `${API}/task-results/${result.id}` },
  };
}

export function taskStageResource(data: Data, stage: TaskStage, extra: Record<string, unknown> = {}) {
  const results = data.taskResults.filter((r) => r.taskStage === stage.id);
  return {
    id: stage.id,
    type: 'task-stages',
    attributes: {
      status: stage.status,
      stage: stage.stage,
      'status-timestamps': stage.statusTimestamps,
      'created-at': stage.createdAt,
      'updated-at': stage.updatedAt,
      ...extra,
    },
    relationships: {
      run: { data: { id: stage.run, type: 'runs' } },
      'task-results': { data: results.map((r) => ({ id: r.id, type: 'task-results' })) },
      'policy-evaluations': { data: stage.policyEvaluations.map((id) => ({ id, type: 'policy-evaluations' })) },
    },
    links: { self: `${API}/task-stages/${stage.id}` },
  };
}

export function runResource(run: Run) {
  return {
    id: run.id,
    type: 'runs',
    attributes: { 'created-at': run.createdAt },
    relationships: { workspace: { data: { id: run.workspace.id, type: 'workspaces' } } },
    links: { self: `${API}/runs/${run.id}` },
  };
}

export function workspaceResource(run: Run) {
  return {
    id: run.workspace.id,
    type: 'workspaces',
    attributes: { name: run.workspace.name },
    relationships: { organization: { data: { id: run.organization, type: 'organizations' } } },
    links: { self: `${API}/workspaces/${run.workspace.id}` },
  };
}

/** `included` for a stage: `run`, `run.workspace`, `task-results`, `policy-evaluations` (spec 4.1). */
export function stageIncludes(data: Data, stages: TaskStage[], include: string[]): unknown[] {
  const included: unknown[] = [];
  const seen = new Set<string>();
  const add = (resource: { id: string; type: string }) => {
    const key = `${resource.type}/${resource.id}`;
    if (!seen.has(key)) {
      seen.add(key);
      included.push(resource);
    }
  };
  for (const stage of stages) {
    const run = data.runs.find((r) => r.id === stage.run);
    if (run && (include.includes('run') || include.includes('run.workspace'))) add(runResource(run));
    if (run && include.includes('run.workspace')) add(workspaceResource(run));
    if (include.includes('task-results')) for (const r of data.taskResults.filter((r) => r.taskStage === stage.id)) add(taskResultResource(r, stage));
    if (include.includes('policy-evaluations'))
      for (const id of stage.policyEvaluations) add({ id, type: 'policy-evaluations', attributes: {} } as { id: string; type: string });
  }
  return included;
}
