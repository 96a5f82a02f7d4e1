// axe-core in the page under test (tests/browser/node_modules/axe-core, a
// devDependency): injected through the DevTools protocol (page.evaluate), so
// the page's Content-Security-Policy is neither loosened nor in the way.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import assert from 'node:assert/strict';

const require = createRequire(import.meta.url);
const SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The viewports every view is checked at: a phone and a desktop. */
export const VIEWPORTS = [
  { name: 'phone', width: 390, height: 844, mobile: true },
  { name: 'desktop', width: 1280, height: 800, mobile: false },
];

/** Context options of a viewport (a phone has touch, a coarse pointer and a mobile layout viewport). */
export function viewportOptions(vp, extra = {}) {
  return {
    viewport: { width: vp.width, height: vp.height },
    ...(vp.mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
    ...extra,
  };
}

/** Runs axe-core on the page; returns its violations (every impact). */
export async function axe(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(`${SOURCE}\n;true`);
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map((n) => `${n.target.join(' ')} — ${n.failureSummary?.split('\n').slice(1, 2).join('')}`) }));
  });
}

/** Fails when axe-core finds a serious or critical violation on the page; `what` names the view. */
export async function assertAccessible(page, what) {
  const bad = (await axe(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad.map((v) => v.id), [], `${what}: ${JSON.stringify(bad, null, 1)}`);
}
