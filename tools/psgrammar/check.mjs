// Parses PowerShell scripts with tree-sitter's PowerShell grammar (the
// grammar the Windows host simulator parses every script with) and reports
// every ERROR or MISSING node. Golden files holding several steps
// ("########## <step>" lines between them) are parsed step by step.
//
//   node check.mjs FILE...     (make ps-grammar)
import { Parser, Language } from 'web-tree-sitter';
import fs from 'fs';
await Parser.init();
const lang = await Language.load(new URL('node_modules/', import.meta.url).pathname + 'tree-sitter-powershell/tree-sitter-powershell.wasm');
const parser = new Parser();
parser.setLanguage(lang);
let bad = 0;
for (const f of process.argv.slice(2)) {
  const text = fs.readFileSync(f, 'utf8');
  // Golden files hold several steps separated by "########## name" lines: parse each step.
  const parts = text.split(/^########## .*$/m).filter(p => p.trim());
  parts.forEach((p, i) => {
    const tree = parser.parse(p);
    const errs = [];
    const walk = n => { if (n.type === 'ERROR' || n.isMissing) errs.push(n); for (const c of n.children) walk(c); };
    walk(tree.rootNode);
    for (const e of errs.slice(0, 5)) {
      bad++;
      const line = p.split('\n')[e.startPosition.row];
      console.log(`${f} part ${i} line ${e.startPosition.row + 1}: ${e.isMissing ? 'MISSING ' + e.type : 'ERROR'}: ${line.trim().slice(0, 160)}`);
    }
  });
}
console.log(bad ? `${bad} problems` : 'all scripts parse');
process.exit(bad ? 1 : 0);
