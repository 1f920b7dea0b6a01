// Render TeX to MathJax CHTML, with a hidden MathML copy for assistive technology.
//
//   node render.cjs FONT_URL < requests.json > results.json
//
// requests.json: [{"tex": "...", "display": true|false}, ...]
// results.json:  {"html": ["<mjx-container ...>", ...], "css": "...", "errors": [[index, message], ...]}
//
// Used by tools/site/math.py at build time; MathJax is the pinned npm package
// next to this file (npm ci in tools/node).
"use strict";

const fontURL = process.argv[2] || "mathjax-fonts";
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const requests = JSON.parse(input);
  require("mathjax").init({
    loader: { load: ["input/tex-full", "output/chtml", "adaptors/liteDOM", "a11y/assistive-mml"] },
    // An unknown macro or a TeX error fails the build (noundefined would draw it in red).
    tex: { packages: { "[-]": ["noundefined"] }, formatError: (jax, err) => { throw err; } },
    // The browser version measures the page's x-height and scales to it; here we state it: the
    // book's sans-serif text has an x-height about 1.2 times that of the TeX fonts.
    chtml: { fontURL, scale: 1.2, mtextInheritFont: true },
    startup: { typeset: false },
  }).then((MathJax) => {
    const adaptor = MathJax.startup.adaptor;
    const html = [];
    const errors = [];
    requests.forEach((request, index) => {
      try {
        const node = MathJax.tex2chtml(request.tex, { display: request.display });
        html.push(adaptor.outerHTML(node));
      } catch (err) {
        html.push("");
        errors.push([index, String(err.message || err)]);
      }
    });
    const css = adaptor.textContent(MathJax.chtmlStylesheet());
    process.stdout.write(JSON.stringify({ html, css, errors }));
  }).catch((err) => {
    process.stderr.write(String(err && err.stack || err) + "\n");
    process.exit(1);
  });
});
