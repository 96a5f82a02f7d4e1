// Screenshots that must show something: a PNG of the page, decoded in a
// blank page of the same browser, with its distinct colours counted (a
// blank or single-colour page has one or two; text and badges give dozens).

/** Distinct colours in a sample of a page's screenshot. */
export async function screenshotColours(page, options = {}) {
  const png = await page.screenshot(options);
  const blank = await page.context().newPage();
  try {
    return await blank.evaluate(async (b64) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const canvas = new OffscreenCanvas(img.width, img.height);
      const g = canvas.getContext('2d');
      g.drawImage(img, 0, 0);
      const data = g.getImageData(0, 0, img.width, img.height).data;
      const seen = new Set();
      for (let i = 0; i < data.length; i += 4 * 7) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
      return seen.size;
    }, png.toString('base64'));
  } finally {
    await blank.close();
  }
}

/** Fails unless the page's screenshot shows content; returns the colour count. */
export async function assertNotBlank(page, what) {
  const colours = await screenshotColours(page);
  if (colours < 16) throw new Error(`${what}: the screenshot looks blank (${colours} colours)`);
  return colours;
}
