// Node 20 lacks fs.globSync (added in Node 22), which the conformance CLI
// imports by name; the import alone fails at link time. This preload
// (node --import ./node20-shim.mjs) redirects the CLI's "fs" import to a
// module that re-exports node:fs plus a small globSync. Nothing else changes.
import { register } from 'node:module';
import fs from 'node:fs';

if (typeof fs.globSync !== 'function') {
  register('./node20-hooks.mjs', import.meta.url);
}
