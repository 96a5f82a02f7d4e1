// The boot script of a self-contained report file (inlined by `recall
// report` as the page's one inline script, allowed by its CSP hash). The
// viewer's ES modules are inlined as inert `<script type="application/
// x-recall-module" data-path=…>` elements; this turns each into a Blob URL,
// rewriting its relative imports to the Blob URLs of the modules they name,
// and imports the viewer. No network is used.
(function boot() {
  var sources = {};
  var nodes = document.querySelectorAll('script[type="application/x-recall-module"]');
  for (var i = 0; i < nodes.length; i += 1) sources[nodes[i].dataset.path] = nodes[i].textContent;
  var urls = {};
  function resolve(from, spec) {
    return new URL(spec, 'https://report.invalid/' + from).pathname.slice(1);
  }
  function load(path) {
    if (urls[path]) return urls[path];
    if (!(path in sources)) throw new Error('report is missing module ' + path);
    var code = sources[path].replace(/(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\2/g, function (m, kw, q, spec) {
      return kw + q + load(resolve(path, spec)) + q;
    });
    urls[path] = URL.createObjectURL(new Blob([code], { type: 'text/javascript' }));
    return urls[path];
  }
  import(load('js/report.js')).catch(function (e) {
    document.body.insertAdjacentText('afterbegin', 'This report cannot start: ' + e.message);
  });
})();
