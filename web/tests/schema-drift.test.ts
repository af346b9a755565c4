// @vitest-environment node
/**
 * `src/api/schema.d.ts` must be exactly what `npm run gen:api` makes from `src/api/openapi.json`
 * (the hub's own document). If this fails, run `npm run gen:api` and commit the result.
 */
import { readFileSync } from 'node:fs';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import packageJson from '../package.json';

// Regenerating the types parses the whole document: slow on a busy two-core machine.
const GENERATION_TIMEOUT_MS = 30_000;

const SPEC_URL = new URL('../src/api/openapi.json', import.meta.url);
const SCHEMA_URL = new URL('../src/api/schema.d.ts', import.meta.url);

describe('generated API types', () => {
  it('gen:api uses the options this test regenerates with', () => {
    expect(packageJson.scripts['gen:api']).toBe(
      'openapi-typescript src/api/openapi.json --output src/api/schema.d.ts --default-non-nullable=false',
    );
  });

  it('schema.d.ts matches openapi.json', async () => {
    const ast = await openapiTS(SPEC_URL, { defaultNonNullable: false, silent: true });
    const regenerated = `${COMMENT_HEADER}${astToString(ast)}`;
    const committed = readFileSync(SCHEMA_URL, 'utf8');
    expect(regenerated === committed, 'schema.d.ts is stale: run `npm run gen:api`').toBe(true);
  }, GENERATION_TIMEOUT_MS);

  it('the OpenAPI document is the hub’s (it names the routes the client calls)', () => {
    const spec = JSON.parse(readFileSync(SPEC_URL, 'utf8')) as { paths: Record<string, unknown> };
    for (const path of ['/v1/setup', '/v1/accounts', '/v1/sessions', '/v1/teams/{team_id}/members']) {
      expect(spec.paths).toHaveProperty([path]);
    }
  });
});
