// Checks what dtree writes for CI with the real parsers, from npm
// (internal/conformance's TestConformanceCIOutputs runs it; `make
// conformance` installs the packages):
//
//   node check-outputs.mjs mermaid SUMMARY.md        every ```mermaid block parses (or ````mermaid…:
//                                                    a longer fence holds text with backticks)
//   node check-outputs.mjs mermaid CHART.mmd         a Mermaid file (.mmd) parses whole
//   node check-outputs.mjs junit SCHEMA.xsd FILE...  each file is valid against the schema
//   node check-outputs.mjs wellformed FILE...         each file is well-formed XML (a .drawio)
//   node check-outputs.mjs flowdb FILE...            each flowchart's nodes and edges as Mermaid
//                                                    reads them, one JSON line a block
//
// It prints one line per check and exits 1 when one fails. Run from a
// directory whose node_modules holds mermaid, jsdom and xmllint-wasm.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const [mode, ...args] = process.argv.slice(2);
let failed = false;

// mermaidParser is Mermaid with a DOM: it needs one (DOMPurify), and jsdom
// gives it one, as a browser would.
async function mermaidParser() {
  const { JSDOM } = await import('jsdom');
  const dom = new JSDOM('<!doctype html><html><body></body></html>');
  globalThis.window = dom.window;
  globalThis.document = dom.window.document;
  const { default: mermaid } = await import('mermaid');
  mermaid.initialize({ startOnLoad: false });
  return mermaid;
}

// mermaidBlocks are a file's Mermaid texts: a .mmd file whole, else the
// bodies of its ```mermaid blocks, fenced by three backticks or more (a
// longer fence holds text with three), closed by a fence as long.
function mermaidBlocks(file, text) {
  if (file.endsWith('.mmd')) return [text];
  return [...text.matchAll(/^(`{3,})mermaid[ \t]*\n([\s\S]*?)^\1[ \t]*$/gm)].map((m) => m[2]);
}

if (mode === 'mermaid') {
  const mermaid = await mermaidParser();
  for (const file of args) {
    const blocks = mermaidBlocks(file, readFileSync(file, 'utf8'));
    if (blocks.length === 0) {
      console.log(`${file}: no mermaid block`);
      failed = true;
    }
    for (const [i, block] of blocks.entries()) {
      try {
        const r = await mermaid.parse(block);
        console.log(`${file}: block ${i + 1}: ok (${r.diagramType}, ${block.length} characters)`);
      } catch (e) {
        console.log(`${file}: block ${i + 1}: ${e.message}`);
        failed = true;
      }
    }
  }
} else if (mode === 'flowdb') {
  // What Mermaid's own parser makes of each flowchart: internal/conformance
  // holds dtree's Mermaid reader to it.
  const mermaid = await mermaidParser();
  for (const file of args) {
    for (const [i, block] of mermaidBlocks(file, readFileSync(file, 'utf8')).entries()) {
      try {
        const d = await mermaid.mermaidAPI.getDiagramFromText(block);
        const nodes = [...d.db.getVertices().values()].map((v) => ({ id: v.id, type: v.type ?? '' }));
        const edges = d.db.getEdges().map((e) => ({ from: e.start, to: e.end, label: e.text ?? '', invisible: e.stroke === 'invisible', style: (e.style ?? []).join(';') }));
        console.log(JSON.stringify({ file, block: i + 1, type: d.type, nodes, edges }));
      } catch (e) {
        console.log(JSON.stringify({ file, block: i + 1, error: e.message }));
      }
    }
  }
} else if (mode === 'junit') {
  const require = createRequire(process.cwd() + '/');
  const { validateXML } = require('xmllint-wasm');
  const [schema, ...files] = args;
  for (const file of files) {
    const r = await validateXML({
      xml: [{ fileName: file, contents: readFileSync(file, 'utf8') }],
      schema: [readFileSync(schema, 'utf8')],
    });
    if (r.valid) {
      console.log(`${file}: valid against ${schema}`);
    } else {
      console.log(`${file}: not valid against ${schema}: ${r.rawOutput}`);
      failed = true;
    }
  }
} else if (mode === 'wellformed') {
  // libxml2 parses each file (xmllint --format): any error is one.
  const require = createRequire(process.cwd() + '/');
  const { validateXML } = require('xmllint-wasm');
  for (const file of args) {
    const r = await validateXML({
      xml: [{ fileName: file, contents: readFileSync(file, 'utf8') }],
      normalization: 'format',
    });
    if (r.valid && r.errors.length === 0) {
      console.log(`${file}: well-formed`);
    } else {
      console.log(`${file}: not well-formed: ${r.rawOutput}`);
      failed = true;
    }
  }
} else {
  console.log('usage: check-outputs.mjs mermaid FILE... | flowdb FILE... | junit SCHEMA FILE... | wellformed FILE...');
  failed = true;
}
process.exit(failed ? 1 : 0);
