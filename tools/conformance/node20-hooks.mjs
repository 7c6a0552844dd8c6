// Module resolution hook for node20-shim.mjs.
const shim = new URL('./fs-with-glob.mjs', import.meta.url).href;
// The two pinned lines of the suite: 0.1.x under its own name, 0.2.0-alpha
// under the npm alias conformance-next.
const suites = ['/@modelcontextprotocol/conformance/', '/node_modules/conformance-next/'];

export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL &&
      suites.some((dir) => context.parentURL.includes(dir))) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
