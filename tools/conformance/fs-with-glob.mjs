// node:fs plus a minimal globSync supporting "**/" and "*" — enough for the
// conformance CLI's "**/checks.json" lookups.
import fs from 'node:fs';
import path from 'node:path';
export * from 'node:fs';
export default fs;

export function globSync(pattern, options = {}) {
  const cwd = options.cwd ?? process.cwd();
  const re = new RegExp('^' + pattern.split('/').map((part) =>
    part === '**' ? '(?:.*/)?' : part.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*') + '/'
  ).join('').replace(/\/$/, '').replace(/\(\?:\.\*\/\)\?\//g, '(?:.*/)?') + '$');
  const out = [];
  const walk = (dir, rel) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(dir, e.name), r);
      else if (re.test(r)) out.push(r);
    }
  };
  walk(cwd, '');
  return out;
}
