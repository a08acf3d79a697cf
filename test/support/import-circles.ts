import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** The files of a folder's tree a module graph is made of. */
function sourceFiles(folder: string): string[] {
  return fs
    .readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/**
 * The relative specifiers a module loads when it runs: imports, re-exports and dynamic import()s.
 * `import type` and `export type` are left out, since the compiler erases them; an inline
 * `import { type X }` stays in (with verbatimModuleSyntax the module is still loaded).
 */
function runtimeSpecifiers(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier))
      specifiers.push(node.moduleSpecifier.text);
    else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      specifiers.push(node.moduleSpecifier.text);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [target] = node.arguments;
      if (target && ts.isStringLiteral(target)) specifiers.push(target.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers.filter((specifier) => specifier.startsWith('.'));
}

function resolveModule(from: string, specifier: string): string | null {
  const base = path.resolve(path.dirname(from), specifier);
  return (
    ['', '.ts', '.tsx', `${path.sep}index.ts`]
      .map((suffix) => base + suffix)
      .find((file) => fs.statSync(file, { throwIfNoEntry: false })?.isFile()) ?? null
  );
}

/**
 * Every circle of runtime imports among the modules under `folder`, each as the files around it
 * (relative to `folder`, the first repeated at the end). A dynamic import counts: the circle it
 * closes is still one module reaching back into the code that loads it.
 */
export function runtimeImportCircles(folder: string): string[][] {
  const graph = new Map(
    sourceFiles(folder).map((file) => [file, runtimeSpecifiers(file).flatMap((specifier) => resolveModule(file, specifier) ?? [])]),
  );
  const done = new Set<string>();
  const trail: string[] = [];
  const circles: string[][] = [];
  const walk = (file: string): void => {
    trail.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next) || done.has(next)) continue;
      const at = trail.indexOf(next);
      if (at >= 0) circles.push([...trail.slice(at), next].map((member) => path.relative(folder, member)));
      else walk(next);
    }
    trail.pop();
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) walk(file);
  return circles;
}
