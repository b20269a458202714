// `npm run openapi`: writes docs/openapi.json from the app itself, built in-process for a default config (no relative_root, no basic_auth).
import fs from 'node:fs/promises';
import { makeRoot } from '../helpers/rq-root.js';
import { OPENAPI_FILE, openapiText } from './openapi-file.js';
import { appFor } from './route-table.js';

const t = await makeRoot();
try {
  const built = await appFor(t.root, () => undefined);
  try {
    const res = await built.app.inject({ method: 'GET', url: '/docs/json' });
    if (res.statusCode !== 200) throw new Error(`GET /docs/json answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
    await fs.writeFile(OPENAPI_FILE, openapiText(res.json()));
  } finally {
    await built.close();
  }
} finally {
  await t.cleanup();
}
console.log('wrote docs/openapi.json: review it with git diff docs/openapi.json before committing');
