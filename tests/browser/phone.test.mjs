// The dashboard on a phone (390 × 844, touch) and on a desktop (1280 × 800),
// over the bundled demo: the page is exactly as wide as the viewport, the
// header menu reaches Settings by tap, the filters hide behind a "Filters"
// button that names the active ones as chips, a tapped hit shows its session
// in the viewport (full screen on the phone, scrolled to the hit) and Back
// returns to the results (the button and the browser's Back alike), and on
// the touch screen every control is at least 44 × 44 px.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempDir, serve, launch, openPage, cleanup } from './lib/env.mjs';
import { VIEWPORTS, viewportOptions } from './lib/axe.mjs';

const LONG = { timeout: 180_000 };
const QUERY = 'tide';
let dir;
let server;
let browser;

before(async () => {
  dir = tempDir();
  server = await serve(null, { argv: ['--retention-days', '0', 'demo', '--dir', join(dir, 'demo')] });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  cleanup(dir);
});

async function pageAt(vp) {
  const context = await browser.newContext(viewportOptions(vp));
  const page = await openPage(browser, server.url, { context });
  await page.waitForSelector('.recent .session-row');
  return page;
}

/** Taps on a phone, clicks on a desktop; first checks that the point hit is the element itself. */
async function press(page, vp, selector) {
  const el = page.locator(selector).first();
  await el.scrollIntoViewIfNeeded();
  const box = await el.boundingBox();
  assert.ok(box, `${selector} is shown`);
  const vw = await page.evaluate(() => innerWidth);
  assert.ok(box.x >= 0 && box.x + box.width <= vw + 0.5, `${selector} lies inside the viewport (x ${box.x}, width ${box.width})`);
  const at = await page.evaluate(([x, y, sel]) => {
    const hit = document.elementFromPoint(x, y);
    return Boolean(hit && hit.closest(sel));
  }, [box.x + box.width / 2, box.y + box.height / 2, selector]);
  assert.ok(at, `a press on ${selector} lands on it`);
  if (vp.mobile) await el.tap();
  else await el.click();
}

const layoutWidth = (page) => page.evaluate(() => ({ doc: document.documentElement.scrollWidth, body: document.body.scrollWidth, vw: innerWidth }));

async function assertFits(page, vp, what) {
  const w = await layoutWidth(page);
  assert.equal(w.vw, vp.width, 'the layout viewport is the device width');
  assert.equal(w.doc, vp.width, `${what}: the page lays out ${w.doc} px wide at ${vp.width} px`);
  assert.equal(w.body, vp.width, `${what}: the body is ${w.body} px wide`);
}

/** Visible controls smaller than 44 × 44 px (checkboxes count by their label). */
function smallControls(page) {
  return page.evaluate(() => {
    const out = [];
    for (const el of document.querySelectorAll('button, select, input, a[href], .hit, [role=slider]')) {
      const target = el.matches('input[type=checkbox], input[type=radio]') ? el.closest('label') || el : el;
      const r = target.getBoundingClientRect();
      if (!r.width || !r.height || getComputedStyle(target).visibility === 'hidden') continue;
      if (el.closest('.md, .snippet, .skip') || el.closest('[hidden]')) continue; // links inside text; the skip link until focused
      if (r.width < 44 || r.height < 44) out.push(`${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${el.className} ${Math.round(r.width)}×${Math.round(r.height)}`);
    }
    return out;
  });
}

for (const vp of VIEWPORTS) {
  test(`${vp.name}: the page is as wide as the viewport on every view`, LONG, async () => {
    const page = await pageAt(vp);
    await assertFits(page, vp, 'home');
    await page.fill('#q', QUERY);
    await page.waitForSelector('.session-card .hit');
    await assertFits(page, vp, 'search');
    await press(page, vp, '.session-card .hit');
    await page.waitForSelector('#session .entry.located');
    await assertFits(page, vp, 'session');
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });

  test(`${vp.name}: Settings is reachable by ${vp.mobile ? 'tap' : 'click'}`, LONG, async () => {
    const page = await pageAt(vp);
    if (vp.mobile) {
      assert.equal(await page.isVisible('#settings-btn'), false, 'Settings sits in the menu on a phone');
      await press(page, vp, '#menu-btn');
      assert.equal(await page.getAttribute('#menu-btn', 'aria-expanded'), 'true');
      for (const id of ['#offline-btn', '#settings-btn', '#palette-btn']) assert.ok(await page.isVisible(id), `${id} is in the menu`);
    } else {
      assert.equal(await page.isVisible('#menu-btn'), false, 'no menu button on a desktop');
      assert.equal(await page.isVisible('#palette-btn'), false, 'the desktop header is unchanged (no palette button)');
    }
    await press(page, vp, '#settings-btn');
    await page.waitForSelector('#settings[open]');
    assert.equal(await page.evaluate(() => document.getElementById('settings').open), true);
    await page.keyboard.press('Escape');
    if (vp.mobile) {
      await press(page, vp, '#menu-btn');
      await press(page, vp, '#palette-btn');
      await page.waitForSelector('#palette[open]');
    }
    await page.context().close();
  });

  test(`${vp.name}: a tapped hit shows its session in the viewport and Back returns to the results`, LONG, async () => {
    const page = await pageAt(vp);
    await page.fill('#q', QUERY);
    await page.waitForSelector('.session-card .hit');
    await page.waitForFunction(() => new URL(location.href).searchParams.get('q'));
    const before = await page.evaluate(() => history.length);
    const hitSel = '.session-card .hit >> nth=0';
    await press(page, vp, '.session-card .hit');
    await page.waitForSelector('#session .entry.located');
    await page.waitForTimeout(100);
    const shown = await page.evaluate(() => {
      const r = (el) => el.getBoundingClientRect().toJSON();
      return { panel: r(document.getElementById('session')), hit: r(document.querySelector('#session .entry.located')), vw: innerWidth, vh: innerHeight, focus: document.getElementById('session').contains(document.activeElement) };
    });
    assert.ok(shown.hit.top >= 0 && shown.hit.top < shown.vh && shown.hit.left >= 0 && shown.hit.right <= shown.vw + 0.5, `the located entry is in the viewport: ${JSON.stringify(shown.hit)}`);
    assert.ok(shown.focus, 'focus moved into the session');
    if (vp.mobile) {
      assert.ok(shown.panel.top <= 0.5 && shown.panel.left <= 0.5 && shown.panel.width >= vp.width - 0.5 && shown.panel.height >= vp.height - 0.5, `full screen: ${JSON.stringify(shown.panel)}`);
      assert.equal(await page.evaluate(() => history.length), before + 1, 'opening is a history entry');
      assert.match(await page.textContent('#session .close'), /Back/);
    } else {
      assert.ok(shown.panel.left >= vp.width / 3, 'beside the results on a desktop');
    }
    // Back (the button), then the browser's Back after reopening.
    await press(page, vp, '#session .close');
    await page.waitForSelector('#session', { state: 'hidden' });
    assert.equal(new URL(page.url()).searchParams.get('session'), null);
    assert.equal(new URL(page.url()).searchParams.get('q'), QUERY, 'back on the results');
    assert.ok(await page.locator(hitSel).isVisible());
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('hit')), true, 'focus returns to the hit');
    if (vp.mobile) assert.equal(await page.evaluate(() => history.length), before + 1, 'Back popped the entry rather than adding one');
    await press(page, vp, '.session-card .hit');
    await page.waitForSelector('#session .entry.located');
    await page.goBack();
    await page.waitForSelector('#session', { state: 'hidden' });
    assert.equal(new URL(page.url()).searchParams.get('q'), QUERY);
    assert.ok(await page.locator(hitSel).isVisible());
    assert.deepEqual(page.errors, []);
    await page.context().close();
  });
}

test('phone: the filters hide behind a button that shows the active ones as chips', LONG, async () => {
  const vp = VIEWPORTS.find((v) => v.mobile);
  const page = await pageAt(vp);
  assert.equal(await page.isVisible('#filters'), false, 'the form is folded');
  const firstHit = await page.evaluate(() => document.querySelector('.recent .session-row').getBoundingClientRect().top);
  assert.ok(firstHit < 844 * 0.6, `the first session row starts at ${firstHit} px`);
  await press(page, vp, '#filters-btn');
  assert.ok(await page.isVisible('#filters'));
  await page.selectOption('#filters select[name=role]', 'user');
  await page.waitForSelector('#filter-chips .chip');
  assert.equal((await page.textContent('#filter-chips')).trim(), 'Role: user ×');
  assert.equal((await page.textContent('#filters-btn')).trim(), 'Filters (1)');
  await press(page, vp, '#filters-btn');
  assert.equal(await page.isVisible('#filters'), false);
  await press(page, vp, '#filter-chips .chip');
  await page.waitForFunction(() => !document.querySelector('#filter-chips .chip'));
  assert.equal(await page.inputValue('#filters select[name=role]'), '');
  assert.equal(new URL(page.url()).searchParams.get('role'), null);
  await page.context().close();
});

test('phone: every control is at least 44 × 44 px on the touch screen', LONG, async () => {
  const vp = VIEWPORTS.find((v) => v.mobile);
  const page = await pageAt(vp);
  assert.equal(await page.evaluate(() => matchMedia('(pointer: coarse)').matches), true, 'the phone has a coarse pointer');
  await press(page, vp, '#menu-btn');
  assert.deepEqual(await smallControls(page), [], 'home with the menu open');
  await page.keyboard.press('Escape');
  await press(page, vp, '#filters-btn');
  assert.deepEqual(await smallControls(page), [], 'the filters');
  await press(page, vp, '#filters-btn');
  await page.fill('#q', QUERY);
  await page.waitForSelector('.session-card .hit');
  assert.deepEqual(await smallControls(page), [], 'search results');
  await press(page, vp, '.session-card .hit');
  await page.waitForSelector('#session .entry.located');
  assert.deepEqual(await smallControls(page), [], 'the session');
  await page.context().close();
});
