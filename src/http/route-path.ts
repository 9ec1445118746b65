// Route paths, as serve's registry routes and the management API's name
// them: literal segments, `:name` capturing one segment, and a final `*name`
// capturing the rest of the path (possibly nothing).

/** A route path's segments: `v1/modules/:namespace` → ['v1', 'modules', ':namespace']; '' → none. */
export function routePath(path: string): string[] {
  return path === '' ? [] : path.split('/');
}

/** What `pattern` captures of the decoded path `segments`, in the pattern's order; undefined when it does not match. */
export function matchRoutePath(pattern: string[], segments: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i]!;
    if (want.startsWith('*')) {
      params[want.slice(1)] = segments.slice(i).join('/');
      return params;
    }
    if (i >= segments.length) return undefined;
    if (want.startsWith(':')) params[want.slice(1)] = segments[i]!;
    else if (want !== segments[i]) return undefined;
  }
  return pattern.length === segments.length ? params : undefined;
}
